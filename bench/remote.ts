/**
 * Remote Cells through the real OCM (issue 18), measured in one run:
 *
 * 1. Local: a fresh stack (harness/cluster/kubecell-stack.ts, the simulated outside world of
 *    harness/simulate on the hub: the Cell's ManagedCluster is the hub itself, `delivery: Local`),
 *    one Cell with `localNodes` Nodes, then ONE VirtualCluster: apply → Ready, step by step.
 * 2. Remote: the harness's remote world (harness/remote-world.ts): a fresh hub with the real OCM
 *    hub (registration controller, work manager) and `clusters` managed control planes joined to
 *    it by OCM's real registration and work agents (ocm-managed.ts), with the intervals run.ts gives (lease 60 s and cluster health check 60 s:
 *    OCM's defaults; the work agent's status sync: what docs/remote-cells.md recommends). On each
 *    managed cluster harness/simulate registers `nodesPerCluster` Nodes of its own machine profile
 *    and plays k3k; a Cell with `delivery: ManifestWork` on each; the KubeCell cell agent runs on
 *    each exactly as its delivered Deployment says (harness/cell-agent/runner.ts runOnce: its
 *    command, environment, its ServiceAccount's token;
 *    KUBECELL_AGENT_INTERVAL_SECONDS unset, so its default 30 s, and its watches). Then ONE
 *    VirtualCluster on the first Cell, apply → Ready step by step (the work created on the hub,
 *    applied on the managed cluster, k3k served, the sealed kubeconfig written by the agent and
 *    fed back, Ready), the agent's passes and why each ran from its log.
 * 3. Idle, same remote world: `virtualClustersPerCluster` VirtualClusters on each Cell (the one of
 *    step 2 included); once all are Ready and the VirtualCluster sync rate settled, a window
 *    counted as bench/idle.ts counts (bench/idle-metrics.ts), per controller, `delivery`
 *    included, with watches on what changed (ManagedClusters, Cells, VirtualClusters,
 *    ManifestWorks, the clusters' Leases).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  cellManifest,
  hostNamespaceManifest,
  virtualNodeClassManifest,
} from '../harness/manifests.js';
import { virtualClusterWorkName } from '../hooks/remote/contract.js';
import { writeSealingKey } from '../harness/cluster/certs.js';
import { startKubeCellStack, type KubeCellStack } from '../harness/cluster/kubecell-stack.js';
import { whileRunning } from '../harness/cluster/processes.js';
import {
  agentDirIn,
  remoteStackOptions,
  startRemoteWorld,
  type RemoteCluster,
  type RemoteWorld,
  type RemoteWorldOptions,
} from '../harness/remote-world.js';
import { KubeClient, startSimulation, type Simulation } from '../harness/simulate/index.js';
import { IDLE_METACONTROLLER_ARGS } from './idle.js';
import { adminConnection, type AdminConnection } from './watch.js';
import { processCpu } from './metacontroller.js';
import { round } from './stats.js';
import { poll, PollTimeout, sleep } from '../harness/poll.js';
import { cpuMsOf } from './processes.js';
import {
  agentPasses,
  applyUntilReady,
  k3kClusterMilestones,
  sealedConfigMapMilestones,
  Timeline,
  virtualClusterMilestones,
  workMilestones,
  type Milestones,
} from './remote-timeline.js';
import { measureRemoteIdle, type RemoteIdle } from './remote-idle.js';
import { untilCellReady, type BenchWorldNames } from './world.js';

export interface RemoteOptions {
  clusters: number;
  nodesPerCluster: number;
  virtualClustersPerCluster: number;
  localNodes: number;
  windowSeconds: number;
  sliceSeconds: number;
  settleMaxSeconds: number;
  readyTimeoutSeconds: number;
  k3kIntervalMs: number;
  /** OCM's agents: spec.leaseDurationSeconds, --status-sync-interval, --cluster-healthcheck-period. */
  ocm: {
    leaseDurationSeconds: number;
    statusSyncIntervalSeconds: number;
    clusterHealthCheckPeriodSeconds: number;
  };
  log: (line: string) => void;
}

export interface ApplyToReady {
  /** Create answered → phase Ready seen on the watch. */
  seconds: number;
  /** Seconds after the create was answered at which each step was first seen. */
  milestones: Milestones;
  stackStartSeconds: number;
  cellReadySeconds: number;
}

