// Builds the upstream binaries the cluster tests run, into the git-ignored cache
// .cache/kube/<versions key>/bin/: etcd, kube-apiserver, kube-controller-manager and kubectl
// from Go modules at the versions pinned in versions.json, and Metacontroller and Open Cluster
// Management (OCM: `registration` and `work`) from their source archives (the Go module proxy
// serves neither), verified by sha256.
//
// The wrapper modules under test/cluster/go/ carry complete go.mod/go.sum files, Metacontroller's
// archive carries its own, and OCM's carries vendor/, so a build needs nothing but the Go
// toolchain, the Go module proxy and the archives. Archives are extracted into the cache's src/
// (OCM's manifests/ there are the CRDs ocm.ts installs). Each component has a stamp (a hash of its inputs); when it
// matches and the binaries exist, that component is not built again.
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
  statSync,
} from 'node:fs';
import path from 'node:path';
import { binaryCacheRoot, goModulesDir, versionsFile } from './paths.js';
import { runCommand, runCommandOrThrow, type CommandResult } from './processes.js';
import { upstreamInputFile, verifyUpstreamInputs } from './upstream-inputs.js';
import {
  kubernetesMajorMinor,
  readPinnedVersions,
  versionsCacheKey,
  type PinnedVersions,
} from './versions.js';

/** Bump when the way binaries are built changes (flags, layout), to invalidate old stamps. */
const BUILD_RECIPE_REVISION = 2;

export const GO_INSTALL_HINT = [
  'The cluster tests build etcd, kube-apiserver, kube-controller-manager, kubectl, Metacontroller',
  'and OCM (registration, work) from source, so they need the Go toolchain (1.26 or newer) on PATH.',
  'Install it from https://go.dev/doc/install, for example on Linux x86-64:',
  '  curl -fsSLO https://go.dev/dl/go1.26.8.linux-amd64.tar.gz',
  '  sudo rm -rf /usr/local/go && sudo tar -C /usr/local -xzf go1.26.8.linux-amd64.tar.gz',
  '  export PATH="$PATH:/usr/local/go/bin"',
  'then run `npm run cluster:build` (the first build takes about 10 to 30 minutes on 2 cores).',
].join('\n');

export class GoNotInstalledError extends Error {
  constructor(detail: string) {
    super(`Go is not installed or not on PATH (${detail}).\n${GO_INSTALL_HINT}`);
    this.name = 'GoNotInstalledError';
  }
}

/**
 * The upstream inputs (the Metacontroller archive among them) are absent or not the pinned
 * bytes: upstream-inputs.ts's error, under the name build-binaries.ts reports without a stack.
 */
export { UpstreamInputsError as UpstreamArchiveError } from './upstream-inputs.js';

export interface BinaryPaths {
  binDir: string;
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  kubectl: string;
  metacontroller: string;
  /** OCM's `registration` binary: `registration controller` (hub), `registration agent`. */
  ocmRegistration: string;
  /** OCM's `work` binary: `work manager` (hub), `work agent`. */
  ocmWork: string;
  /** The extracted OCM archive (its manifests/ hold the hub and managed-cluster CRDs). */
  ocmSourceDir: string;
}

export interface BuiltBinaries extends BinaryPaths {
  versions: PinnedVersions;
  /** True when every stamp matched and nothing was built. */
  reused: boolean;
  /** Seconds spent per component in this call (only the components that were built). */
  timingsSeconds: Partial<Record<ComponentName, number>>;
  totalSeconds: number;
}

type ComponentName = 'kubernetes' | 'etcd' | 'metacontroller' | 'ocm';

interface GoBinary {
  /** Import path (Go module components) or ./relative path (archive) of the main package. */
  mainPackage: string;
  /** File name of the binary in binDir. */
  binary: string;
}

