/**
 * The idle cost of a quiet cluster, through the real Metacontroller (issues 14 and 24).
 *
 * For each point (N profile Nodes, M VirtualClusters, a lease period, a pod churn rate:
 * bench/idle-cases.ts), in a fresh stack of its own (harness/cluster/kubecell-stack.ts: etcd,
 * kube-apiserver, kube-controller-manager, KubeCell's CRDs, RBAC, hook server and admission
 * webhook, Metacontroller v4.17.2 with server-side apply and its client-go rate limit raised as the
 * README's install section recommends, KubeCell's controllers without the GPUCellPool ones):
 *
 * 1. the simulated outside world (harness/simulate): the provider baseline, the Cell's
 *    ManagedCluster joined with spec.leaseDurationSeconds = the point's lease period and its lease
 *    renewed at that interval (as OCM's agent renews it: ocm v1.3.1
 *    pkg/registration/spoke/lease/lease_controller.go), N Ready Nodes of the Cell's machine
 *    profile, and k3k;
 * 2. one Cell (waited for until Ready), one VirtualNodeClass, M host namespaces and M
 *    VirtualClusters, one per namespace (waited for until all are Ready);
 * 3. the steady state: Metacontroller restarted once (KubeCellStack.restartMetacontroller).
 *    It caches each parent's customize answer for 20 minutes per UID and generation
 *    (pkg/controller/common/customize/manager.go), so VirtualClusters created a moment ago would
 *    still relate what they asked for before they were resolved (the Cell itself) for 20 minutes;
 *    after the restart every VirtualCluster asks again and gets the rules it keeps for good (the
 *    Cell's liveness record, not the Cell). Then the pod churn starts, if the point has one
 *    (bench/idle-churn.ts: pods created, set Running and deleted on the profile Nodes);
 * 4. convergence: the VirtualCluster sync rate, in slices of `sliceSeconds`, until two slices in a
 *    row agree (or `settleMaxSeconds` have passed: then the point says it did not settle);
 * 5. the window (`windowSeconds`): the hook server's `kubecell_hook_requests_total` and
 *    `kubecell_hook_request_bytes` (`_sum`, `_count`) per controller and hook, Metacontroller's
 *    requests and work queue, the processes' CPU time; watches on everything a VirtualCluster
 *    relates to (the Cell's liveness record among them), on the Cell (its writes, by
 *    resourceVersion) and its Lease, and the hook server's log of each call, to tell what each
 *    VirtualCluster sync followed; at the end the stored Cell (GET as JSON, managedFields
 *    included); then the churn stops;
 * 6. the quiet window (`quietSeconds`, optional): lease renewals paused, so nothing outside
 *    changes: what the cluster costs on its own resyncs alone. Only where the lease stays fresh
 *    throughout (KubeCell allows 5 lease durations), so not at a 10-s lease;
 * 7. the annotation probe: one VirtualCluster annotated, the size of the sync requests that follow
 *    (a steady-state cluster may sync no VirtualCluster at all in the window).
 */
import { execFileSync } from 'node:child_process';
import {
  cellManifest,
  hostNamespaceManifest,
  virtualClusterManifest,
  virtualNodeClassManifest,
} from '../harness/manifests.js';
import { startKubeCellStack, type KubeCellStack } from '../harness/cluster/kubecell-stack.js';
import {
  KubeClient,
  resourcePath,
  startSimulation,
  type Simulation,
} from '../harness/simulate/index.js';
import { readPinnedVersions } from '../harness/cluster/versions.js';
import { adminConnection, type AdminConnection } from './watch.js';
import { flagValues } from './metacontroller-log.js';
import { processCpu, type FlagSetResult } from './metacontroller.js';
import { round } from './stats.js';
import { sleep } from '../harness/poll.js';
import {
  allVirtualClustersReady,
  bytesOf,
  finishWindow,
  managedFieldsOf,
  probeVirtualClusterSync,
  settleSyncRate,
  startWindow,
  storedCell,
} from './idle-metrics.js';
import { ChangeLog, attribute, hookCallLines } from './idle-changes.js';
import { caseName, type IdleCase, type IdlePoint } from './idle-cases.js';
import { PodChurn } from './idle-churn.js';
import type { IdleOptions, IdlePointResult, IdleResult, StoredSizes } from './idle-results.js';
import { cellWritesOf, measureQuiet, restartForSteadyState, STEADY_STATE } from './idle-steady.js';
import { REPO_ROOT } from './processes.js';
import { kb } from './report.js';
import { untilCellReady, type BenchWorldNames } from './world.js';

