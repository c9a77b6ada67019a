// `npm run local-up -- --simulate` / `npm run local-down` (scripts/local/): the local KubeCell to
// try by hand, with the simulated outside world of test/simulate/. Runs the two scripts as a user
// would, in a state directory of its own (KUBECELL_LOCAL_DIR), so that neither a developer's
// running instance nor the shared test cluster is touched: local-up starts its own control plane
// on free ports. Then `kubectl apply -f samples/` must give Ready sample Cells and VirtualClusters
// (how long that took is printed, not asserted).
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

/** How long the sample Cells and VirtualClusters may take to become Ready (not a timed check). */
const READY_WAIT_MS = 120_000;

/** Runs `npx tsx <script> <args>` from the repository root with KUBECELL_LOCAL_DIR set. */
function runScript(
  script: string,
  localDir: string,
  timeoutMs: number,
  args: readonly string[] = [],
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['tsx', script, ...args], {
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

interface StatusObject {
  metadata: { name: string; namespace?: string };
  status?: { phase?: string; conditions?: { type: string; status: string; reason?: string }[] };
}

function isReady(object: StatusObject): boolean {
  return (
    object.status?.conditions?.some(
      (condition) => condition.type === 'Ready' && condition.status === 'True',
    ) ?? false
  );
}

function describeStatus(object: StatusObject): string {
  const ready = object.status?.conditions?.find((condition) => condition.type === 'Ready');
  return `${object.metadata.name}: phase ${object.status?.phase ?? '-'}, Ready ${ready?.status ?? '-'} ${ready?.reason ?? ''}`;
}

describe('npm run local-up -- --simulate / local-down', function () {
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
    up = await runScript('scripts/local/up.ts', localDir, 10 * 60_000, ['--simulate']);
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

  it('refuses an unknown argument with its usage (exit 2)', async function () {
    this.timeout(60_000);
    const wrong = await runScript('scripts/local/up.ts', localDir, 60_000, ['--simulated']);
    expect(wrong.code, output(wrong)).to.equal(2);
    expect(wrong.stderr).to.include('unknown argument: --simulated');
    expect(wrong.stderr).to.include('usage: npm run local-up [-- --simulate]');
    expect(wrong.stdout.trim()).to.equal('');
  });

  it('starts and prints the KUBECONFIG to export, what runs and what is simulated', function () {
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
    expect(up.stdout).to.include('npm run local-down');
    // The simulation is labelled as such, names what it plays and what that means.
    expect(up.stdout).to.include('WITH a SIMULATED outside world');
    expect(up.stdout).to.include(
      'SIMULATED (--simulate): test/simulate/, the same code the cluster tests use',
    );
    for (const played of [
      'Open Cluster Management',
      'kubelets',
      'k3k',
      'KubeVirt',
      'Cluster API',
    ]) {
      expect(up.stdout, played).to.include(played);
    }
    expect(up.stdout).to.include('no Pod ever starts');
    expect(up.stdout).to.include('point nowhere');
    expect(up.stdout).to.not.include('NOT running');

    expect(state.ready).to.equal(true);
    expect(state.simulated).to.equal(true);
    expect(Object.keys(state.processes)).to.include.members([
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
      'hook-server',
    ]);
    expect(Object.keys(state.processes)).to.include('metacontroller');
    expect(up.stdout).to.include('Metacontroller v4.17.2 as metacontroller/metacontroller');
    expect(up.stdout).to.include('kubecell-cell');
  });

  it('says in the supervisor log that the outside world is simulated', function () {
    requireUp();
    const log = readFileSync(path.join(localDir, 'supervisor.log'), 'utf8');
    expect(log).to.include('SIMULATED (--simulate): test/simulate/');
    expect(log).to.include('simulation running');
    expect(log).to.include('[SIMULATED] provider baseline installed');
    expect(log).to.match(
      /ready in .* the outside world \(OCM, kubelets, k3k, KubeVirt, Cluster API\) is SIMULATED/,
    );
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
    // metacontroller/ holds the controllers and, for the GPUCellPool provisioners, their RBAC.
    const controllers = (state.metacontrollerObjects ?? []).filter((object) =>
      /^(composite|decorator)controller\./.test(object),
    );
    expect(items.length).to.equal(controllers.length);
    for (const item of items) {
      for (const hook of Object.values(item.spec.hooks)) {
        expect(hook.webhook?.url).to.match(new RegExp(`^${state.hookServerUrl}/hooks/`));
      }
    }
  });

  it('takes `kubectl apply -f samples/`; the sample Cells and VirtualClusters become Ready', async function () {
    this.timeout(READY_WAIT_MS + 120_000);
    requireUp();
    const applyStarted = performance.now();
    const applied = await kubectl(['apply', '-f', path.join(repoRoot, 'samples')]);
    expect(applied.code, output(applied)).to.equal(0);

    const cellNames = sampleNames('Cell');
    const virtualClusterNames = sampleNames('VirtualCluster');
    const readyAfter: Record<'cells' | 'virtualclusters', number | undefined> = {
      cells: undefined,
      virtualclusters: undefined,
    };
    const last: Record<'cells' | 'virtualclusters', StatusObject[]> = {
      cells: [],
      virtualclusters: [],
    };
    const deadline = performance.now() + READY_WAIT_MS;
    while (performance.now() < deadline) {
      for (const [resource, names] of [
        ['cells', cellNames],
        ['virtualclusters', virtualClusterNames],
      ] as const) {
        if (readyAfter[resource] !== undefined) continue;
        const listed = await kubectl(['get', resource, '--all-namespaces', '-o', 'json']);
        expect(listed.code, output(listed)).to.equal(0);
        last[resource] = (JSON.parse(listed.stdout) as { items: StatusObject[] }).items;
        const ready = last[resource].filter(isReady).map((object) => object.metadata.name);
        if (names.every((name) => ready.includes(name))) {
          readyAfter[resource] = (performance.now() - applyStarted) / 1000;
        }
      }
      if (readyAfter.cells !== undefined && readyAfter.virtualclusters !== undefined) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const took = (seconds: number | undefined): string =>
      seconds === undefined ? `not within ${READY_WAIT_MS / 1000} s` : `${seconds.toFixed(1)} s`;
    // Printed for the README and for whoever reads the run; how long it takes is not asserted.
    console.log(
      `      local-up --simulate started in ${state.startupSeconds?.toFixed(1) ?? '?'} s; ` +
        `after kubectl apply -f samples/: Cells (${cellNames.join(', ')}) Ready in ${took(readyAfter.cells)}, ` +
        `VirtualClusters (${virtualClusterNames.join(', ')}) Ready in ${took(readyAfter.virtualclusters)}`,
    );
    const pools = await kubectl(['get', 'gpucellpools', '-o', 'wide']);
    console.log(
      `      GPUCellPools then (not checked here):\n${pools.stdout.replace(/^/gm, '        ')}`,
    );

    expect(
      readyAfter.cells,
      `sample Cells not all Ready:\n${last.cells.map(describeStatus).join('\n')}`,
    ).to.not.equal(undefined);
    expect(
      readyAfter.virtualclusters,
      `sample VirtualClusters not all Ready:\n${last.virtualclusters.map(describeStatus).join('\n')}`,
    ).to.not.equal(undefined);
    expect(last.cells.map((cell) => cell.metadata.name).sort()).to.deep.equal(cellNames);
    expect(last.virtualclusters.map((vc) => vc.metadata.name).sort()).to.deep.equal(
      virtualClusterNames,
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

  it('local-down stops every process it started, the simulation included, and removes the state', async function () {
    this.timeout(120_000);
    requireUp();
    const down = await runScript('scripts/local/down.ts', localDir, 90_000);
    expect(down.code, output(down)).to.equal(0);
    expect(down.stdout).to.include('no process of it is left');
    expect(down.stdout).to.include(
      'The simulation (--simulate: test/simulate/) ran inside the supervisor',
    );
    expect(down.stdout, 'nothing should have needed SIGKILL').to.not.include('had to kill');
    expect(isAlive(state.supervisorPid), `supervisor ${state.supervisorPid}`).to.equal(false);
    for (const [name, recorded] of Object.entries(state.processes)) {
      expect(isAlive(recorded.pid), `${name} (pid ${recorded.pid})`).to.equal(false);
    }
    expect(existsSync(stateFile), stateFile).to.equal(false);
    expect(existsSync(kubeconfig), kubeconfig).to.equal(false);
    if (state.dir !== undefined) expect(existsSync(state.dir), state.dir).to.equal(false);
    // The supervisor stopped the simulation first, then the servers (its log stays).
    const log = readFileSync(path.join(localDir, 'supervisor.log'), 'utf8');
    const simulationStopped = log.indexOf('simulation stopped');
    expect(simulationStopped, log).to.be.greaterThan(-1);
    expect(log.indexOf('hook server, Metacontroller and control plane stopped')).to.be.greaterThan(
      simulationStopped,
    );
  });

  it('local-down again says it is not running and succeeds', async function () {
    this.timeout(60_000);
    const again = await runScript('scripts/local/down.ts', localDir, 60_000);
    expect(again.code, output(again)).to.equal(0);
    expect(again.stdout).to.include('not running');
  });
});