interface GoComponent {
  name: ComponentName;
  binaries: GoBinary[];
  ldflags: string;
  /** Further `go build` flags (e.g. -mod=vendor). */
  goFlags?: readonly string[];
  /** A wrapper module under test/cluster/go/ that pins the upstream module. */
  moduleDir?: string;
  /** A source archive, built from its own go.mod after it is extracted into the cache. */
  archive?: { file: string; sha256: string; folder: string };
}

interface BuildStamp {
  /** Inputs hash of every component built from those inputs. */
  components: Partial<Record<ComponentName, string>>;
  goVersion: string;
  builtAt: string;
}

function components(versions: PinnedVersions): GoComponent[] {
  const { major, minor } = kubernetesMajorMinor(versions.kubernetes.version);
  // The same variables hack/lib/version.sh sets for release builds, so that `kubectl version`
  // and the apiserver's /version report the real release instead of v0.0.0-master.
  const kubernetesVersionFlags = [
    'k8s.io/component-base/version',
    'k8s.io/client-go/pkg/version',
  ].flatMap((pkg) => [
    `-X ${pkg}.gitVersion=${versions.kubernetes.version}`,
    `-X ${pkg}.gitMajor=${major}`,
    `-X ${pkg}.gitMinor=${minor}`,
    `-X ${pkg}.gitTreeState=clean`,
  ]);
  const { archive, sha256, version, commit } = versions.metacontroller;
  return [
    {
      name: 'etcd',
      moduleDir: path.join(goModulesDir, 'etcd'),
      binaries: [{ mainPackage: 'go.etcd.io/etcd/server/v3', binary: 'etcd' }],
      ldflags: '-s -w',
    },
    {
      name: 'kubernetes',
      moduleDir: path.join(goModulesDir, 'kubernetes'),
      binaries: [
        { mainPackage: 'k8s.io/kubernetes/cmd/kube-apiserver', binary: 'kube-apiserver' },
        {
          mainPackage: 'k8s.io/kubernetes/cmd/kube-controller-manager',
          binary: 'kube-controller-manager',
        },
        { mainPackage: 'k8s.io/kubernetes/cmd/kubectl', binary: 'kubectl' },
      ],
      ldflags: ['-s -w', ...kubernetesVersionFlags].join(' '),
    },
    {
      name: 'metacontroller',
      archive: { file: archive, sha256, folder: archiveFolder(archive) },
      // Metacontroller's Makefile stamps main.version the same way.
      binaries: [{ mainPackage: './pkg/cmd/metacontroller', binary: 'metacontroller' }],
      ldflags: `-s -w -X main.version=${version}-${commit.slice(0, 12)}`,
    },
    {
      name: 'ocm',
      archive: {
        file: versions.ocm.archive,
        sha256: versions.ocm.sha256,
        folder: archiveFolder(versions.ocm.archive),
      },
      binaries: [
        { mainPackage: './cmd/registration', binary: 'registration' },
        { mainPackage: './cmd/work', binary: 'work' },
      ],
      // The archive vendors every dependency: nothing is downloaded. The -X flags are what OCM's
      // Makefile (build-machinery-go) stamps; they only change the link step, so the Go build
      // cache of a plain `go build -trimpath -mod=vendor -ldflags '-s -w'` still applies.
      goFlags: ['-mod=vendor'],
      ldflags: [
        '-s -w',
        `-X open-cluster-management.io/ocm/pkg/version.versionFromGit=${versions.ocm.version}`,
        `-X open-cluster-management.io/ocm/pkg/version.commitFromGit=${versions.ocm.commit}`,
      ].join(' '),
    },
  ];
}

/** `ocm-1.3.1.tar.gz` → `ocm-1.3.1`, the folder `git archive --prefix` put everything in. */
function archiveFolder(archive: string): string {
  return archive.replace(/\.tar\.gz$/, '');
}