/**
 * Metacontroller's client-go rate limit raised as the README recommends for more than a few
 * VirtualClusters (its defaults, 5 QPS and burst 10, would pace the idle resyncs themselves and
 * hide their cost behind the queue); workers stay at its default, 5.
 */
export const IDLE_METACONTROLLER_ARGS = ['--client-go-qps=50', '--client-go-burst=100'];

const CELL_NAMESPACE = 'kubecell-system';
const CELL = 'idle-cell';
const PROFILE = 'idle-cpu';
const CLASS = 'idle-small';
const CLASS_ENTITLEMENT = { 'requests.cpu': '1', 'requests.memory': '2Gi', pods: '20' };
const VC_NAME = 'vc';
const USER_FIELD_MANAGER = 'bench-user';
/** The churn's pods: a namespace of their own, not a host namespace. */
const CHURN_NAMESPACE = 'idle-churn';

const WORLD: BenchWorldNames = {
  cellNamespace: CELL_NAMESPACE,
  cell: CELL,
  profile: PROFILE,
  klass: CLASS,
  entitlement: CLASS_ENTITLEMENT,
  virtualCluster: VC_NAME,
};

function namespaceName(index: number): string {
  return `idle-${String(index).padStart(3, '0')}`;
}

/** The Cell's label that the VirtualClusters choosing their Cell by selector select. */
const SELECTED_BY = { 'bench.kubecell.io/pool': 'idle' } as const;

/**
 * Every other VirtualCluster (odd index) chooses its Cell by `spec.cellSelector` (issue 29),
 * the others name it: both kinds idle side by side, and the probe measures one of each.
 */
function idleVirtualCluster(index: number, namespace: string) {
  const vc = virtualClusterManifest(namespace, WORLD.virtualCluster, {
    cell: WORLD.cell,
    klass: WORLD.klass,
  });
  if (index % 2 === 1) {
    vc.spec = {
      cellSelector: { matchLabels: { ...SELECTED_BY } },
      classRef: { name: WORLD.klass },
    };
  }
  return vc;
}

async function storedSizes(
  connection: AdminConnection,
  client: KubeClient,
  nodes: number,
): Promise<StoredSizes> {
  const stored = await storedCell(connection, { namespace: CELL_NAMESPACE, name: CELL }, nodes);
  const profileNodes = await client.list(resourcePath({ apiVersion: 'v1', resource: 'nodes' }), {
    labelSelector: `kubecell.io/machine-profile=${PROFILE}`,
  });
  const vcs = await client.list(
    resourcePath({ apiVersion: 'kubecell.io/v1alpha1', resource: 'virtualclusters' }),
    { labelSelector: `kubecell.io/cell=${CELL}` },
  );
  // List items lack apiVersion and kind for core kinds; an informer's copy has them.
  const nodeBytes = profileNodes.reduce((total, node) => total + bytesOf(node) + 26, 0);
  const nodeMf = profileNodes.reduce((total, node) => total + bytesOf(managedFieldsOf(node)), 0);
  const vcBytes = vcs.reduce((total, vc) => total + bytesOf(vc), 0);
  const vcMf = vcs.reduce((total, vc) => total + bytesOf(managedFieldsOf(vc)), 0);
  return {
    ...stored,
    nodeBytes: Math.round(nodeBytes / Math.max(1, profileNodes.length)),
    nodeManagedFieldsBytes: Math.round(nodeMf / Math.max(1, profileNodes.length)),
    virtualClusterBytes: Math.round(vcBytes / Math.max(1, vcs.length)),
    virtualClusterManagedFieldsBytes: Math.round(vcMf / Math.max(1, vcs.length)),
    virtualClusterRequestEstimate: {
      cellBytes: stored.cellBytes,
      nodesBytes: nodeBytes,
      virtualClustersBytes: vcBytes,
      managedFieldsBytes: stored.cellManagedFieldsBytes + nodeMf + vcMf,
    },
  };
}

