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
import { readFileSync, statSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import { startKubeCellStack, type KubeCellStack } from '../test/cluster/kubecell-stack.js';
import {
  KubeClient,
  resourcePath,
  startSimulation,
  type KubeObject,
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
  throttling,
  until,
  type AdminConnection,
  type FlagSetResult,
  type Sample,
} from './metacontroller.js';
import { ChangeLog, attribute, hookCallLines, type Attribution } from './idle-changes.js';
import { REPO_ROOT } from './processes.js';
import { cellObject, classObject, virtualClusterObject, type BenchWorldNames } from './world.js';

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

/** Per controller (`cell`, `virtualcluster`, …), summed over its hooks. */
export interface ControllerCost {
  callsPerMinute: number;
  requestBytesPerMinute: number;
}

export interface HookBytes {
  count: number;
  /** Mean request bytes (`_sum` ÷ `_count`). */
  meanBytes: number;
  bytesPerMinute: number;
}

export interface WindowFigures {
  seconds: number;
  virtualClusterSyncsPerVirtualClusterPerMinute: number;
  cellSyncsPerCellPerMinute: number;
  planSyncsPerMinute: number;
  /** Mean bytes of a virtualcluster/sync request; absent when no VirtualCluster was synced. */
  bytesPerVirtualClusterSync?: number;
  bytesPerCellSync: number;
  perController: Record<string, ControllerCost>;
  /** `<controller>/<hook>`: calls answered 200, per minute. */
  hookCallsPerMinute: Record<string, number>;
  /** `<controller>/<hook>`: from `kubecell_hook_request_bytes`. */
  requestBytes: Record<string, HookBytes>;
  /** `<controller>/<hook> <code>`: calls answered with anything but 200 in the window. */
  hookFailures: Record<string, number>;
  /** Metacontroller's requests to the apiserver per minute, by method and code. */
  metacontrollerRequestsPerMinute: Record<string, number>;
  /** Metacontroller's VirtualCluster work queue in the window. */
  virtualClusterQueue?: {
    addsPerMinute: number;
    meanWaitSeconds: number;
    meanWorkSeconds: number;
    depthAtEnd: number;
  };
  /** CPU seconds per minute of each process (1 = one core fully busy). */
  cpuSecondsPerMinute: Record<string, number>;
  throttledOver1s: { count: number; maxSeconds: number };
  loadAverage: [number, number];
}

export interface StoredSizes {
  /** The Cell as the apiserver serves it (GET, JSON), managedFields included. */
  cellBytes: number;
  cellManagedFieldsBytes: number;
  cellStatusBytes: number;
  /** cellBytes ÷ Nodes. */
  cellBytesPerNode: number;
  /** managedFields entries of the Cell: `<manager> <operation> <subresource>` → bytes. */
  cellManagedFields: Record<string, number>;
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
const VC_QUEUE = 'CompositeController-kubecell-virtualcluster';
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

interface StatusLike {
  status?: { phase?: string; conditions?: { type: string; reason?: string; message?: string }[] };
}

// --- metrics ---

/** `<controller>/<hook>` → { count, sum } of kubecell_hook_request_bytes in these samples. */
function requestBytesOf(samples: Sample[]): Map<string, { count: number; sum: number }> {
  const bytes = new Map<string, { count: number; sum: number }>();
  for (const sample of samples) {
    const field =
      sample.name === 'kubecell_hook_request_bytes_sum'
        ? 'sum'
        : sample.name === 'kubecell_hook_request_bytes_count'
          ? 'count'
          : undefined;
    if (!field) continue;
    const key = `${sample.labels.controller}/${sample.labels.hook}`;
    const entry = bytes.get(key) ?? { count: 0, sum: 0 };
    entry[field] += sample.value;
    bytes.set(key, entry);
  }
  return bytes;
}

function okCalls(samples: Sample[], controller: string, hook: string): number {
  return sum(
    samples,
    'kubecell_hook_requests_total',
    (labels) => labels.controller === controller && labels.hook === hook && labels.code === '200',
  );
}

function perControllerOf(diff: Sample[], minutes: number): Record<string, ControllerCost> {
  const calls = hookCallsOf(diff).ok;
  const bytes = requestBytesOf(diff);
  const out: Record<string, ControllerCost> = {};
  const add = (key: string, field: keyof ControllerCost, value: number) => {
    const controller = key.split('/')[0] ?? key;
    const entry = out[controller] ?? { callsPerMinute: 0, requestBytesPerMinute: 0 };
    entry[field] += value / minutes;
    out[controller] = entry;
  };
  for (const [key, count] of Object.entries(calls)) add(key, 'callsPerMinute', count);
  for (const [key, entry] of bytes) add(key, 'requestBytesPerMinute', entry.sum);
  for (const entry of Object.values(out)) {
    entry.callsPerMinute = round(entry.callsPerMinute, 2);
    entry.requestBytesPerMinute = Math.round(entry.requestBytesPerMinute);
  }
  return out;
}

function cpuPerMinute(
  before: Record<string, number | undefined>,
  after: Record<string, number | undefined>,
  minutes: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, value] of Object.entries(after)) {
    const start = before[name];
    if (value !== undefined && start !== undefined)
      out[name] = round((value - start) / 1000 / minutes, 2);
  }
  return out;
}

