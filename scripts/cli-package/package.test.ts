// The `kubecell` command as users install it (issue 26, must 3): `npm run build:cli`'s package
// (scripts/cli-package/) is built and packed, the tarball installed with `npm install --offline`
// into an empty folder (so it has no dependency to download), and the installed commands run
// from there, away from the repository: `kubecell --help`, `--version`, `validate` on the samples
// and on a bad manifest, `kubeconfig` against a fake API server, `kubectl-kubecell` and, when a
// kubectl is at hand, `kubectl kubecell`. docs/operations.md must install the tarball it makes.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { USAGE } from '../../hooks/cli/cli.js';
import { fileURLToPath } from 'node:url';
import { buildCliPackage, npm, npmEnv, type CliPackage } from './package.js';

type Json = Record<string, unknown>;

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const readRepoFile = (file: string): string => readFileSync(path.join(repoRoot, file), 'utf8');

const { version } = JSON.parse(readRepoFile('package.json')) as { version: string };

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end (asynchronously: a fake API server of this process may answer it). */
function runProgram(
  file: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** An API server that has no VirtualCluster: every read is kube-apiserver's NotFound. */
async function emptyApiServer(): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    const name = (request.url ?? '').split('/').at(-1);
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        message: `virtualclusters.kubecell.io "${name}" not found`,
        reason: 'NotFound',
        details: { name, group: 'kubecell.io', kind: 'virtualclusters' },
        code: 404,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** A kubectl to run the plugin with: the cluster tests' build, else one on the PATH. */
function findKubectl(): string | undefined {
  const cache = path.join(repoRoot, '.cache', 'kube');
  const built = existsSync(cache)
    ? readdirSync(cache).map((dir) => path.join(cache, dir, 'bin', 'kubectl'))
    : [];
  const onPath = (process.env.PATH ?? '')
    .split(path.delimiter)
    .map((dir) => path.join(dir, 'kubectl'));
  return [...built, ...onPath].find((file) => existsSync(file));
}

/** Every manifest file `kubecell validate -f samples/` reads. */
function sampleFiles(): string[] {
  return readdirSync(path.join(repoRoot, 'samples'), { recursive: true })
    .map(String)
    .filter((file) => /\.(ya?ml|json)$/.test(file));
}

const BAD_CELL = `apiVersion: kubecell.io/v1alpha1
kind: Cell
metadata: {name: cell9, namespace: kubecell-system}
spec:
  managedClusterRef: {name: cell9}
  machineProfile:
    name: a100
    gpus: 2
    devices:
      - {name: gpu, resourceName: nvidia.com/gpu}
      - {name: gpu2, resourceName: nvidia.com/gpu}
`;

describe('the kubecell npm package (npm run build:cli)', function () {
  this.timeout(60000);
  let built: CliPackage;
  let buildDir: string;
  let installDir: string;
  const bin = (name: string): string => path.join(installDir, 'node_modules', '.bin', name);
  const run = (args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> =>
    runProgram(bin('kubecell'), args, { cwd: installDir, env: { ...npmEnv(), ...env } });

  before(async function () {
    this.timeout(240000);
    buildDir = mkdtempSync(path.join(tmpdir(), 'kubecell-cli-build-'));
    built = await buildCliPackage(repoRoot, buildDir);
    // An empty folder outside the repository; --offline: nothing may need downloading.
    installDir = mkdtempSync(path.join(tmpdir(), 'kubecell-cli-install-'));
    npm(
      ['install', '--offline', '--no-audit', '--no-fund', '--prefix', installDir, built.tarball],
      installDir,
    );
  });

  after(() => {
    for (const dir of [buildDir, installDir]) {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    }
  });

  it('packs @kubecell/cli at the repository version: two commands, no dependencies', () => {
    expect(path.basename(built.tarball)).to.equal(`kubecell-cli-${version}.tgz`);
    const installed = path.join(installDir, 'node_modules', '@kubecell', 'cli');
    const manifest = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as Json;
    expect(manifest).to.include({ name: '@kubecell/cli', version });
    expect(manifest.bin).to.deep.equal({
      kubecell: 'kubecell.mjs',
      'kubectl-kubecell': 'kubecell.mjs',
    });
    expect(manifest).to.not.have.property('dependencies');
    expect(readdirSync(path.join(installDir, 'node_modules')).sort()).to.deep.equal([
      '.bin',
      '.package-lock.json',
      '@kubecell',
    ]);
    expect(readdirSync(installed).sort()).to.deep.equal([
      'README.md',
      'THIRD-PARTY-NOTICES.md',
      'kubecell.mjs',
      'package.json',
    ]);
    const program = readFileSync(path.join(installed, 'kubecell.mjs'), 'utf8');
    expect(program.split('\n', 1)[0]).to.equal('#!/usr/bin/env node');
    expect(program.includes(repoRoot), 'the program names the repository').to.equal(false);
    expect(readFileSync(path.join(installed, 'THIRD-PARTY-NOTICES.md'), 'utf8')).to.include(
      '## @kubernetes/client-node ',
    );
  });

  it('kubecell --help lists the commands, --version says the version', async () => {
    const help = await run(['--help']);
    expect(help.status, help.stderr).to.equal(0);
    expect(help.stdout).to.equal(USAGE);
    for (const command of ['validate', 'kubeconfig', 'agent']) {
      expect(help.stdout).to.include(`  kubecell ${command} `);
    }
    expect((await run(['--version'])).stdout).to.equal(`kubecell ${version}\n`);
  });

  it('kubecell validate -f samples/ passes every sample', async () => {
    const result = await run(['validate', '-f', path.join(repoRoot, 'samples')]);
    expect(result.stdout).to.equal('');
    expect(result.stderr).to.match(
      new RegExp(
        `^kubecell validate: \\d+ KubeCell objects checked in ${sampleFiles().length} files ` +
          '\\(\\d+ other documents skipped\\): no errors\\n',
      ),
    );
    expect(result.status).to.equal(0);
  });

  it('kubecell validate names the field of each error, schema and CEL rule, and exits 1', async () => {
    const file = path.join(installDir, 'bad-cell.yaml');
    writeFileSync(file, BAD_CELL);
    const result = await run(['validate', '-f', file]);
    expect(result.status).to.equal(1);
    expect(result.stdout.trim().split('\n')).to.deep.equal([
      `${file}: Cell/cell9: spec.machineProfile.gpus: Forbidden: unknown field (the apiserver ` +
        'would silently drop it); check its spelling and indentation',
      `${file}: Cell/cell9: spec.machineProfile.devices: Invalid value: "array": machineProfile.devices: ` +
        'each resourceName may be declared by only one device; remove the duplicate entry',
    ]);
    expect(result.stderr).to.include('2 errors');
  });

  it('kubecell kubeconfig reads through the API server of the kubeconfig it is given', async () => {
    const api = await emptyApiServer();
    try {
      const kubeconfig = path.join(installDir, 'alice.kubeconfig');
      writeFileSync(
        kubeconfig,
        'apiVersion: v1\nkind: Config\ncurrent-context: alice\n' +
          `clusters: [{name: c, cluster: {server: "${api.url}", insecure-skip-tls-verify: true}}]\n` +
          'users: [{name: alice, user: {token: alice}}]\n' +
          'contexts: [{name: alice, context: {cluster: c, user: alice}}]\n',
      );
      const out = path.join(installDir, 'team.kubeconfig');
      const result = await run(['kubeconfig', 'team', '-n', 'team-a', '-o', out], {
        KUBECONFIG: kubeconfig,
      });
      expect(result.stderr).to.equal(
        'kubecell: VirtualCluster team-a/team not found (context alice); ' +
          'kubectl get virtualclusters.kubecell.io -n team-a lists those that exist\n',
      );
      expect(result.status).to.equal(1);
      expect(existsSync(out)).to.equal(false);
    } finally {
      api.server.close();
    }
  });

  it('kubectl-kubecell is the same program; kubectl runs it as the plugin `kubectl kubecell`', async function () {
    const plugin = await runProgram(bin('kubectl-kubecell'), ['--help'], {
      cwd: installDir,
      env: npmEnv(),
    });
    expect(plugin.status, plugin.stderr).to.equal(0);
    expect(plugin.stdout).to.equal(USAGE);
    const kubectl = findKubectl();
    if (kubectl === undefined) this.skip(); // no kubectl built (npm run cluster:build) or installed
    const viaKubectl = await runProgram(kubectl as string, ['kubecell', '--version'], {
      cwd: installDir,
      env: {
        ...npmEnv(),
        PATH: [path.dirname(bin('kubecell')), process.env.PATH].join(path.delimiter),
      },
    });
    expect(viaKubectl.stdout, viaKubectl.stderr).to.equal(`kubecell ${version}\n`);
  });

  it('docs/operations.md installs the tarball `npm run build:cli` makes', () => {
    const operations = readRepoFile('docs/operations.md');
    expect(operations).to.include('\nnpm run build:cli');
    expect(operations).to.include(`\nnpm install -g ./dist/${path.basename(built.tarball)}`);
  });
});