export function binaryPaths(versions: PinnedVersions): BinaryPaths {
  const binDir = path.join(binaryCacheRoot, versionsCacheKey(versions), 'bin');
  return {
    binDir,
    etcd: path.join(binDir, 'etcd'),
    kubeApiserver: path.join(binDir, 'kube-apiserver'),
    kubeControllerManager: path.join(binDir, 'kube-controller-manager'),
    kubectl: path.join(binDir, 'kubectl'),
    metacontroller: path.join(binDir, 'metacontroller'),
    ocmRegistration: path.join(binDir, 'registration'),
    ocmWork: path.join(binDir, 'work'),
    ocmSourceDir: path.join(path.dirname(binDir), 'src', archiveFolder(versions.ocm.archive)),
  };
}

/** Go's environment for every build: static binaries, no VCS stamping. */
function goEnvironment(): NodeJS.ProcessEnv {
  return { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-buildvcs=false' };
}

export async function goVersion(): Promise<string> {
  let result: CommandResult;
  try {
    result = await runCommand('go', ['env', 'GOVERSION'], { env: goEnvironment() });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new GoNotInstalledError(code === 'ENOENT' ? '`go` was not found on PATH' : String(error));
  }
  if (result.code !== 0)
    throw new GoNotInstalledError(`\`go env GOVERSION\` failed: ${result.stderr.trim()}`);
  return result.stdout.trim();
}

function filesOfModule(moduleDir: string): string[] {
  return readdirSync(moduleDir)
    .filter((file) => file === 'go.mod' || file === 'go.sum' || file.endsWith('.go'))
    .sort()
    .map((file) => path.join(moduleDir, file));
}

/** Hash of what one component is built from: recipe, Go version, pins, module files. */
function componentInputsHash(component: GoComponent, goVersionString: string): string {
  const hash = createHash('sha256');
  hash.update(`recipe ${BUILD_RECIPE_REVISION}\n${goVersionString}\n${component.ldflags}\n`);
  hash.update(JSON.stringify(component.binaries));
  if (component.goFlags) hash.update(`\nflags ${component.goFlags.join(' ')}\n`);
  if (component.archive) hash.update(`\narchive ${component.archive.sha256}\n`);
  if (component.moduleDir) {
    for (const file of filesOfModule(component.moduleDir)) {
      hash.update(`\n${path.relative(goModulesDir, file)}\n`);
      hash.update(readFileSync(file));
    }
  }
  return hash.digest('hex');
}

interface GoModJson {
  Go?: string;
  Require?: { Path: string; Version: string }[];
  Replace?: { Old: { Path: string }; New: { Path: string; Version?: string } }[];
}

async function readGoMod(moduleDir: string): Promise<GoModJson> {
  const result = await runCommandOrThrow('go', ['mod', 'edit', '-json'], {
    cwd: moduleDir,
    env: goEnvironment(),
  });
  return JSON.parse(result.stdout) as GoModJson;
}

/**
 * versions.json is the single source of truth, but the versions also have to be written into
 * the go.mod files. Refuse to build when they disagree instead of building something else.
 */
async function assertGoModulesMatchVersions(versions: PinnedVersions): Promise<void> {
  const problems: string[] = [];
  const kubernetes = await readGoMod(path.join(goModulesDir, 'kubernetes'));
  const kubernetesRequire = kubernetes.Require?.find((r) => r.Path === 'k8s.io/kubernetes');
  if (kubernetesRequire?.Version !== versions.kubernetes.version) {
    problems.push(
      `go/kubernetes requires k8s.io/kubernetes ${kubernetesRequire?.Version ?? '(nothing)'}`,
    );
  }
  for (const replacement of kubernetes.Replace ?? []) {
    if (
      replacement.New.Path.startsWith('k8s.io/') &&
      replacement.New.Version !== versions.kubernetes.stagingVersion
    ) {
      problems.push(
        `go/kubernetes replaces ${replacement.Old.Path} with ${replacement.New.Version ?? replacement.New.Path}`,
      );
    }
  }
  const etcd = await readGoMod(path.join(goModulesDir, 'etcd'));
  const etcdRequire = etcd.Require?.find((r) => r.Path === 'go.etcd.io/etcd/server/v3');
  if (etcdRequire?.Version !== versions.etcd.version) {
    problems.push(
      `go/etcd requires go.etcd.io/etcd/server/v3 ${etcdRequire?.Version ?? '(nothing)'}`,
    );
  }
  if (problems.length > 0) {
    throw new Error(
      `The Go wrapper modules do not match ${versionsFile}:\n  ${problems.join('\n  ')}\n` +
        'Run `npx tsx test/cluster/build-binaries.ts --update-go-modules` and commit the result.',
    );
  }
}

function readStamp(stampFile: string): BuildStamp | undefined {
  if (!existsSync(stampFile)) return undefined;
  try {
    const stamp = JSON.parse(readFileSync(stampFile, 'utf8')) as Partial<BuildStamp>;
    return typeof stamp.components === 'object' && stamp.components !== null
      ? (stamp as BuildStamp)
      : undefined;
  } catch {
    return undefined;
  }
}

function isExecutableFile(file: string): boolean {
  try {
    const stats = statSync(file);
    return stats.isFile() && (stats.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/**
 * Checks every upstream input by sha256 (upstream-inputs.ts: the upstream CRDs and the
 * Metacontroller archive, one check) and returns the archive's path. ensureBinaries() calls it
 * before anything else, so that a machine without the inputs fails at once, with the list of
 * missing files and how to get each, rather than after building Kubernetes.
 */
export function checkMetacontrollerArchive(versions: PinnedVersions): string {
  return checkedArchive(versions.metacontroller.archive);
}

/** The verified archive `file` in the upstream-src directory (every input checked first). */
function checkedArchive(file: string): string {
  return upstreamInputFile(verifyUpstreamInputs(), `upstream-src/${file}`);
}

// A crude cross-process lock: two test runs (or a test run and the CLI) must not write the
// same binaries at the same time. mkdir is atomic; a lock whose owner has died is taken over.
async function withBuildLock<T>(
  cacheDir: string,
  log: (line: string) => void,
  work: () => Promise<T>,
): Promise<T> {
  const lockDir = path.join(cacheDir, '.build-lock');
  const ownerFile = path.join(lockDir, 'pid');
  let announced = false;
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(ownerFile, String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number.parseInt(
        existsSync(ownerFile) ? readFileSync(ownerFile, 'utf8') : '',
        10,
      );
      let ownerAlive = false;
      if (Number.isInteger(owner)) {
        try {
          process.kill(owner, 0);
          ownerAlive = true;
        } catch {
          ownerAlive = false;
        }
      }
      if (!ownerAlive && Number.isInteger(owner)) {
        rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      if (!announced) {
        log(
          `waiting for another build (pid ${Number.isInteger(owner) ? owner : '?'}) holding ${lockDir}`,
        );
        announced = true;
      }
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

export interface EnsureBinariesOptions {
  /** Rebuild even if the stamps match. */
  force?: boolean;
  /** Progress lines; defaults to stderr. */
  log?: (line: string) => void;
  /** Stream the go command's own output. */
  verbose?: boolean;
}

/** Builds every component whose stamp does not match its inputs (or whose binaries are gone). */
export async function ensureBinaries(options: EnsureBinariesOptions = {}): Promise<BuiltBinaries> {
  const log = options.log ?? ((line: string) => process.stderr.write(`[build-binaries] ${line}\n`));
  const started = performance.now();
  const versions = readPinnedVersions();
  // First, before Go is even asked: without the upstream inputs nothing below can succeed.
  checkMetacontrollerArchive(versions);
  const goVersionString = await goVersion();
  const paths = binaryPaths(versions);
  const cacheDir = path.dirname(paths.binDir);
  const stampFile = path.join(cacheDir, 'build-stamp.json');
  mkdirSync(cacheDir, { recursive: true });

  const allComponents = components(versions);
  const hashes = new Map(
    allComponents.map((component) => [
      component.name,
      componentInputsHash(component, goVersionString),
    ]),
  );
  const outdated = (): GoComponent[] => {
    const stamp = readStamp(stampFile);
    return allComponents.filter(
      (component) =>
        options.force === true ||
        stamp?.components[component.name] !== hashes.get(component.name) ||
        component.binaries.some(
          (binary) => !isExecutableFile(path.join(paths.binDir, binary.binary)),
        ) ||
        // The extracted source is used after the build too (OCM's CRDs).
        (component.archive !== undefined &&
          !existsSync(path.join(cacheDir, 'src', component.archive.folder, 'go.mod'))),
    );
  };
  const result = (timings: BuiltBinaries['timingsSeconds']): BuiltBinaries => ({
    ...paths,
    versions,
    reused: Object.keys(timings).length === 0,
    timingsSeconds: timings,
    totalSeconds: (performance.now() - started) / 1000,
  });

  if (outdated().length === 0) return result({});

  return withBuildLock(cacheDir, log, async () => {
    // Someone else may have finished the same build while we waited for the lock.
    const toBuild = outdated();
    if (toBuild.length === 0) return result({});

    if (toBuild.some((component) => component.moduleDir !== undefined)) {
      await assertGoModulesMatchVersions(versions);
    }
    mkdirSync(paths.binDir, { recursive: true });
    log(
      `building ${toBuild.map((c) => c.name).join(', ')} into ${paths.binDir} with ${goVersionString} ` +
        '(a first build of everything takes about 10 to 30 minutes on 2 cores; one cold build took 26)',
    );
    const timings: BuiltBinaries['timingsSeconds'] = {};
    for (const component of toBuild) {
      const componentStarted = performance.now();
      const names = component.binaries.map((binary) => binary.binary).join(', ');
      log(`${component.name}: building ${names} ...`);
      const outcome = await buildComponent(component, cacheDir, paths.binDir, options);
      const seconds = (performance.now() - componentStarted) / 1000;
      timings[component.name] = seconds;
      if (!outcome.ok) {
        throw new Error(`building ${component.name} (${names}) failed:\n${outcome.output}`);
      }
      log(`${component.name}: built ${names} in ${seconds.toFixed(1)} s`);
      // Recorded per component, so that a later failure does not rebuild what succeeded.
      const stamp: BuildStamp = {
        components: {
          ...readStamp(stampFile)?.components,
          [component.name]: hashes.get(component.name),
        },
        goVersion: goVersionString,
        builtAt: new Date().toISOString(),
      };
      writeFileSync(stampFile, `${JSON.stringify(stamp, null, 2)}\n`);
    }
    return result(timings);
  });
}

/** Extracts the verified archive into the cache (afresh, so no stale file survives). */
async function extractArchive(
  component: GoComponent & { archive: NonNullable<GoComponent['archive']> },
  cacheDir: string,
): Promise<string> {
  const archiveFile = checkedArchive(component.archive.file);
  const srcRoot = path.join(cacheDir, 'src');
  const sourceDir = path.join(srcRoot, component.archive.folder);
  rmSync(sourceDir, { recursive: true, force: true });
  mkdirSync(srcRoot, { recursive: true });
  await runCommandOrThrow('tar', ['-xzf', archiveFile, '-C', srcRoot]);
  if (!existsSync(path.join(sourceDir, 'go.mod'))) {
    throw new Error(`${archiveFile} did not extract to ${sourceDir}/go.mod`);
  }
  return sourceDir;
}

async function buildComponent(
  component: GoComponent,
  cacheDir: string,
  binDir: string,
  options: EnsureBinariesOptions,
): Promise<{ ok: true } | { ok: false; output: string }> {
  const cwd = component.archive
    ? await extractArchive({ ...component, archive: component.archive }, cacheDir)
    : component.moduleDir;
  const args = [
    'build',
    '-trimpath',
    ...(component.goFlags ?? []),
    `-ldflags=${component.ldflags}`,
  ];
  // With several packages, -o names a directory and each binary is named after its package.
  if (component.binaries.length === 1 && component.binaries[0]) {
    args.push(
      '-o',
      path.join(binDir, component.binaries[0].binary),
      component.binaries[0].mainPackage,
    );
  } else {
    args.push(
      '-o',
      `${binDir}${path.sep}`,
      ...component.binaries.map((binary) => binary.mainPackage),
    );
  }
  const result = await runCommand('go', args, {
    ...(cwd === undefined ? {} : { cwd }),
    env: goEnvironment(),
    echo: options.verbose ?? false,
  });
  return result.code === 0
    ? { ok: true }
    : { ok: false, output: `${result.stderr}${result.stdout}` };
}

const KUBERNETES_GO_MOD_HEADER = [
  '// Wrapper module whose only job is to build kube-apiserver, kube-controller-manager and',
  '// kubectl from k8s.io/kubernetes at the version pinned in ../../versions.json.',
  '// k8s.io/kubernetes requires its staging modules at v0.0.0 (its own go.mod replaces them with',
  '// ./staging/src/...), so every staging module is replaced here by its published release.',
  '// Generated by `npx tsx test/cluster/build-binaries.ts --update-go-modules`.',
].join('\n');

/**
 * Rewrites the wrapper go.mod files from versions.json and runs `go mod tidy`, so that go.sum
 * is complete. Metacontroller is built from its archive and has no wrapper module.
 */
export async function updateGoModules(
  log: (line: string) => void,
): Promise<Partial<Record<ComponentName, string>>> {
  await goVersion();
  const versions = readPinnedVersions();
  const env = goEnvironment();
  const failures: Partial<Record<ComponentName, string>> = {};

  // kubernetes: the list of staging modules comes from k8s.io/kubernetes's own go.mod.
  const kubernetesDir = path.join(goModulesDir, 'kubernetes');
  const download = await runCommandOrThrow(
    'go',
    ['mod', 'download', '-json', `k8s.io/kubernetes@${versions.kubernetes.version}`],
    { cwd: kubernetesDir, env },
  );
  const upstreamGoModFile = (JSON.parse(download.stdout) as { GoMod: string }).GoMod;
  const upstreamGoMod = readFileSync(upstreamGoModFile, 'utf8');
  const stagingModules = [
    ...upstreamGoMod.matchAll(/^\s*(k8s\.io\/[\w.-]+)\s+=>\s+\.\/staging\//gm),
  ]
    .map((match) => match[1])
    .filter((name): name is string => name !== undefined);
  const goDirective = /^go\s+(\S+)/m.exec(upstreamGoMod)?.[1] ?? '1.25.0';
  const godebug = /^godebug\s+.+$/m.exec(upstreamGoMod)?.[0];
  const kubernetesGoMod = [
    KUBERNETES_GO_MOD_HEADER,
    'module kubecell.test/cluster/kubernetes',
    '',
    `go ${goDirective}`,
    '',
    // Keep upstream's GODEBUG defaults: they are part of how kube-apiserver behaves.
    ...(godebug ? [godebug, ''] : []),
    `require k8s.io/kubernetes ${versions.kubernetes.version}`,
    '',
    'replace (',
    ...stagingModules.map((name) => `\t${name} => ${name} ${versions.kubernetes.stagingVersion}`),
    ')',
    '',
  ].join('\n');
  writeFileSync(path.join(kubernetesDir, 'go.mod'), kubernetesGoMod);
  log(`kubernetes: go.mod rewritten (${stagingModules.length} staging modules); go mod tidy ...`);
  await runCommandOrThrow('go', ['mod', 'tidy'], { cwd: kubernetesDir, env });

  const etcdDir = path.join(goModulesDir, 'etcd');
  await runCommandOrThrow(
    'go',
    ['mod', 'edit', `-require=go.etcd.io/etcd/server/v3@${versions.etcd.version}`],
    {
      cwd: etcdDir,
      env,
    },
  );
  log('etcd: go mod tidy ...');
  await runCommandOrThrow('go', ['mod', 'tidy'], { cwd: etcdDir, env });

  return failures;
}