export interface RemoteApplyToReady extends ApplyToReady {
  /** The cell agent's interval (its Deployment's environment, else the agent's default). */
  agentIntervalSeconds: number;
  /** Ends of the agent's passes, seconds after the create (from 1 interval before to Ready). */
  agentPasses: number[];
  /** Why each of those passes ran (`start`, `interval`, `watch`), in the same order. */
  agentPassTriggers?: string[];
  /** OCM's managed clusters and the cell agents: joined in (s). */
  joinSeconds: number[];
  /**
   * k3k served → the agent's pass wrote the sealed kubeconfig (its watch waking it, or its next
   * interval), → the work agent's status sync fed it back (waiting for its next sync), and
   * k3k served → VirtualCluster Ready, in seconds.
   */
  waits: { forAgentPass?: number; forStatusSync?: number; servedToReady?: number };
}

export interface RemoteResult {
  measured: boolean;
  date: string;
  metacontrollerArgs: string[];
  setup: Omit<RemoteOptions, 'log'>;
  local?: ApplyToReady;
  remote?: RemoteApplyToReady;
  /** remote.seconds ÷ local.seconds, same run. */
  ratio?: number;
  idle?: RemoteIdle;
  errors: string[];
  /** The hook server's code as it ran: uncommitted changes under hooks/ at the start. */
  hooksUncommitted: string[];
  totalSeconds: number;
}

const CELL_NAMESPACE = 'kubecell-system';
const CLASS = 'bench-small';
const CLASS_ENTITLEMENT = { 'requests.cpu': '1', 'requests.memory': '2Gi', pods: '20' };
const VC_NAME = 'vc';
const USER = 'bench-user';
const VIRTUALCLUSTERS = '/apis/kubecell.io/v1alpha1/virtualclusters';
const K3K_CLUSTERS = '/apis/k3k.io/v1beta1/clusters';

function worldNames(cell: string, profile: string): BenchWorldNames {
  return {
    cellNamespace: CELL_NAMESPACE,
    cell,
    profile,
    klass: CLASS,
    entitlement: CLASS_ENTITLEMENT,
    virtualCluster: VC_NAME,
  };
}

/** The host namespace on the hub, and (30 s at most) the host-namespace controller's baseline. */
async function hostNamespace(client: KubeClient, namespace: string): Promise<void> {
  await client.apply(hostNamespaceManifest(namespace), USER);
  await poll(
    `the baseline of host namespace ${namespace}`,
    async () => {
      const found = await client.find(`/api/v1/namespaces/${namespace}`);
      return found?.metadata.labels?.['pod-security.kubernetes.io/enforce'] === undefined
        ? { notYet: 'no Pod Security label' }
        : { value: true };
    },
    { timeoutMs: 30_000, intervalMs: 500 },
  ).catch((error: unknown) => {
    // Measured all the same: the VirtualCluster's own wait says whether it became Ready.
    if (!(error instanceof PollTimeout)) throw error;
  });
}

// --- 1. local ---

async function measureLocal(options: RemoteOptions): Promise<ApplyToReady> {
  const { log } = options;
  const started = Date.now();
  const stack = await startKubeCellStack({
    metacontrollerArgs: IDLE_METACONTROLLER_ARGS,
    provisioners: [],
    log: (line) => log(`  local stack: ${line}`),
  });
  const stackStartSeconds = round((Date.now() - started) / 1000);
  const client = new KubeClient(stack.cluster.kubeconfigPath, { maxSockets: 16 });
  const connection = adminConnection(stack.cluster.kubeconfigPath);
  const timeline = new Timeline();
  let simulation: Simulation | undefined;
  try {
    simulation = await startSimulation(client, {
      profileNodes: { perProfile: options.localNodes },
      k3k: { intervalMs: options.k3kIntervalMs },
      kubevirt: false,
      clusterAPI: false,
    });
    const world = worldNames('local-cell', 'local-cpu');
    const cellStart = Date.now();
    await client.apply(
      cellManifest(world.cell, { namespace: world.cellNamespace, profile: world.profile }),
      USER,
    );
    await client.apply(virtualNodeClassManifest(world.klass, world.entitlement), USER);
    await simulation.syncCells();
    await untilCellReady(client, world, 5 * 60_000);
    const cellReadySeconds = round((Date.now() - cellStart) / 1000);
    const namespace = 'local-000';
    await hostNamespace(client, namespace);
    timeline.watch(connection, VIRTUALCLUSTERS, virtualClusterMilestones(namespace, VC_NAME), log);
    timeline.watch(connection, K3K_CLUSTERS, k3kClusterMilestones(namespace, VC_NAME, 'hub'), log);
    await sleep(1000);
    const measured = await applyUntilReady(client, timeline, world, namespace, {
      ...(simulation.k3k ? { k3k: simulation.k3k } : {}),
      timeoutMs: 5 * 60_000,
    });
    return { ...measured, stackStartSeconds, cellReadySeconds };
  } finally {
    timeline.stop();
    await simulation?.stop();
    client.close();
    connection.agent.destroy();
    await stack.stop();
  }
}

