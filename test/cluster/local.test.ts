// `npm run local-up -- --simulate` / `npm run local-down` (scripts/local/): the local KubeCell to
// try by hand, with the simulated outside world of harness/simulate/. Runs the two scripts as a user
// would, in a state directory of its own (KUBECELL_LOCAL_DIR), so that neither a developer's
// running instance nor the shared test cluster is touched: local-up starts its own control plane
// on free ports. Then `kubectl apply -f samples/` must give Ready sample Cells and VirtualClusters
// (how long that took is printed, not asserted), and each Cell's ManagedCluster must be what
// local-up printed it made in place of OCM's registration.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { isAlive } from '../../harness/cluster/processes.js';
import { REASONS } from '../../hooks/cell/reasons.js';
import { DEFAULT_LEASE_DURATION_SECONDS } from '../../harness/simulate/ocm.js';
import {
  AVAILABLE_CONDITION,
  HUB_ACCEPTED_CONDITION,
  MANAGED_CLUSTER_LEASE,
  OCM_AGENT_FIELD_MANAGER,
  OCM_HUB_FIELD_MANAGER,
  type KubeObject,
  type ManagedClusterObject,
} from '../../harness/simulate/index.js';
import {
  expectAllReady,
  localInstance,
  namesOfKind,
  output,
  runScript,
  took,
} from './local-scripts.js';
import { repoRoot } from '../../harness/cluster/paths.js';
import { httpGet } from '../../harness/cluster/readiness.js';

/** Where the summary sends a user to register the hub with OCM's tools. */
const REGISTER_HUB_DOC = 'docs/operations.md#register-the-hub-as-a-managedcluster';

/** The ManagedCluster the samples' Local Cell names (spec.managedClusterRef.name). */
const SAMPLE_MANAGED_CLUSTER = 'cell1';

/** How long the sample Cells and VirtualClusters may take to become Ready (not a timed check). */
const READY_WAIT_MS = 120_000;

/** metadata.name of every object of `kind` in samples/. */
function sampleNames(kind: string): string[] {
  const samplesDir = path.join(repoRoot, 'samples');
  return namesOfKind(
    kind,
    readdirSync(samplesDir)
      .filter((file) => /\.ya?ml$/.test(file))
      .map((file) => path.join(samplesDir, file)),
  );
}

/** The commands local-up prints under "# Try it:", as a user would copy them. */
function tryItCommands(stdout: string): string[] {
  const lines = stdout.split('\n');
  const start = lines.indexOf('# Try it:');
  expect(start, stdout).to.be.greaterThan(-1);
  const commands: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const command = /^# {3}(kubectl .*)$/.exec(line)?.[1];
    if (command === undefined) break;
    commands.push(command);
  }
  return commands;
}

