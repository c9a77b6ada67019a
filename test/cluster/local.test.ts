// `npm run local-up` / `npm run local-down` (scripts/local/): the local KubeCell to try by hand.
// Runs the two scripts as a user would, in a state directory of its own (KUBECELL_LOCAL_DIR), so
// that neither a developer's running instance nor the shared test cluster is touched: local-up
// starts its own control plane on free ports.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { isAlive, signalGroup, type LocalState } from '../../scripts/local/state.js';
import { ensureBinaries, type BuiltBinaries } from './binaries.js';
import { repoRoot } from './paths.js';
import { runCommand, type CommandResult } from './processes.js';
import { httpGet } from './readiness.js';
import { CLUSTER_SETUP_TIMEOUT_MS } from './shared-cluster.js';

/** Runs `npx tsx <script>` from the repository root with KUBECELL_LOCAL_DIR set. */
function runScript(script: string, localDir: string, timeoutMs: number): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['tsx', script], {
      cwd: repoRoot,
      env: { ...process.env, KUBECELL_LOCAL_DIR: localDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
        code,
        signal,
      });
    });
  });
}

function output(result: CommandResult): string {
  return `exit ${result.code ?? result.signal}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

/** metadata.name of every object of `kind` in samples/. */
function sampleNames(kind: string): string[] {
  const samplesDir = path.join(repoRoot, 'samples');
  return readdirSync(samplesDir)
    .filter((file) => /\.ya?ml$/.test(file))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(path.join(samplesDir, file), 'utf8')).map(
        (document) => document.toJS() as { kind?: string; metadata?: { name?: string } } | null,
      ),
    )
    .filter((object) => object?.kind === kind)
    .map((object) => object?.metadata?.name ?? '')
    .sort();
}

describe('npm run local-up / local-down', function () {
  let binaries: BuiltBinaries;
  let localDir: string;
  let stateFile: string;
  let up: CommandResult;
  let state: LocalState;
  let kubeconfig: string;

  const kubectl = (args: readonly string[]): Promise<CommandResult> =>
    runCommand(binaries.kubectl, [`--kubeconfig=${kubeconfig}`, ...args], { timeoutMs: 120_000 });

  before(async function () {
    // A cold build of the binaries happens here rather than inside local-up's own 15-minute wait.
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    binaries = await ensureBinaries();
    localDir = mkdtempSync(path.join(os.tmpdir(), 'kubecell-local-test-'));
    stateFile = path.join(localDir, 'state.json');
    up = await runScript('scripts/local/up.ts', localDir, 10 * 60_000);
    if (existsSync(stateFile)) state = JSON.parse(readFileSync(stateFile, 'utf8')) as LocalState;
    kubeconfig = path.join(localDir, 'kubeconfig');
  });

  /** Later tests only make sense on a running instance; say why not instead of a TypeError. */
  function requireUp(): void {
    if (up.code !== 0 || state?.ready !== true) {
      throw new Error(`local-up did not start the instance:\n${output(up)}`);
    }
  }

  after(async function () {
    // Whatever the tests did, nothing may outlive them: local-down, then anything still recorded.
    this.timeout(120_000);
    if (localDir === undefined) return;
    if (existsSync(stateFile)) await runScript('scripts/local/down.ts', localDir, 60_000);
    if (state) {
      for (const recorded of [
        { pid: state.supervisorPid, command: undefined },
        ...Object.values(state.processes),
      ]) {
        if (isAlive(recorded.pid, recorded.command)) signalGroup(recorded.pid, 'SIGKILL');
      }
    }
    rmSync(localDir, { recursive: true, force: true });
  });

  it('starts and prints the KUBECONFIG to export, and what does not run', function () {
    expect(up.code, output(up)).to.equal(0);
    const exportLine = up.stdout.split('\n').find((line) => line.startsWith('export KUBECONFIG='));
    expect(exportLine, output(up)).to.equal(`export KUBECONFIG=${kubeconfig}`);
    expect(state.kubeconfig).to.equal(kubeconfig);
    expect(existsSync(kubeconfig), kubeconfig).to.equal(true);
    // Every other stdout line is a shell comment, so `eval "$(npm run -s local-up)"` works.
    for (const line of up.stdout.trim().split('\n')) {
      expect(line === exportLine || line.startsWith('#'), line).to.equal(true);
    }
    expect(up.stdout).to.include('kubectl apply -f samples/');
    expect(up.stdout).to.include('kubelet');
    expect(up.stdout).to.match(/k3k.*Open Cluster Management.*KubeVirt/);
    expect(up.stdout).to.include('npm run local-down');

    expect(state.ready).to.equal(true);
    expect(Object.keys(state.processes)).to.include.members([
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
      'hook-server',
    ]);
    expect(Object.keys(state.processes)).to.include('metacontroller');
    expect(up.stdout).to.include('Metacontroller v4.17.2 as metacontroller/metacontroller');
  });

  it('answers on the hook server', async function () {
    this.timeout(30_000);
    requireUp();
    const healthz = await httpGet(`${state.hookServerUrl}/healthz`);
    expect(healthz.status, healthz.body).to.equal(200);
  });

  it('applied metacontroller/ with the hooks pointing at the local hook server', async function () {
    this.timeout(60_000);
    requireUp();
    const listed = await kubectl([
      'get',
      'compositecontrollers,decoratorcontrollers',
      '-o',
      'json',
    ]);
    expect(listed.code, output(listed)).to.equal(0);
    const items = (
      JSON.parse(listed.stdout) as {
        items: { spec: { hooks: Record<string, { webhook?: { url?: string } }> } }[];
      }
    ).items;
    expect(items.length).to.be.greaterThan(0);
    expect(items.length).to.equal(state.metacontrollerObjects?.length);
    for (const item of items) {
      for (const hook of Object.values(item.spec.hooks)) {
        expect(hook.webhook?.url).to.match(new RegExp(`^${state.hookServerUrl}/hooks/`));
      }
    }
  });

  it('takes `kubectl apply -f samples/`', async function () {
    this.timeout(120_000);
    requireUp();
    const applied = await kubectl(['apply', '-f', path.join(repoRoot, 'samples')]);
    expect(applied.code, output(applied)).to.equal(0);

    const cells = await kubectl(['get', 'cells', '-n', 'kubecell-system', '-o', 'name']);
    expect(cells.code, output(cells)).to.equal(0);
    const cellNames = cells.stdout
      .trim()
      .split('\n')
      .map((line) => line.replace(/^.*\//, ''))
      .sort();
    expect(cellNames).to.deep.equal(sampleNames('Cell'));

    const virtualClusters = await kubectl([
      'get',
      'virtualclusters',
      '--all-namespaces',
      '-o',
      'jsonpath={range .items[*]}{.metadata.name}{"\\n"}{end}',
    ]);
    expect(virtualClusters.code, output(virtualClusters)).to.equal(0);
    expect(virtualClusters.stdout.trim().split('\n').sort()).to.deep.equal(
      sampleNames('VirtualCluster'),
    );
  });

  it('refuses to start a second instance and says how to stop the first', async function () {
    this.timeout(120_000);
    requireUp();
    const second = await runScript('scripts/local/up.ts', localDir, 60_000);
    expect(second.code, output(second)).to.equal(1);
    expect(second.stderr).to.include('already running');
    expect(second.stderr).to.include('npm run local-down');
    expect(isAlive(state.supervisorPid)).to.equal(true);
  });

  it('local-down stops every process it started and removes the state', async function () {
    this.timeout(120_000);
    requireUp();
    const down = await runScript('scripts/local/down.ts', localDir, 90_000);
    expect(down.code, output(down)).to.equal(0);
    expect(down.stdout).to.include('no process of it is left');
    expect(down.stdout, 'nothing should have needed SIGKILL').to.not.include('had to kill');
    expect(isAlive(state.supervisorPid), `supervisor ${state.supervisorPid}`).to.equal(false);
    for (const [name, recorded] of Object.entries(state.processes)) {
      expect(isAlive(recorded.pid), `${name} (pid ${recorded.pid})`).to.equal(false);
    }
    expect(existsSync(stateFile), stateFile).to.equal(false);
    expect(existsSync(kubeconfig), kubeconfig).to.equal(false);
    if (state.dir !== undefined) expect(existsSync(state.dir), state.dir).to.equal(false);
  });

  it('local-down again says it is not running and succeeds', async function () {
    this.timeout(60_000);
    const again = await runScript('scripts/local/down.ts', localDir, 60_000);
    expect(again.code, output(again)).to.equal(0);
    expect(again.stdout).to.include('not running');
  });
});