// --- 2. the remote world ---

/** A managed cluster of the world, with what the benchmark applies and watches there. */
export interface MeasuredCluster extends RemoteCluster {
  world: BenchWorldNames;
  connection: AdminConnection;
  /** Prefix of its VirtualClusters' namespaces. */
  prefix: string;
}

/** The harness's remote world as the benchmark measures it. */
export interface RemoteRun {
  remote: RemoteWorld;
  stack: KubeCellStack;
  client: KubeClient;
  connection: AdminConnection;
  clusters: MeasuredCluster[];
  workDir: string;
  cpu: () => Record<string, number | undefined>;
}

function managedClusterName(index: number): string {
  return `cell-remote-${String.fromCharCode(97 + index)}`;
}

/** The names of cluster `name`'s Cell and machine profile, and its namespaces' prefix. */
function clusterNames(name: string): { world: BenchWorldNames; prefix: string } {
  const letter = name.slice(-1);
  return { world: worldNames(`remote-${letter}`, `remote-${letter}-cpu`), prefix: `r${letter}` };
}

function cpuReader(stack: KubeCellStack, clusters: MeasuredCluster[]) {
  return (): Record<string, number | undefined> => {
    const out: Record<string, number | undefined> = { ...processCpu(stack) };
    const hub = stack.ocm?.hub;
    out.ocmRegistrationController = cpuMsOf(hub?.registrationController.pid);
    out.ocmWorkManager = cpuMsOf(hub?.workManager.pid);
    for (const cluster of clusters) {
      const name = cluster.managed.name;
      const agents = cluster.managed.agents();
      out[`${name} registration agent`] = cpuMsOf(agents?.registration.pid);
      out[`${name} work agent`] = cpuMsOf(agents?.work.pid);
      out[`${name} cell agent`] = cpuMsOf(cluster.agent.process?.pid);
      out[`${name} apiserver + etcd`] =
        (cpuMsOf(cluster.managed.cluster.processes.kubeApiserver.pid) ?? NaN) +
        (cpuMsOf(cluster.managed.cluster.processes.etcd.pid) ?? NaN);
    }
    return out;
  };
}

/**
 * The hub and `clusters` managed clusters (OCM's intervals of run.ts), each with
 * `nodesPerCluster` Nodes of its own machine profile and k3k simulated, the cell agents not yet
 * running (remoteCells runs them once the Cells are applied).
 */
function remoteWorldOptions(options: RemoteOptions, workDir: string): RemoteWorldOptions {
  const clusters = Array.from({ length: options.clusters }, (_, index) => {
    const name = managedClusterName(index);
    const profile = clusterNames(name).world.profile;
    return { name, ocm: options.ocm, nodes: { profile, count: options.nodesPerCluster } };
  });
  const sealingKeyFile = path.join(workDir, 'sealing-key.pem');
  writeSealingKey(sealingKeyFile);
  return {
    clusters,
    sealingKeyFile,
    // A folder of its own per cluster: the agent's log file is named after the process.
    agentDir: agentDirIn(workDir),
    k3kIntervalMs: options.k3kIntervalMs,
    log: (cluster, source, line) => {
      if (source === 'ocm') options.log(`  ${cluster}: ${line}`);
    },
  };
}

