/**
 * The idle cost of a quiet cluster, through the real Metacontroller (issue 14).
 *
 * For each point (N profile Nodes, M VirtualClusters), in a fresh stack of its own
 * (test/cluster/kubecell-stack.ts: etcd, kube-apiserver, kube-controller-manager, KubeCell's CRDs,
 * RBAC, hook server and admission webhook, Metacontroller v4.17.2 with server-side apply and its
 * client-go rate limit raised as the README's install section recommends, KubeCell's controllers
 * without the GPUCellPool ones):
 *
 * 1. the simulated outside world (test/simulate): the provider baseline, the Cell's
 *    ManagedCluster joined with its lease renewed every `leaseRenewSeconds` (10 s: as often as
 *    Kubernetes' own node leases), N Ready Nodes of the Cell's machine profile, and k3k;
 * 2. one Cell (waited for until Ready), one VirtualNodeClass, M host namespaces and M
 *    VirtualClusters, one per namespace (waited for until all are Ready);
 * 3. convergence: the VirtualCluster sync rate, in slices of `sliceSeconds`, until two slices in a
 *    row agree (or `settleMaxSeconds` have passed: then the point says it did not settle);
 * 4. the window (`windowSeconds`): the hook server's `kubecell_hook_requests_total` and
 *    `kubecell_hook_request_bytes` (`_sum`, `_count`) per controller and hook, Metacontroller's
 *    requests and work queue, the processes' CPU time; watches on everything a VirtualCluster
 *    relates to, and the hook server's log of each call, to tell what each VirtualCluster sync
 *    followed; at the end the stored Cell (GET as JSON, managedFields included) and the sizes of
 *    the objects a VirtualCluster sync request carries;
 * 5. the quiet window (`quietSeconds`, optional): lease renewals paused (the lease stays fresh:
 *    KubeCell allows 5 lease durations), so nothing outside changes: what the cluster costs on
 *    its own resyncs alone.
 */
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { startKubeCellStack, type KubeCellStack } from '../test/cluster/kubecell-stack.js';
import {
  KubeClient,
  resourcePath,
  startSimulation,
  type Simulation,
} from '../test/simulate/index.js';
import {
  adminConnection,
  difference,
  flagValues,
  hookCallsOf,
  processCpu,
  round,
  scrape,
  sleep,
  sum,
  type AdminConnection,
  type FlagSetResult,
} from './metacontroller.js';
import {
  allVirtualClustersReady,
  bytesOf,
  cpuPerMinute,
  finishWindow,
  managedFieldsOf,
  perControllerOf,
  probeVirtualClusterSync,
  settleSyncRate,
  startWindow,
  storedCell,
  VC_QUEUE,
  type ControllerCost,
  type StoredCell,
  type WindowFigures,
} from './idle-metrics.js';
import { ChangeLog, attribute, hookCallLines, type Attribution } from './idle-changes.js';
import { REPO_ROOT } from './processes.js';
import {
  cellObject,
  classObject,
  hostNamespaceObject,
  untilCellReady,
  virtualClusterObject,
  type BenchWorldNames,
} from './world.js';

export interface IdlePoint {
  nodes: number;
  virtualClusters: number;
}

/**
 * Metacontroller's client-go rate limit raised as the README recommends for more than a few
 * VirtualClusters (its defaults, 5 QPS and burst 10, would pace the idle resyncs themselves and
 * hide their cost behind the queue); workers stay at its default, 5.
 */
export const IDLE_METACONTROLLER_ARGS = ['--client-go-qps=50', '--client-go-burst=100'];

export interface IdleOptions {
  points: IdlePoint[];
  windowSeconds: number;
  /** 0: no quiet window. */
  quietSeconds: number;
  leaseRenewSeconds: number;
  leaseDurationSeconds: number;
  sliceSeconds: number;
  settleMaxSeconds: number;
  /** Longest wait for every VirtualCluster to be Ready; then the point is measured anyway. */
  readyTimeoutSeconds: number;
  k3kIntervalMs: number;
  /** "before" or "after" the design change of issue 14. */
  label: string;
  log: (line: string) => void;
}

