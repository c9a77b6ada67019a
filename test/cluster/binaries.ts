// Builds the upstream binaries the cluster tests run (etcd, kube-apiserver,
// kube-controller-manager, kubectl, Metacontroller) from Go modules at the versions pinned in
// versions.json, into the git-ignored cache .cache/kube/<versions key>/bin/.
//
// The wrapper modules under test/cluster/go/ carry complete go.mod/go.sum files, so a build
// needs nothing but the Go toolchain and the Go module proxy. A stamp file records a hash of
// every input; when it matches and the binaries exist, the build is skipped.
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
import {
  kubernetesMajorMinor,
  readPinnedVersions,
  versionsCacheKey,
  type PinnedVersions,
} from './versions.js';

/** Bump when the way binaries are built changes (flags, layout), to invalidate old stamps. */
const BUILD_RECIPE_REVISION = 1;

export const GO_INSTALL_HINT = [
  'The cluster tests build etcd, kube-apiserver, kube-controller-manager, kubectl and Metacontroller',
  'from Go modules, so they need the Go toolchain (1.26 or newer) on PATH.',
  'Install it from https://go.dev/doc/install, for example on Linux x86-64:',
  '  curl -fsSLO https://go.dev/dl/go1.26.8.linux-amd64.tar.gz',
  '  sudo rm -rf /usr/local/go && sudo tar -C /usr/local -xzf go1.26.8.linux-amd64.tar.gz',
  '  export PATH="$PATH:/usr/local/go/bin"',
  'then run `npx tsx test/cluster/build-binaries.ts` (the first build takes about 10 minutes on 2 cores).',
].join('\n');

export class GoNotInstalledError extends Error {
  constructor(detail: string) {
    super(`Go is not installed or not on PATH (${detail}).\n${GO_INSTALL_HINT}`);
    this.name = 'GoNotInstalledError';
  }
}

export interface BinaryPaths {
  binDir: string;
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  kubectl: string;
  /** Absent when Metacontroller could not be built; see `unavailable.metacontroller`. */
  metacontroller?: string;
}

export interface BuiltBinaries extends BinaryPaths {
  versions: PinnedVersions;
  /** Components that could not be obtained, with the exact answer the go command gave. */
  unavailable: Partial<Record<ComponentName, string>>;
  /** True when the stamp matched and nothing was built. */
  reused: boolean;
  /** Seconds spent per component in this call (empty when reused). */
  timingsSeconds: Partial<Record<ComponentName, number>>;
  totalSeconds: number;
}

type ComponentName = 'kubernetes' | 'etcd' | 'metacontroller';

interface GoBinary {
  /** Import path of the upstream main package. */
  mainPackage: string;
  /** File name of the binary in binDir. */
  binary: string;
}

interface GoComponent {
  name: ComponentName;
  moduleDir: string;
  binaries: GoBinary[];
  ldflags: string;
  /**
   * Metacontroller is only available if the module proxy serves its commit. When it does not,
   * the build records the go command's answer and carries on without it (never a stand-in).
   */
  mayBeUnavailable: boolean;
}

interface BuildStamp {
  inputsHash: string;
  goVersion: string;
  unavailable: Partial<Record<ComponentName, string>>;
  builtAt: string;
}

export const METACONTROLLER_MAIN_PACKAGE = 'metacontroller/pkg/cmd/metacontroller';

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
  return [
    {
      name: 'etcd',
      moduleDir: path.join(goModulesDir, 'etcd'),
      binaries: [{ mainPackage: 'go.etcd.io/etcd/server/v3', binary: 'etcd' }],
      ldflags: '-s -w',
      mayBeUnavailable: false,
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
      mayBeUnavailable: false,
    },
    {
      name: 'metacontroller',
      moduleDir: path.join(goModulesDir, 'metacontroller'),
      binaries: [{ mainPackage: METACONTROLLER_MAIN_PACKAGE, binary: 'metacontroller' }],
      ldflags: `-s -w -X main.version=${versions.metacontroller.version}-${versions.metacontroller.commit}`,
      mayBeUnavailable: true,
    },
  ];
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
  };
}

/** Go's environment for every build: static binaries, no VCS stamping of our own repository. */
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