async function startRemoteRun(options: RemoteOptions): Promise<RemoteRun> {
  const workDir = mkdtempSync(path.join(tmpdir(), 'kubecell-bench-remote-'));
  const worldOptions = remoteWorldOptions(options, workDir);
  const stack = await startKubeCellStack({
    metacontrollerArgs: IDLE_METACONTROLLER_ARGS,
    provisioners: [],
    ...remoteStackOptions(worldOptions),
    log: (line) => options.log(`  hub stack: ${line}`),
  });
  let remote: RemoteWorld;
  try {
    remote = await startRemoteWorld(stack, worldOptions);
  } catch (error) {
    await stack.stop();
    rmSync(workDir, { recursive: true, force: true });
    throw error;
  }
  const clusters = remote.clusters.map((cluster) => ({
    ...cluster,
    ...clusterNames(cluster.managed.name),
    connection: adminConnection(cluster.managed.cluster.kubeconfigPath),
  }));
  return {
    remote,
    stack,
    client: new KubeClient(stack.cluster.kubeconfigPath, { maxSockets: 32 }),
    connection: adminConnection(stack.cluster.kubeconfigPath),
    clusters,
    workDir,
    cpu: cpuReader(stack, clusters),
  };
}

async function stopRemoteRun(run: RemoteRun): Promise<void> {
  for (const cluster of run.clusters) cluster.connection.agent.destroy();
  await run.remote.stop();
  run.client.close();
  run.connection.agent.destroy();
  await run.stack.stop();
  rmSync(run.workDir, { recursive: true, force: true });
}

/** Each Cell applied, its agent run as delivered, every Cell Ready. */
async function remoteCells(run: RemoteRun, options: RemoteOptions): Promise<number> {
  const { stack, client } = run;
  const started = Date.now();
  await client.apply(
    virtualNodeClassManifest(run.clusters[0]!.world.klass, run.clusters[0]!.world.entitlement),
    USER,
  );
  for (const cluster of run.clusters) {
    await client.apply(
      cellManifest(cluster.world.cell, {
        namespace: cluster.world.cellNamespace,
        profile: cluster.world.profile,
        managedCluster: cluster.managed.name,
        delivery: 'ManifestWork',
      }),
      USER,
    );
  }
  for (const cluster of run.clusters) {
    await cluster.agent.runOnce({
      timeoutMs: 120_000,
      intervalMs: 300,
      ...whileRunning(stack.metacontroller.process, stack.hookServer),
    });
  }
  for (const cluster of run.clusters) await untilCellReady(client, cluster.world, 5 * 60_000);
  const seconds = round((Date.now() - started) / 1000);
  options.log(`  ${run.clusters.length} remote Cells Ready (${seconds} s)`);
  return seconds;
}

/** Delivered Deployment's KUBECELL_AGENT_INTERVAL_SECONDS, else the agent's default (30). */
async function agentInterval(cluster: MeasuredCluster): Promise<number> {
  const client = new KubeClient(cluster.managed.cluster.kubeconfigPath);
  try {
    const deployment = await client.find(
      '/apis/apps/v1/namespaces/kubecell-system/deployments/kubecell-cell-agent',
    );
    const env = (
      deployment as { spec?: { template?: { spec?: { containers?: { env?: unknown[] }[] } } } }
    )?.spec?.template?.spec?.containers?.[0]?.env as { name: string; value?: string }[] | undefined;
    const value = env?.find((entry) => entry.name === 'KUBECELL_AGENT_INTERVAL_SECONDS')?.value;
    return value === undefined ? 30 : Number(value);
  } finally {
    client.close();
  }
}

function waitsOf(milestones: Milestones): RemoteApplyToReady['waits'] {
  const served = milestones['k3k served (simulated k3k)'];
  const sealed = milestones['sealed kubeconfig written by the cell agent (managed)'];
  const fedBack = milestones['sealed kubeconfig fed back (hub)'];
  const ready = milestones['VirtualCluster Ready (hub)'];
  return {
    ...(served !== undefined && ready !== undefined
      ? { servedToReady: round(ready - served, 2) }
      : {}),
    ...(served !== undefined && sealed !== undefined
      ? { forAgentPass: round(sealed - served, 2) }
      : {}),
    ...(sealed !== undefined && fedBack !== undefined
      ? { forStatusSync: round(fedBack - sealed, 2) }
      : {}),
  };
}