export interface StoredSizes extends StoredCell {
  /** One profile Node (mean), and the share of its managedFields. */
  nodeBytes: number;
  nodeManagedFieldsBytes: number;
  /** One VirtualCluster (mean), and the share of its managedFields. */
  virtualClusterBytes: number;
  virtualClusterManagedFieldsBytes: number;
  /**
   * What a VirtualCluster sync request carries, estimated from the objects as stored: the Cell,
   * every profile Node, every VirtualCluster of the Cell; the rest (the class, the namespace, the
   * kubeconfig Secret, the children, the parent) is the measured mean minus these.
   */
  virtualClusterRequestEstimate: {
    cellBytes: number;
    nodesBytes: number;
    virtualClustersBytes: number;
    managedFieldsBytes: number;
  };
}

export interface QuietFigures {
  seconds: number;
  /** From pausing the renewals until Metacontroller's Cell and VirtualCluster queues were empty. */
  drainSeconds: number;
  virtualClusterSyncsPerVirtualClusterPerMinute: number;
  cellSyncsPerCellPerMinute: number;
  /** Cell writes seen on the watch. */
  cellWrites: number;
  perController: Record<string, ControllerCost>;
  cpuSecondsPerMinute: Record<string, number>;
}

export interface IdlePointResult extends IdlePoint {
  /** Set when the point failed; the other figures may then be missing. */
  error?: string;
  seconds: {
    stackStart: number;
    /** Cell applied → Cell Ready (the N Nodes registered meanwhile). */
    cellReady: number;
    /** First namespace applied → all M VirtualClusters Ready. */
    virtualClustersReady: number;
    settle: number;
    window: number;
    quiet: number;
    /** The whole point, stack start to stop. */
    total: number;
  };
  /** Set when not every VirtualCluster was Ready within readyTimeoutSeconds: the phases then. */
  notAllReady?: string;
  /** Two slices in a row agreed before settleMaxSeconds. */
  settled: boolean;
  /** VirtualCluster syncs per VirtualCluster per minute in each slice of the convergence wait. */
  settleSlices: number[];
  window?: WindowFigures;
  quiet?: QuietFigures;
  /**
   * After the windows, one VirtualCluster annotated (a change it must be synced for): the
   * virtualcluster/sync requests that followed within 5 s of the first, and their mean size.
   * The request size when a quiet cluster syncs no VirtualCluster at all.
   */
  probe?: { syncs: number; meanBytes: number } | { error: string };
  stored?: StoredSizes;
  attribution?: Attribution;
  /** The hook server's code as it ran: uncommitted changes under hooks/ at the point's start. */
  hooksUncommitted: string[];
}

export interface IdleResult {
  measured: boolean;
  label: string;
  date: string;
  gitCommit?: string;
  metacontrollerVersion: string;
  metacontrollerArgs: string[];
  /** What Metacontroller logged it ran with ("Configuration information"). */
  effective?: FlagSetResult['effective'];
  setup: {
    leaseRenewSeconds: number;
    leaseDurationSeconds: number;
    windowSeconds: number;
    quietSeconds: number;
    sliceSeconds: number;
    settleMaxSeconds: number;
    readyTimeoutSeconds: number;
    k3kIntervalMs: number;
    classEntitlement: Record<string, string>;
    nodeCapacity: string;
  };
  points: IdlePointResult[];
}