// --- stored sizes ---

/** GET as JSON, the bytes as the apiserver sent them. */
function rawGet(connection: AdminConnection, path: string): Promise<Buffer> {
  const { server, agent } = connection;
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        agent,
        host: server.hostname,
        port: server.port,
        method: 'GET',
        path,
        headers: { accept: 'application/json' },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const body = Buffer.concat(chunks);
          if ((response.statusCode ?? 0) >= 300)
            reject(
              new Error(`GET ${path}: ${response.statusCode}: ${body.toString().slice(0, 300)}`),
            );
          else resolve(body);
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end();
  });
}

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value ?? null));

/** metadata.managedFields (the hooks' ObjectMeta type leaves it out: no hook reads it). */
function managedFieldsOf(object: KubeObject): unknown[] {
  const entries = (object.metadata as { managedFields?: unknown }).managedFields;
  return Array.isArray(entries) ? entries : [];
}

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
}

async function storedSizes(
  connection: AdminConnection,
  client: KubeClient,
  nodes: number,
): Promise<StoredSizes> {
  const cellBody = await rawGet(
    connection,
    resourcePath({
      apiVersion: 'kubecell.io/v1alpha1',
      resource: 'cells',
      namespace: CELL_NAMESPACE,
      name: CELL,
    }),
  );
  const cell = JSON.parse(cellBody.toString('utf8')) as KubeObject & { status?: unknown };
  const managedFields = managedFieldsOf(cell) as ManagedFieldsEntry[];
  const cellManagedFields: Record<string, number> = {};
  for (const entry of managedFields) {
    const key = `${entry.manager ?? '?'} ${entry.operation ?? '?'}${entry.subresource ? ` ${entry.subresource}` : ''}`;
    cellManagedFields[key] = (cellManagedFields[key] ?? 0) + bytesOf(entry);
  }
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
  const cellMf = bytesOf(managedFieldsOf(cell));
  return {
    cellBytes: cellBody.length,
    cellManagedFieldsBytes: cellMf,
    cellStatusBytes: bytesOf(cell.status),
    cellBytesPerNode: Math.round(cellBody.length / nodes),
    cellManagedFields,
    nodeBytes: Math.round(nodeBytes / Math.max(1, profileNodes.length)),
    nodeManagedFieldsBytes: Math.round(nodeMf / Math.max(1, profileNodes.length)),
    virtualClusterBytes: Math.round(vcBytes / Math.max(1, vcs.length)),
    virtualClusterManagedFieldsBytes: Math.round(vcMf / Math.max(1, vcs.length)),
    virtualClusterRequestEstimate: {
      cellBytes: cellBody.length,
      nodesBytes: nodeBytes,
      virtualClustersBytes: vcBytes,
      managedFieldsBytes: cellMf + nodeMf + vcMf,
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

async function vcSyncRate(
  stack: KubeCellStack,
  seconds: number,
  virtualClusters: number,
): Promise<number> {
  const before = await scrape(`${stack.hookServerUrl}/metrics`);
  await sleep(seconds * 1000);
  const after = await scrape(`${stack.hookServerUrl}/metrics`);
  const syncs =
    okCalls(after, 'virtualcluster', 'sync') - okCalls(before, 'virtualcluster', 'sync');
  return round(syncs / virtualClusters / (seconds / 60), 2);
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
  const cellPath = resourcePath({
    apiVersion: 'kubecell.io/v1alpha1',
    resource: 'cells',
    namespace: CELL_NAMESPACE,
    name: CELL,
  });
  let lastCell = '';
  await until(
    `Cell ${CELL} to be Ready`,
    15 * 60_000,
    1000,
    async () => {
      const cell = (await client.find(cellPath)) as (KubeObject & StatusLike) | undefined;
      lastCell = JSON.stringify(cell?.status?.conditions ?? null).slice(0, 600);
      return cell?.status?.phase === 'Ready' ? true : undefined;
    },
    () => lastCell,
  );
  result.seconds.cellReady = round((Date.now() - cellStart) / 1000);
  log(`Cell Ready (${result.seconds.cellReady} s)`);

  const vcStart = Date.now();
  const namespaces = Array.from({ length: point.virtualClusters }, (_, i) => namespaceName(i));
  for (const namespace of namespaces) {
    await client.apply(
      {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: namespace, labels: { 'kubecell.io/host-namespace': 'true' } },
      },
      USER_FIELD_MANAGER,
    );
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
  let phases = '';
  let ready = 0;
  let lastReport = Date.now();
  try {
    await until(
      `${point.virtualClusters} VirtualClusters to be Ready`,
      options.readyTimeoutSeconds * 1000,
      2000,
      async () => {
        for (const process of [stack.metacontroller.process, stack.hookServer]) {
          if (process.exitStatus()) throw new Error(`${process.name} exited`);
        }
        const vcs = (await client.list(
          resourcePath({ apiVersion: 'kubecell.io/v1alpha1', resource: 'virtualclusters' }),
        )) as (KubeObject & StatusLike)[];
        const count = new Map<string, number>();
        for (const vc of vcs) {
          const phase = vc.status?.phase ?? '(none)';
          if (phase === 'Failed')
            throw new Error(
              `VirtualCluster ${vc.metadata.namespace}/${vc.metadata.name} Failed: ${JSON.stringify(vc.status?.conditions)}`,
            );
          count.set(phase, (count.get(phase) ?? 0) + 1);
        }
        phases = JSON.stringify(Object.fromEntries(count));
        ready = count.get('Ready') ?? 0;
        if (Date.now() - lastReport > 60_000) {
          lastReport = Date.now();
          log(`waiting: ${phases} after ${((Date.now() - vcStart) / 1000).toFixed(0)} s`);
        }
        return ready === point.virtualClusters ? true : undefined;
      },
      () => phases,
    );
  } catch (error) {
    if (!(error instanceof Error && error.message.startsWith('timed out'))) throw error;
    // Measured all the same: what a cluster that never gets there costs is a figure too.
    result.notAllReady = phases;
    log(`not all Ready after ${options.readyTimeoutSeconds} s (${phases}); measuring all the same`);
  }
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
  const start = Date.now();
  const slices: number[] = [];
  const agree = (a: number, b: number) => Math.abs(a - b) <= Math.max(0.25 * Math.max(a, b), 0.5);
  for (;;) {
    slices.push(await vcSyncRate(context.stack, options.sliceSeconds, point.virtualClusters));
    const [a, b] = slices.slice(-2);
    options.log(
      `  convergence: ${slices[slices.length - 1]} VirtualCluster syncs per VirtualCluster per minute over the last ${options.sliceSeconds} s`,
    );
    if (slices.length >= 2 && a !== undefined && b !== undefined && agree(a, b)) {
      result.settled = true;
      break;
    }
    if ((Date.now() - start) / 1000 + options.sliceSeconds > options.settleMaxSeconds) break;
  }
  result.settleSlices = slices;
  result.seconds.settle = round((Date.now() - start) / 1000);
}

async function measureWindow(
  context: PointContext,
  point: IdlePoint,
  options: IdleOptions,
  result: IdlePointResult,
): Promise<{ from: number; to: number; logFrom: number }> {
  const { stack } = context;
  const logFrom = statSync(stack.hookServer.logFile).size;
  const mcLogFrom = statSync(stack.metacontroller.process.logFile).size;
  const hookBefore = await scrape(`${stack.hookServerUrl}/metrics`);
  const mcBefore = await scrape(stack.metacontroller.metricsUrl);
  const cpuBefore = processCpu(stack);
  const loadStart = round(os.loadavg()[0] ?? 0, 2);
  const from = Date.now();
  await sleep(options.windowSeconds * 1000);
  const hookAfter = await scrape(`${stack.hookServerUrl}/metrics`);
  const mcAfter = await scrape(stack.metacontroller.metricsUrl);
  const cpuAfter = processCpu(stack);
  const to = Date.now();
  const minutes = (to - from) / 60_000;
  const diff = difference(hookBefore, hookAfter);
  const mc = difference(mcBefore, mcAfter);
  const calls = hookCallsOf(diff);
  const bytes = requestBytesOf(diff);
  const requestBytes: Record<string, HookBytes> = {};
  for (const [key, entry] of [...bytes].sort(([a], [b]) => a.localeCompare(b))) {
    if (entry.count === 0) continue;
    requestBytes[key] = {
      count: entry.count,
      meanBytes: Math.round(entry.sum / entry.count),
      bytesPerMinute: Math.round(entry.sum / minutes),
    };
  }
  const apiRequests: Record<string, number> = {};
  for (const sample of mc) {
    if (sample.name !== 'rest_client_requests_total' || sample.value === 0) continue;
    const key = `${sample.labels.method ?? '?'} ${sample.labels.code ?? '?'}`;
    apiRequests[key] = round((apiRequests[key] ?? 0) + sample.value / minutes, 1);
  }
  const ofQueue = (name: string, samples = mc) =>
    sum(samples, name, (labels) => labels.name === VC_QUEUE);
  const adds = ofQueue('workqueue_adds_total');
  const waits = ofQueue('workqueue_queue_duration_seconds_count');
  const works = ofQueue('workqueue_work_duration_seconds_count');
  const perMinute = Object.fromEntries(
    Object.entries(calls.ok)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, count]) => [key, round(count / minutes, 2)]),
  );
  const vcSync = bytes.get('virtualcluster/sync');
  const cellSync = bytes.get('cell/sync');
  result.window = {
    seconds: round((to - from) / 1000),
    virtualClusterSyncsPerVirtualClusterPerMinute: round(
      (calls.ok['virtualcluster/sync'] ?? 0) / point.virtualClusters / minutes,
      2,
    ),
    cellSyncsPerCellPerMinute: round((calls.ok['cell/sync'] ?? 0) / minutes, 2),
    planSyncsPerMinute: round((calls.ok['plan/sync'] ?? 0) / minutes, 2),
    ...(vcSync?.count ? { bytesPerVirtualClusterSync: Math.round(vcSync.sum / vcSync.count) } : {}),
    bytesPerCellSync: cellSync?.count ? Math.round(cellSync.sum / cellSync.count) : 0,
    perController: perControllerOf(diff, minutes),
    hookCallsPerMinute: perMinute,
    requestBytes,
    hookFailures: calls.failed,
    metacontrollerRequestsPerMinute: apiRequests,
    ...(adds > 0 || waits > 0
      ? {
          virtualClusterQueue: {
            addsPerMinute: round(adds / minutes, 1),
            meanWaitSeconds: waits
              ? round(ofQueue('workqueue_queue_duration_seconds_sum') / waits, 3)
              : 0,
            meanWorkSeconds: works
              ? round(ofQueue('workqueue_work_duration_seconds_sum') / works, 3)
              : 0,
            depthAtEnd: ofQueue('workqueue_depth', mcAfter),
          },
        }
      : {}),
    cpuSecondsPerMinute: cpuPerMinute(cpuBefore, cpuAfter, minutes),
    throttledOver1s: throttling(stack.metacontroller.process.logFile, mcLogFrom),
    loadAverage: [loadStart, round(os.loadavg()[0] ?? 0, 2)],
  };
  result.seconds.window = result.window.seconds;
  return { from, to, logFrom };
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

/** Annotates one VirtualCluster and measures the virtualcluster/sync requests that follow. */
async function probeSync(context: PointContext): Promise<IdlePointResult['probe']> {
  const { stack, client } = context;
  const metricsUrl = `${stack.hookServerUrl}/metrics`;
  const vcSyncs = (samples: Sample[]) => okCalls(samples, 'virtualcluster', 'sync');
  try {
    const before = await scrape(metricsUrl);
    await client.patch(
      resourcePath({
        apiVersion: 'kubecell.io/v1alpha1',
        resource: 'virtualclusters',
        namespace: namespaceName(0),
        name: VC_NAME,
      }),
      { metadata: { annotations: { 'bench.kubecell.io/probe': new Date().toISOString() } } },
      USER_FIELD_MANAGER,
    );
    await until('a VirtualCluster sync after the probe', 120_000, 500, async () =>
      vcSyncs(await scrape(metricsUrl)) > vcSyncs(before) ? true : undefined,
    );
    await sleep(5000);
    const bytes = requestBytesOf(difference(before, await scrape(metricsUrl))).get(
      'virtualcluster/sync',
    );
    if (!bytes?.count) return { error: 'no request size recorded' };
    return { syncs: bytes.count, meanBytes: Math.round(bytes.sum / bytes.count) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
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
    result.probe = await probeSync(context);
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
