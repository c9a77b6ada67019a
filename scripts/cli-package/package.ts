/**
 * The npm package of the `kubecell` command (decision record in the commit that added it): one
 * bundled program (bundle.ts) under two names, `kubecell` and the kubectl plugin
 * `kubectl-kubecell`, no dependencies, the repository's version. Built into
 * `<outDir>/package/` and packed by npm into `<outDir>/kubecell-cli-<version>.tgz`.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleCli } from './bundle.js';
import { thirdPartyNotices } from './notices.js';

export const CLI_PACKAGE_NAME = '@kubecell/cli';
/** The file both commands run. */
export const CLI_PROGRAM = 'kubecell.mjs';
/** kubectl runs `kubectl-<name>` on the PATH for `kubectl <name>`. */
export const CLI_BINS = ['kubecell', 'kubectl-kubecell'] as const;

interface RootPackage {
  version: string;
  license: string;
  engines: { node: string };
}

export interface CliPackageManifest {
  name: string;
  version: string;
  description: string;
  license: string;
  type: 'module';
  engines: { node: string };
  bin: Record<(typeof CLI_BINS)[number], string>;
  files: string[];
}

/** The package.json of the CLI package: name, version, licence and Node range of the repository's. */
export function cliManifest(root: RootPackage): CliPackageManifest {
  return {
    name: CLI_PACKAGE_NAME,
    version: root.version,
    description:
      'The kubecell command line: check KubeCell manifests offline and fetch the kubeconfig of a ' +
      'VirtualCluster; also the kubectl plugin kubectl-kubecell.',
    license: root.license,
    type: 'module',
    engines: root.engines,
    bin: Object.fromEntries(CLI_BINS.map((bin) => [bin, CLI_PROGRAM])) as CliPackageManifest['bin'],
    files: [CLI_PROGRAM, 'THIRD-PARTY-NOTICES.md'],
  };
}

function readme(manifest: CliPackageManifest): string {
  return `# ${manifest.name} ${manifest.version}

The \`kubecell\` command line of KubeCell, as one program with no dependencies (Node.js
${manifest.engines.node}):

- \`kubecell validate -f <file|directory|->\`: check KubeCell manifests offline with the
  admission webhook's rules;
- \`kubecell kubeconfig <name> -n <namespace> -o <file>\`: write the admin kubeconfig of a Ready
  VirtualCluster (mode 0600);
- \`kubecell --help\`: every command.

The package also installs \`kubectl-kubecell\`, the same program, so that kubectl runs it as a
plugin: \`kubectl kubecell kubeconfig ...\`. Built from the KubeCell repository by
\`npm run build:cli\`; its docs/operations.md says how to install it.
`;
}

/** npm's environment without what an outer `npm run` exports (npm_config_prefix, ...). */
export function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')),
  );
}

/** Runs npm, throwing with its output when it fails. */
export function npm(args: readonly string[], cwd: string): string {
  const result = spawnSync('npm', args, { cwd, encoding: 'utf8', env: npmEnv() });
  if (result.status !== 0) {
    throw new Error(`npm ${args.join(' ')} failed (${result.status}):\n${result.stderr}`);
  }
  return result.stdout;
}

export interface CliPackage {
  /** The unpacked package. */
  packageDir: string;
  /** The tarball `npm install -g` takes. */
  tarball: string;
  manifest: CliPackageManifest;
}

/** Bundles, writes and packs the CLI package under `outDir`. */
export async function buildCliPackage(repoRoot: string, outDir: string): Promise<CliPackage> {
  const root = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as RootPackage;
  const manifest = cliManifest(root);
  const bundle = await bundleCli(repoRoot);
  const packageDir = path.join(outDir, 'package');
  rmSync(packageDir, { recursive: true, force: true });
  mkdirSync(packageDir, { recursive: true });
  const program = path.join(packageDir, CLI_PROGRAM);
  writeFileSync(program, bundle.text);
  chmodSync(program, 0o755);
  writeFileSync(path.join(packageDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(path.join(packageDir, 'README.md'), readme(manifest));
  writeFileSync(
    path.join(packageDir, 'THIRD-PARTY-NOTICES.md'),
    `${thirdPartyNotices(repoRoot, bundle.metafile)}\n`,
  );
  const packed = JSON.parse(
    npm(['pack', '--json', '--pack-destination', path.resolve(outDir)], packageDir),
  ) as Array<{ filename: string }>;
  const filename = packed[0]?.filename;
  if (filename === undefined) throw new Error('npm pack named no tarball');
  return { packageDir, tarball: path.join(path.resolve(outDir), filename), manifest };
}