const CELL_NAMESPACE = 'kubecell-system';
const CELL = 'idle-cell';
const PROFILE = 'idle-cpu';
const CLASS = 'idle-small';
const CLASS_ENTITLEMENT = { 'requests.cpu': '1', 'requests.memory': '2Gi', pods: '20' };
const VC_NAME = 'vc';
const USER_FIELD_MANAGER = 'bench-user';
const CELL_QUEUE = 'CompositeController-kubecell-cell';
/** The longest wait, lease renewal paused, for the work it started to finish before the quiet window. */
export const QUIET_DRAIN_MAX_SECONDS = 90;
/** The figures of one label (`before`, `after`) of the idle part in results.json. */
export type IdleResults = Record<string, IdleResult>;

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
  await client.apply(cellObject(WORLD), USER_FIELD_MANAGER);
  await client.apply(classObject(WORLD), USER_FIELD_MANAGER);
  await simulation.syncCells();
  log(`${point.nodes} Nodes registered (${((Date.now() - cellStart) / 1000).toFixed(1)} s)`);
  await untilCellReady(client, WORLD, 15 * 60_000);
  result.seconds.cellReady = round((Date.now() - cellStart) / 1000);
  log(`Cell Ready (${result.seconds.cellReady} s)`);

  const vcStart = Date.now();
  const namespaces = Array.from({ length: point.virtualClusters }, (_, i) => namespaceName(i));
  for (const namespace of namespaces) {
    await client.apply(hostNamespaceObject(namespace), USER_FIELD_MANAGER);
  }
  for (const namespace of namespaces) {
    await client.create(
      resourcePath({ apiVersion: 'kubecell.io/v1alpha1', resource: 'virtualclusters', namespace }),
      virtualClusterObject(WORLD, namespace),
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

async function measureQuiet(
  context: PointContext,
  point: IdlePoint,
  options: IdleOptions,
  result: IdlePointResult,
): Promise<{ from: number; to: number } | undefined> {
  const { stack, simulation } = context;
  if (options.quietSeconds <= 0 || !simulation.leases) return undefined;
  const started = Date.now();
  await simulation.leases.stop();
  // What the last renewal started (a Cell write, the syncs it causes) finishes first: both work
  // queues empty for 3 s in a row (at least 10 s, at most QUIET_DRAIN_MAX_SECONDS).
  const drainStart = Date.now();
  let emptySince: number | undefined;
  while (Date.now() - drainStart < QUIET_DRAIN_MAX_SECONDS * 1000) {
    await sleep(1000);
    const mc = await scrape(stack.metacontroller.metricsUrl);
    const depth = sum(
      mc,
      'workqueue_depth',
      (labels) => labels.name === VC_QUEUE || labels.name === CELL_QUEUE,
    );
    if (depth > 0) emptySince = undefined;
    else emptySince ??= Date.now();
    if (
      emptySince !== undefined &&
      Date.now() - emptySince >= 3000 &&
      Date.now() - drainStart >= 10_000
    )
      break;
  }
  const drainSeconds = round((Date.now() - drainStart) / 1000);
  const hookBefore = await scrape(`${stack.hookServerUrl}/metrics`);
  const cpuBefore = processCpu(stack);
  const from = Date.now();
  await sleep(options.quietSeconds * 1000);
  const hookAfter = await scrape(`${stack.hookServerUrl}/metrics`);
  const cpuAfter = processCpu(stack);
  const to = Date.now();
  simulation.leases.start();
  const minutes = (to - from) / 60_000;
  const calls = hookCallsOf(difference(hookBefore, hookAfter)).ok;
  result.quiet = {
    seconds: round((to - from) / 1000),
    drainSeconds,
    virtualClusterSyncsPerVirtualClusterPerMinute: round(
      (calls['virtualcluster/sync'] ?? 0) / point.virtualClusters / minutes,
      2,
    ),
    cellSyncsPerCellPerMinute: round((calls['cell/sync'] ?? 0) / minutes, 2),
    cellWrites: context.changes.between(from, to).filter((c) => c.kind === 'Cell').length,
    perController: perControllerOf(difference(hookBefore, hookAfter), minutes),
    cpuSecondsPerMinute: cpuPerMinute(cpuBefore, cpuAfter, minutes),
  };
  result.seconds.quiet = round((Date.now() - started) / 1000);
  return { from, to };
}

async function runPoint(
  point: IdlePoint,
  options: IdleOptions,
  effective: { value?: FlagSetResult['effective'] },
): Promise<IdlePointResult> {
  const { log } = options;
  const started = Date.now();
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
    simulation = await startSimulation(client, {
      // Cells are looked at when asked (below), not every second: listing a Cell of 500 Nodes
      // every second would load the apiserver during the window.
      intervalMs: 3_600_000,
      ocm: {
        leaseDurationSeconds: options.leaseDurationSeconds,
        renewIntervalMs: options.leaseRenewSeconds * 1000,
      },
      profileNodes: { perProfile: point.nodes },
      k3k: { intervalMs: options.k3kIntervalMs },
      kubevirt: false,
      clusterAPI: false,
    });
    const context: PointContext = { stack, client, connection, simulation, changes };
    await buildWorld(context, point, options, result);
    changes.start();
    await settle(context, point, options, result);
    const window = await measureWindow(context, point, options, result);
    result.stored = await storedSizes(connection, client, point.nodes);
    const quiet = await measureQuiet(context, point, options, result);
    result.probe = await probeVirtualClusterSync(stack, client, {
      namespace: namespaceName(0),
      name: VC_NAME,
    });
    const vcSyncs = hookCallLines(stack.hookServer.logFile, window.logFrom).filter(
      (call) => call.controller === 'virtualcluster' && call.hook === 'sync',
    );
    result.attribution = attribute(
      changes.changes,
      vcSyncs,
      window,
      quiet
        ? {
            ...quiet,
            syncs: vcSyncs.filter((s) => s.start >= quiet.from && s.start < quiet.to).length,
          }
        : undefined,
    );
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
  if (!w)
    return `${point.nodes} Nodes, ${point.virtualClusters} VCs: ${point.error ?? 'no window'}`;
  const kb = (bytes: number) => (Number.isNaN(bytes) ? '–' : `${(bytes / 1024).toFixed(1)} KiB`);
  return (
    `${point.nodes} Nodes, ${point.virtualClusters} VCs: ` +
    `${w.virtualClusterSyncsPerVirtualClusterPerMinute} VC syncs/VC/min (goal ≤ 0.5), ` +
    `${kb(w.bytesPerVirtualClusterSync ?? NaN)} per VC sync request in the window (goal ≤ 64 KiB), ` +
    `${point.probe && 'meanBytes' in point.probe ? kb(point.probe.meanBytes) : '–'} after an annotation, ` +
    `${w.cellSyncsPerCellPerMinute} Cell syncs/min (goal ≤ 2), ` +
    `stored Cell ${kb(point.stored?.cellBytes ?? NaN)} = ${((point.stored?.cellBytesPerNode ?? NaN) / 1024).toFixed(2)} KiB per Node (goal ≤ 0.4), ` +
    `${point.settled ? 'settled' : 'NOT settled'}, point took ${(point.seconds.total / 60).toFixed(1)} min`
  );
}

export async function runIdleBenchmark(options: IdleOptions): Promise<IdleResult> {
  const versions = JSON.parse(
    readFileSync(new URL('../test/cluster/versions.json', import.meta.url), 'utf8'),
  ) as { metacontroller: { version: string } };
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
    setup: {
      leaseRenewSeconds: options.leaseRenewSeconds,
      leaseDurationSeconds: options.leaseDurationSeconds,
      windowSeconds: options.windowSeconds,
      quietSeconds: options.quietSeconds,
      sliceSeconds: options.sliceSeconds,
      settleMaxSeconds: options.settleMaxSeconds,
      readyTimeoutSeconds: options.readyTimeoutSeconds,
      k3kIntervalMs: options.k3kIntervalMs,
      classEntitlement: CLASS_ENTITLEMENT,
      nodeCapacity: 'test/simulate defaults: 32 cpu, 256Gi memory, 110 pods, 1 TiB TopoLVM',
    },
    points: [],
  };
  for (const point of options.points) {
    options.log(
      `idle (${options.label}): ${point.nodes} Nodes, ${point.virtualClusters} VirtualClusters, window ${options.windowSeconds} s`,
    );
    const effective: { value?: FlagSetResult['effective'] } = {};
    const pointResult = await runPoint(point, options, effective);
    if (effective.value) result.effective = effective.value;
    result.points.push(pointResult);
    options.log(`idle: ${summary(pointResult)}`);
  }
  result.measured = result.points.some((point) => point.window !== undefined);
  return result;
}

/** "500x100,50x100" → points. */
export function parsePoints(text: string): IdlePoint[] {
  return text
    .split(',')
    .filter((part) => part.trim() !== '')
    .map((part) => {
      const match = /^\s*(\d+)\s*x\s*(\d+)\s*$/.exec(part);
      if (!match) throw new Error(`idle point ${part}: expected <nodes>x<virtualclusters>`);
      return { nodes: Number(match[1]), virtualClusters: Number(match[2]) };
    });
}

/** Every combination of the Node counts and VirtualCluster counts. */
export function pointsOf(nodes: number[], virtualClusters: number[]): IdlePoint[] {
  return nodes.flatMap((n) => virtualClusters.map((m) => ({ nodes: n, virtualClusters: m })));
}