/** Hash of versions.json and every go.mod/go.sum/.go file of the wrapper modules. */
function inputsHash(versions: PinnedVersions, goVersionString: string): string {
  const hash = createHash('sha256');
  hash.update(`recipe ${BUILD_RECIPE_REVISION}\n${goVersionString}\n`);
  hash.update(readFileSync(versionsFile));
  for (const component of components(versions)) {
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
  // `go mod edit -json` rejects a bare commit as a version, so this go.mod is read as text.
  const metacontrollerGoMod = readFileSync(
    path.join(goModulesDir, 'metacontroller', 'go.mod'),
    'utf8',
  );
  const metacontrollerReplace = /^replace\s+metacontroller\s+=>\s+(\S+)\s+(\S+)/m.exec(
    metacontrollerGoMod,
  );
  const commit = versions.metacontroller.commit.slice(0, 12);
  // Before the proxy has served the commit the replacement holds the bare commit; afterwards
  // the go command rewrites it to the pseudo-version, which ends with the same 12 hex digits.
  const replacementVersion = metacontrollerReplace?.[2];
  if (
    metacontrollerReplace?.[1] !== 'github.com/metacontroller/metacontroller' ||
    !(replacementVersion === commit || replacementVersion?.endsWith(`-${commit}`))
  ) {
    problems.push(
      `go/metacontroller does not replace metacontroller with github.com/metacontroller/metacontroller ${commit}`,
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
    return JSON.parse(readFileSync(stampFile, 'utf8')) as BuildStamp;
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

/** Answers of the module proxy (or of `direct` mode) that mean "you cannot have this module". */
function isModuleUnavailable(output: string): boolean {
  return /403 Forbidden|404 Not Found|410 Gone|not available|unknown revision|invalid version|Could not resolve host|no such host|ls-remote/i.test(
    output,
  );
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
  /** Rebuild even if the stamp matches (also retries components recorded as unavailable). */
  force?: boolean;
  /** Progress lines; defaults to stderr. */
  log?: (line: string) => void;
  /** Stream the go command's own output. */
  verbose?: boolean;
}

/** Builds the binaries unless the stamp shows they are already built from the same inputs. */
export async function ensureBinaries(options: EnsureBinariesOptions = {}): Promise<BuiltBinaries> {
  const log = options.log ?? ((line: string) => process.stderr.write(`[build-binaries] ${line}\n`));
  const started = performance.now();
  const goVersionString = await goVersion();
  const versions = readPinnedVersions();
  const paths = binaryPaths(versions);
  const cacheDir = path.dirname(paths.binDir);
  const stampFile = path.join(cacheDir, 'build-stamp.json');
  mkdirSync(cacheDir, { recursive: true });

  const allComponents = components(versions);
  const hash = inputsHash(versions, goVersionString);

  const stampIsCurrent = (): BuildStamp | undefined => {
    const stamp = readStamp(stampFile);
    if (!stamp || stamp.inputsHash !== hash) return undefined;
    const missing = allComponents
      .filter((component) => stamp.unavailable[component.name] === undefined)
      .flatMap((component) => component.binaries)
      .filter((binary) => !isExecutableFile(path.join(paths.binDir, binary.binary)));
    return missing.length === 0 ? stamp : undefined;
  };

  const result = (
    stamp: BuildStamp,
    reused: boolean,
    timings: BuiltBinaries['timingsSeconds'],
  ): BuiltBinaries => {
    const { metacontroller, ...required } = paths;
    return {
      ...required,
      ...(stamp.unavailable.metacontroller === undefined ? { metacontroller } : {}),
      versions,
      unavailable: stamp.unavailable,
      reused,
      timingsSeconds: timings,
      totalSeconds: (performance.now() - started) / 1000,
    };
  };

  const current = options.force ? undefined : stampIsCurrent();
  if (current) return result(current, true, {});

  return withBuildLock(cacheDir, log, async () => {
    // Someone else may have finished the same build while we waited for the lock.
    const builtMeanwhile = options.force ? undefined : stampIsCurrent();
    if (builtMeanwhile) return result(builtMeanwhile, true, {});

    await assertGoModulesMatchVersions(versions);
    rmSync(stampFile, { force: true });
    mkdirSync(paths.binDir, { recursive: true });
    log(
      `building into ${paths.binDir} with ${goVersionString} (a cold build takes about 8 minutes on 2 cores)`,
    );
    const timings: BuiltBinaries['timingsSeconds'] = {};
    const unavailable: BuildStamp['unavailable'] = {};
    for (const component of allComponents) {
      const componentStarted = performance.now();
      const names = component.binaries.map((binary) => binary.binary).join(', ');
      log(`${component.name}: building ${names} ...`);
      const outcome = await buildComponent(component, paths.binDir, options.verbose ?? false);
      const seconds = (performance.now() - componentStarted) / 1000;
      timings[component.name] = seconds;
      if (outcome.ok) {
        log(`${component.name}: built ${names} in ${seconds.toFixed(1)} s`);
        continue;
      }
      if (component.mayBeUnavailable && isModuleUnavailable(outcome.output)) {
        unavailable[component.name] = outcome.output.trim();
        log(
          `${component.name}: NOT AVAILABLE from the Go module proxy; continuing without it. The go command said:\n` +
            outcome.output.trim(),
        );
        continue;
      }
      throw new Error(`building ${component.name} (${names}) failed:\n${outcome.output}`);
    }
    // The hash is taken again: resolving Metacontroller may have rewritten its go.mod/go.sum.
    const stamp: BuildStamp = {
      inputsHash: inputsHash(versions, goVersionString),
      goVersion: goVersionString,
      unavailable,
      builtAt: new Date().toISOString(),
    };
    writeFileSync(stampFile, `${JSON.stringify(stamp, null, 2)}\n`);
    return result(stamp, false, timings);
  });
}

async function buildComponent(
  component: GoComponent,
  binDir: string,
  verbose: boolean,
): Promise<{ ok: true } | { ok: false; output: string }> {
  const args = ['build', '-trimpath', `-ldflags=${component.ldflags}`];
  // Metacontroller's pseudo-version can only be computed by the go command, once the proxy
  // serves the commit; until its go.sum exists the build has to be allowed to write go.mod.
  if (component.mayBeUnavailable && !existsSync(path.join(component.moduleDir, 'go.sum'))) {
    args.push('-mod=mod');
  }
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
    cwd: component.moduleDir,
    env: goEnvironment(),
    echo: verbose,
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

const METACONTROLLER_GO_MOD_HEADER = [
  '// Wrapper module whose only job is to build Metacontroller at the commit pinned in',
  "// ../../versions.json. Metacontroller's go.mod declares `module metacontroller` (no domain),",
  '// so it cannot be required by its GitHub path: it is required under its declared name and',
  '// replaced by the GitHub module at the pinned commit. The go command turns the commit into a',
  '// pseudo-version (and writes go.sum) the first time the module proxy serves it.',
  "// Replace directives in Metacontroller's own go.mod do not apply to a dependency: once it can",
  '// be downloaded, copy the ones it relies on here (and into updateGoModules in binaries.ts).',
  '// Generated by `npx tsx test/cluster/build-binaries.ts --update-go-modules`.',
].join('\n');

/**
 * Rewrites the wrapper go.mod files from versions.json and runs `go mod tidy`, so that go.sum
 * is complete. Metacontroller is attempted too; if the proxy refuses it, its answer is returned.
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

  const metacontrollerDir = path.join(goModulesDir, 'metacontroller');
  // Written as text: `go mod edit` refuses a bare commit as a replacement version, but the go
  // command resolving the module (tidy, build) accepts it and rewrites it to a pseudo-version.
  writeFileSync(
    path.join(metacontrollerDir, 'go.mod'),
    [
      METACONTROLLER_GO_MOD_HEADER,
      'module kubecell.test/cluster/metacontroller',
      '',
      'go 1.25.0',
      '',
      'require metacontroller v0.0.0',
      '',
      `replace metacontroller => github.com/metacontroller/metacontroller ${versions.metacontroller.commit}`,
      '',
    ].join('\n'),
  );
  rmSync(path.join(metacontrollerDir, 'go.sum'), { force: true });
  log('metacontroller: go mod tidy ...');
  const tidy = await runCommand('go', ['mod', 'tidy'], { cwd: metacontrollerDir, env });
  if (tidy.code !== 0) failures.metacontroller = `${tidy.stderr}${tidy.stdout}`.trim();
  return failures;
}