// --- one point ---

function hooksUncommitted(): string[] {
  try {
    return execFileSync('git', ['status', '--porcelain', '--', 'hooks'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((line) => line.trim() !== '');
  } catch {
    return [];
  }
}

interface PointContext {
  stack: KubeCellStack;
  client: KubeClient;
  connection: AdminConnection;
  simulation: Simulation;
  changes: ChangeLog;
}

async function buildWorld(
  context: PointContext,
  point: IdlePoint,
  options: IdleOptions,
  result: IdlePointResult,
): Promise<void> {
  const { client, simulation, stack } = context;
  const log = (line: string) => options.log(`  ${line}`);
  const cellStart = Date.now();
  const cell = cellManifest(WORLD.cell, { namespace: WORLD.cellNamespace, profile: WORLD.profile });
  cell.metadata.labels = { ...SELECTED_BY };
  await client.apply(cell, USER_FIELD_MANAGER);
  await client.apply(virtualNodeClassManifest(WORLD.klass, WORLD.entitlement), USER_FIELD_MANAGER);
  await simulation.syncCells();
  log(`${point.nodes} Nodes registered (${((Date.now() - cellStart) / 1000).toFixed(1)} s)`);
  await untilCellReady(client, WORLD, 15 * 60_000);
  result.seconds.cellReady = round((Date.now() - cellStart) / 1000);
  log(`Cell Ready (${result.seconds.cellReady} s)`);

  const vcStart = Date.now();
  const namespaces = Array.from({ length: point.virtualClusters }, (_, i) => namespaceName(i));
  for (const namespace of namespaces) {
    await client.apply(hostNamespaceManifest(namespace), USER_FIELD_MANAGER);
  }
  for (const [index, namespace] of namespaces.entries()) {
    await client.create(
      resourcePath({ apiVersion: 'kubecell.io/v1alpha1', resource: 'virtualclusters', namespace }),
      idleVirtualCluster(index, namespace),
      USER_FIELD_MANAGER,
    );
  }
  log(
    `${point.virtualClusters} VirtualClusters created (${((Date.now() - vcStart) / 1000).toFixed(1)} s)`,
  );
  const waited = await allVirtualClustersReady(stack, client, {
    count: point.virtualClusters,
    timeoutSeconds: options.readyTimeoutSeconds,
    log,
  });
  if (waited.notAllReady !== undefined) result.notAllReady = waited.notAllReady;
  result.seconds.virtualClustersReady = round((Date.now() - vcStart) / 1000);
  log(
    `all ${point.virtualClusters} VirtualClusters Ready (${result.seconds.virtualClustersReady} s)`,
  );
}

async function settle(
  context: PointContext,
  point: IdlePoint,
  options: IdleOptions,
  result: IdlePointResult,
): Promise<void> {
  const settled = await settleSyncRate(context.stack, point.virtualClusters, options);
  result.settled = settled.settled;
  result.settleSlices = settled.slices;
  result.seconds.settle = settled.seconds;
}

async function measureWindow(
  context: PointContext,
  point: IdlePoint,
  options: IdleOptions,
  result: IdlePointResult,
): Promise<{ from: number; to: number; logFrom: number }> {
  const { stack } = context;
  const cpu = () => processCpu(stack);
  const start = await startWindow(stack, cpu);
  await sleep(options.windowSeconds * 1000);
  const { window, to } = await finishWindow(stack, start, cpu, {
    virtualClusters: point.virtualClusters,
    cells: 1,
  });
  result.window = window;
  result.seconds.window = window.seconds;
  return { from: start.at, to, logFrom: start.logFrom };
}

/** The pod churn of the point, its namespace ready; undefined when the point has none. */
async function preparedChurn(
  context: PointContext,
  point: IdleCase,
  options: IdleOptions,
): Promise<PodChurn | undefined> {
  if (point.churnPerSecond <= 0) return undefined;
  const churn = new PodChurn(context.client, {
    perSecond: point.churnPerSecond,
    keep: options.churnKeep,
    namespace: CHURN_NAMESPACE,
    nodes: context.simulation.profileNodes.get(PROFILE) ?? [],
    log: (line) => options.log(`  ${line}`),
  });
  await churn.prepare();
  return churn;
}

/** Steps 3 to 7 of the module comment, once the world is built. */
async function measurePoint(
  context: PointContext,
  point: IdleCase,
  options: IdleOptions,
  result: IdlePointResult,
): Promise<void> {
  const { stack, client, connection, changes } = context;
  result.seconds.restart = await restartForSteadyState(stack, (line) => options.log(`  ${line}`));
  const churn = await preparedChurn(context, point, options);
  churn?.start();
  changes.start();
  try {
    await settle(context, point, options, result);
    const window = await measureWindow(context, point, options, result);
    result.cellWrites = cellWritesOf(changes, { namespace: CELL_NAMESPACE, name: CELL }, window);
    result.stored = await storedSizes(connection, client, point.nodes);
    if (churn) result.churn = await churn.stop();
    const quiet = await measureQuiet(context, point, options, result);
    result.probe = await probeVirtualClusterSync(stack, client, {
      namespace: namespaceName(0),
      name: VC_NAME,
    });
    if (point.virtualClusters > 1) {
      result.probeSelector = await probeVirtualClusterSync(stack, client, {
        namespace: namespaceName(1),
        name: VC_NAME,
      });
    }
    const vcSyncs = hookCallLines(stack.hookServer.logFile, window.logFrom).filter(
      (call) => call.controller === 'virtualcluster' && call.hook === 'sync',
    );
    const quietSyncs = quiet && vcSyncs.filter((s) => s.start >= quiet.from && s.start < quiet.to);
    result.attribution = attribute(
      changes.changes,
      vcSyncs,
      window,
      quiet && quietSyncs ? { ...quiet, syncs: quietSyncs.length } : undefined,
    );
  } finally {
    if (churn && !result.churn) result.churn = await churn.stop();
  }
}

/** The simulated outside world of a point (harness/simulate). */
function simulateWorld(
  client: KubeClient,
  point: IdleCase,
  options: IdleOptions,
): Promise<Simulation> {
  return startSimulation(client, {
    // Cells are looked at when asked (buildWorld), not every second: listing a Cell of 500 Nodes
    // every second would load the apiserver during the window.
    intervalMs: 3_600_000,
    // OCM's agent renews every leaseDurationSeconds (lease_controller.go, module comment).
    ocm: {
      leaseDurationSeconds: point.leaseSeconds,
      renewIntervalMs: point.leaseSeconds * 1000,
    },
    profileNodes: { perProfile: point.nodes },
    k3k: { intervalMs: options.k3kIntervalMs },
    kubevirt: false,
    clusterAPI: false,
  });
}

/** A point's result before it is measured; says when the hook server runs uncommitted code. */
function newPointResult(point: IdleCase, log: (line: string) => void): IdlePointResult {
  const result: IdlePointResult = {
    ...point,
    seconds: {
      stackStart: 0,
      cellReady: 0,
      virtualClustersReady: 0,
      settle: 0,
      window: 0,
      quiet: 0,
      total: 0,
    },
    settled: false,
    settleSlices: [],
    hooksUncommitted: hooksUncommitted(),
  };
  if (result.hooksUncommitted.length > 0)
    log(
      `  note: hooks/ has uncommitted changes (${result.hooksUncommitted.length} files): the hook server runs them`,
    );
  return result;
}

async function runPoint(
  point: IdleCase,
  options: IdleOptions,
  effective: { value?: FlagSetResult['effective'] },
): Promise<IdlePointResult> {
  const { log } = options;
  const started = Date.now();
  const result = newPointResult(point, log);
  const stack = await startKubeCellStack({
    metacontrollerArgs: IDLE_METACONTROLLER_ARGS,
    provisioners: [],
    log: (line) => log(`  stack: ${line}`),
  });
  result.seconds.stackStart = round((Date.now() - started) / 1000);
  const client = new KubeClient(stack.cluster.kubeconfigPath, { maxSockets: 32 });
  const connection = adminConnection(stack.cluster.kubeconfigPath);
  const changes = new ChangeLog(
    connection,
    { cellNamespace: CELL_NAMESPACE, leaseNamespace: CELL },
    log,
  );
  let simulation: Simulation | undefined;
  try {
    effective.value = flagValues(stack.metacontroller.process.logFile);
    log(
      `  Metacontroller runs with ${IDLE_METACONTROLLER_ARGS.join(' ')} (raised from its defaults 5 and 10, as the README's install section recommends); it logged: ${JSON.stringify(effective.value ?? {})}`,
    );
    simulation = await simulateWorld(client, point, options);
    const context: PointContext = { stack, client, connection, simulation, changes };
    await buildWorld(context, point, options, result);
    await measurePoint(context, point, options, result);
  } catch (error) {
    result.error = error instanceof Error ? error.message : String(error);
    log(`  point failed: ${result.error}`);
  } finally {
    changes.stop();
    await simulation?.stop();
    client.close();
    connection.agent.destroy();
    await stack.stop({ keepLogs: result.error !== undefined });
  }
  result.seconds.total = round((Date.now() - started) / 1000);
  return result;
}

function summary(point: IdlePointResult): string {
  const w = point.window;
  const name = caseName({ leaseSeconds: NaN, churnPerSecond: 0, ...point });
  if (!w) return `${name}: ${point.error ?? 'no window'}`;
  const probe = point.probe && 'meanBytes' in point.probe ? point.probe.meanBytes : undefined;
  return (
    `${name}: ${w.virtualClusterSyncsPerVirtualClusterPerMinute} VC syncs/VC/min (goal ≤ 0.5), ` +
    `${kb(probe)} per VC sync request after an annotation (goal ≤ 64 KB; ${kb(w.bytesPerVirtualClusterSync)} in the window), ` +
    `${w.cellSyncsPerCellPerMinute} Cell syncs/min, ` +
    `${point.cellWrites?.statusPerMinute ?? '–'} Cell status writes/min, ` +
    `stored Cell ${kb(point.stored?.cellBytes)} = ${kb(point.stored?.cellBytesPerNode)} per Node (goal ≤ 0.6 KB), managedFields ${kb(point.stored?.cellManagedFieldsBytes)}, ` +
    `${point.churn ? `churn ${point.churn.createdPerSecond} pods/s created, ` : ''}` +
    `${point.settled ? 'settled' : 'NOT settled'}, point took ${(point.seconds.total / 60).toFixed(1)} min`
  );
}

export async function runIdleBenchmark(options: IdleOptions): Promise<IdleResult> {
  const versions = readPinnedVersions();
  let gitCommit: string | undefined;
  try {
    gitCommit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    }).trim();
  } catch {
    // not a git checkout
  }
  const result: IdleResult = {
    measured: false,
    label: options.label,
    date: new Date().toISOString(),
    ...(gitCommit === undefined ? {} : { gitCommit }),
    metacontrollerVersion: versions.metacontroller.version,
    metacontrollerArgs: [
      '--apply-strategy=server-side-apply',
      '--discovery-interval=2s',
      ...IDLE_METACONTROLLER_ARGS,
    ],
    steadyState: STEADY_STATE,
    setup: {
      windowSeconds: options.windowSeconds,
      quietSeconds: options.quietSeconds,
      sliceSeconds: options.sliceSeconds,
      settleMaxSeconds: options.settleMaxSeconds,
      readyTimeoutSeconds: options.readyTimeoutSeconds,
      k3kIntervalMs: options.k3kIntervalMs,
      churnKeep: options.churnKeep,
      classEntitlement: CLASS_ENTITLEMENT,
      nodeCapacity: 'harness/simulate defaults: 32 cpu, 256Gi memory, 110 pods, 1 TiB TopoLVM',
    },
    points: [],
  };
  for (const point of options.cases) {
    options.log(`idle (${options.label}): ${caseName(point)}, window ${options.windowSeconds} s`);
    const effective: { value?: FlagSetResult['effective'] } = {};
    const pointResult = await runPoint(point, options, effective);
    if (effective.value) result.effective = effective.value;
    result.points.push(pointResult);
    options.log(`idle: ${summary(pointResult)}`);
  }
  result.measured = result.points.some((point) => point.window !== undefined);
  return result;
}