/** Runs `command` with bash, as a user's shell would. */
function runShell(
  command: string,
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', command], { ...options, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('npm run local-up -- --simulate / local-down', function () {
  const local = localInstance(['--simulate'], 'kubecell-local-test-');

  it('refuses an unknown argument with its usage (exit 2)', async function () {
    this.timeout(60_000);
    await local.expectRefused(['--simulated'], 'unknown argument: --simulated');
  });

  it('starts and prints the KUBECONFIG to export, what runs and what is simulated', function () {
    const { up, state, kubeconfig } = local;
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
      'SIMULATED (--simulate): harness/simulate/, the same code the cluster tests use',
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
    // What it does in place of OCM's registration of the Cells' ManagedClusters, with the link
    // to the docs that register the hub with OCM's tools (issue 26, must 2; the whole text is
    // scripts/local/summary.test.ts's).
    expect(up.stdout).to.include(
      `# ManagedClusters of the Cells: SIMULATED, not registered by OCM`,
    );
    expect(up.stdout).to.include(
      `true, spec.leaseDurationSeconds ${DEFAULT_LEASE_DURATION_SECONDS}) with its namespace`,
    );
    expect(up.stdout).to.include(
      `#   See them: kubectl get managedclusters; kubectl -n ${SAMPLE_MANAGED_CLUSTER} get lease`,
    );
    expect(up.stdout).to.include(REGISTER_HUB_DOC);
    expect(up.stdout).to.not.include(REASONS.ManagedClusterNotFound);
  });

  it('says in the supervisor log that the outside world is simulated', function () {
    local.requireUp();
    const log = local.supervisorLog();
    expect(log).to.include('SIMULATED (--simulate): harness/simulate/');
    expect(log).to.include('simulation running');
    expect(log).to.include('[SIMULATED] provider baseline installed');
    expect(log).to.match(
      /ready in .* the outside world \(OCM, kubelets, k3k, KubeVirt, Cluster API\) is SIMULATED/,
    );
  });

  it('answers on the hook server', async function () {
    this.timeout(30_000);
    local.requireUp();
    const healthz = await httpGet(`${local.state.hookServerUrl}/healthz`);
    expect(healthz.status, healthz.body).to.equal(200);
  });

  it('applied metacontroller/ with the hooks pointing at the local hook server', async function () {
    this.timeout(60_000);
    local.requireUp();
    const { state } = local;
    const listed = await local.kubectl([
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

  it('runs the commands it prints under "Try it"; every sample plan is Accepted, every Cell, VirtualCluster and GPUCellPool Ready', async function () {
    this.timeout(READY_WAIT_MS + 180_000);
    local.requireUp();
    const commands = tryItCommands(local.up.stdout);
    expect(commands[0], local.up.stdout).to.equal('kubectl apply -f samples/');
    const applyStarted = performance.now();
    // As a user would: from the repository, KUBECONFIG exported, the printed kubectl first on
    // PATH (the summary names it: the one matching this cluster).
    for (const command of commands) {
      const ran = await runShell(command, {
        cwd: repoRoot,
        env: {
          ...process.env,
          KUBECONFIG: local.kubeconfig,
          PATH: `${path.dirname(local.binaries.kubectl)}${path.delimiter}${process.env['PATH'] ?? ''}`,
        },
      });
      expect(ran.code, `${command}\n${ran.stdout}\n${ran.stderr}`).to.equal(0);
    }

    const [cells, virtualClusters, pools] = await local.waitUntilReady(
      [
        { resource: 'cells', label: 'Cells', names: sampleNames('Cell') },
        {
          resource: 'virtualclusters',
          label: 'VirtualClusters',
          names: sampleNames('VirtualCluster'),
        },
        { resource: 'gpucellpools', label: 'GPUCellPools', names: sampleNames('GPUCellPool') },
      ],
      applyStarted,
      READY_WAIT_MS,
    );
    // Printed for the README and for whoever reads the run; how long it takes is not asserted.
    console.log(
      `      local-up --simulate started in ${local.state.startupSeconds?.toFixed(1) ?? '?'} s; ` +
        `after kubectl apply -f samples/: Cells (${cells!.names.join(', ')}) Ready in ${took(cells!, READY_WAIT_MS)}, ` +
        `VirtualClusters (${virtualClusters!.names.join(', ')}) Ready in ${took(virtualClusters!, READY_WAIT_MS)}, ` +
        `GPUCellPools (${pools!.names.join(', ')}) Ready in ${took(pools!, READY_WAIT_MS)}`,
    );
    expectAllReady([cells!, virtualClusters!, pools!]);

    // Plans are applied before their VirtualClusters and may be evaluated before their Cell has
    // a status: Unknown then, evaluated again when it has one (D40). Each must conclude Accepted.
    const planNames = sampleNames('VirtualClusterPlan');
    expect(planNames.length).to.be.greaterThan(0);
    let decisions: Record<string, string> = {};
    const deadline = performance.now() + READY_WAIT_MS;
    while (performance.now() < deadline) {
      const listed = await local.kubectl(['get', 'virtualclusterplans', '-A', '-o', 'json']);
      expect(listed.code, output(listed)).to.equal(0);
      const items = (
        JSON.parse(listed.stdout) as {
          items: {
            metadata: { name: string };
            status?: { decision?: string; checks?: { result: string; reason: string }[] };
          }[];
        }
      ).items;
      // The decision, and the reasons of the checks that did not pass (to read a failure).
      decisions = Object.fromEntries(
        items.map((plan) => {
          const open = (plan.status?.checks ?? []).filter((check) => check.result !== 'Pass');
          const why = open.map((check) => `${check.result} ${check.reason}`).join(', ');
          return [
            plan.metadata.name,
            `${plan.status?.decision ?? '(none)'}${why ? `: ${why}` : ''}`,
          ];
        }),
      );
      if (planNames.every((name) => decisions[name] === 'Accepted')) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    expect(decisions).to.deep.equal(
      Object.fromEntries(planNames.map((name) => [name, 'Accepted'])),
    );
  });

  it(`made each Cell's ManagedCluster as it printed: accepted, joined, its lease renewed, by the simulation`, async function () {
    this.timeout(60_000);
    local.requireUp();
    const json = async <T>(args: string[]): Promise<T> => {
      const result = await local.kubectl([...args, '-o', 'json']);
      expect(result.code, output(result)).to.equal(0);
      return JSON.parse(result.stdout) as T;
    };
    const cells = await json<{ items: { spec: { managedClusterRef: { name: string } } }[] }>([
      'get',
      'cells',
      '-n',
      'kubecell-system',
    ]);
    const named = [...new Set(cells.items.map((cell) => cell.spec.managedClusterRef.name))].sort();
    expect(named).to.include(SAMPLE_MANAGED_CLUSTER);
    type Stored = ManagedClusterObject & { metadata: { managedFields?: { manager: string }[] } };
    const clusters = await json<{ items: Stored[] }>([
      'get',
      'managedclusters',
      '--show-managed-fields',
    ]);
    expect(clusters.items.map((cluster) => cluster.metadata.name).sort()).to.deep.equal(named);
    for (const cluster of clusters.items) {
      const name = cluster.metadata.name ?? '';
      expect(cluster.spec?.hubAcceptsClient, name).to.equal(true);
      expect(cluster.spec?.leaseDurationSeconds, name).to.equal(DEFAULT_LEASE_DURATION_SECONDS);
      for (const type of [HUB_ACCEPTED_CONDITION, 'ManagedClusterJoined', AVAILABLE_CONDITION]) {
        const condition = cluster.status?.conditions?.find((candidate) => candidate.type === type);
        expect(condition?.status, `${name} ${type}`).to.equal('True');
      }
      // Written by the simulation's field managers: no klusterlet or clusteradm registered it.
      const managers = (cluster.metadata.managedFields ?? []).map((field) => field.manager);
      expect(managers, name).to.include.members([OCM_AGENT_FIELD_MANAGER, OCM_HUB_FIELD_MANAGER]);
      const lease = await json<KubeObject & { spec?: { renewTime?: string } }>([
        'get',
        'lease',
        MANAGED_CLUSTER_LEASE,
        '-n',
        name,
      ]);
      const renewed = Date.parse(lease.spec?.renewTime ?? '');
      // Renewed every lease duration (OCM's default, local-up's): the last renewal is within two.
      expect(Date.now() - renewed, `${name} renewTime ${lease.spec?.renewTime}`).to.be.lessThan(
        2 * DEFAULT_LEASE_DURATION_SECONDS * 1000,
      );
    }
  });

  it('refuses to start a second instance and says how to stop the first', async function () {
    this.timeout(120_000);
    local.requireUp();
    const second = await runScript('scripts/local/up.ts', local.localDir, 60_000);
    expect(second.code, output(second)).to.equal(1);
    expect(second.stderr).to.include('already running');
    expect(second.stderr).to.include('npm run local-down');
    expect(isAlive(local.state.supervisorPid)).to.equal(true);
  });

  it('local-down stops every process it started, the simulation included, and removes the state', async function () {
    this.timeout(120_000);
    local.requireUp();
    const down = await local.expectDownStopsAll();
    expect(down.stdout).to.include(
      'The simulation (--simulate: harness/simulate/) ran inside the supervisor',
    );
    // The supervisor stopped the simulation first, then the servers (its log stays).
    const log = local.supervisorLog();
    const simulationStopped = log.indexOf('simulation stopped');
    expect(simulationStopped, log).to.be.greaterThan(-1);
    expect(log.indexOf('hook server, Metacontroller and control plane stopped')).to.be.greaterThan(
      simulationStopped,
    );
  });

  it('local-down again says it is not running and succeeds', async function () {
    this.timeout(60_000);
    await local.expectDownAgainNotRunning();
  });
});