async function measureRemoteApply(
  run: RemoteRun,
  options: RemoteOptions,
  base: { stackStartSeconds: number; cellReadySeconds: number },
): Promise<RemoteApplyToReady> {
  const { client, connection } = run;
  const cluster = run.clusters[0]!;
  const namespace = `${cluster.prefix}-000`;
  const timeline = new Timeline();
  let uid: string | undefined;
  const log = options.log;
  try {
    await hostNamespace(client, namespace);
    const workPath = `/apis/work.open-cluster-management.io/v1/namespaces/${cluster.managed.name}/manifestworks`;
    timeline.watch(connection, VIRTUALCLUSTERS, virtualClusterMilestones(namespace, VC_NAME), log);
    timeline.watch(
      connection,
      workPath,
      workMilestones(() => (uid ? virtualClusterWorkName(uid) : undefined)),
      log,
    );
    timeline.watch(
      cluster.connection,
      K3K_CLUSTERS,
      k3kClusterMilestones(namespace, VC_NAME, 'managed'),
      log,
    );
    timeline.watch(
      cluster.connection,
      `/api/v1/namespaces/${namespace}/configmaps`,
      sealedConfigMapMilestones(namespace, `kubecell-${VC_NAME}-sealed-kubeconfig`),
      log,
    );
    await sleep(1000);
    const measured = await applyUntilReady(client, timeline, cluster.world, namespace, {
      ...(cluster.simulation.k3k ? { k3k: cluster.simulation.k3k } : {}),
      timeoutMs: 5 * 60_000,
      onCreated: (created) => (uid = created),
    });
    const interval = await agentInterval(cluster);
    const agentLog = cluster.agent.process?.logFile;
    const passes = agentLog ? agentPasses(agentLog) : [];
    const readyAt = measured.appliedAt + measured.seconds * 1000;
    const around = passes.filter(
      (p) => p.at >= measured.appliedAt - interval * 1000 - 5000 && p.at <= readyAt,
    );
    return {
      ...measured,
      ...base,
      agentIntervalSeconds: interval,
      agentPasses: around.map((p) => round((p.at - measured.appliedAt) / 1000, 2)),
      agentPassTriggers: around.map((p) => p.trigger ?? 'unknown'),
      joinSeconds: run.clusters.map((c) => round(c.managed.joinSeconds)),
      waits: waitsOf(measured.milestones),
    };
  } finally {
    timeline.stop();
  }
}

// --- the run ---

function hooksUncommitted(): string[] {
  try {
    return execGit(['status', '--porcelain', '--', 'hooks'])
      .split('\n')
      .filter((line) => line.trim() !== '');
  } catch {
    return [];
  }
}

function execGit(args: string[]): string {
  return execFileSync('git', args, { encoding: 'utf8' });
}

async function runRemote(options: RemoteOptions, result: RemoteResult): Promise<void> {
  const started = Date.now();
  const run = await startRemoteRun(options);
  try {
    const stackStartSeconds = round((Date.now() - started) / 1000);
    options.log(`  hub and ${options.clusters} managed clusters up (${stackStartSeconds} s)`);
    const cellReadySeconds = await remoteCells(run, options);
    result.remote = await measureRemoteApply(run, options, {
      stackStartSeconds,
      cellReadySeconds,
    });
    options.log(`remote: apply → Ready ${result.remote.seconds} s`);
    result.idle = await measureRemoteIdle(run, options);
  } finally {
    await stopRemoteRun(run);
  }
}

export async function runRemoteBenchmark(options: RemoteOptions): Promise<RemoteResult> {
  const started = Date.now();
  const { log, ...setup } = options;
  const result: RemoteResult = {
    measured: false,
    date: new Date().toISOString(),
    metacontrollerArgs: [
      '--apply-strategy=server-side-apply',
      '--discovery-interval=2s',
      ...IDLE_METACONTROLLER_ARGS,
    ],
    setup,
    errors: [],
    hooksUncommitted: hooksUncommitted(),
    totalSeconds: 0,
  };
  log('remote: local Cell first (the hub itself, simulated OCM)');
  try {
    result.local = await measureLocal(options);
    log(`remote: local apply → Ready ${result.local.seconds} s`);
  } catch (error) {
    result.errors.push(`local: ${error instanceof Error ? error.message : String(error)}`);
  }
  log(`remote: ${options.clusters} managed clusters through the real OCM hub and agents`);
  try {
    await runRemote(options, result);
  } catch (error) {
    result.errors.push(`remote: ${error instanceof Error ? error.message : String(error)}`);
    log(`remote failed: ${result.errors[result.errors.length - 1]}`);
  }
  if (result.local && result.remote)
    result.ratio = round(result.remote.seconds / result.local.seconds, 2);
  result.measured = result.local !== undefined || result.remote !== undefined;
  result.totalSeconds = round((Date.now() - started) / 1000);
  return result;
}
