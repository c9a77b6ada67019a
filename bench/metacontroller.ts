/**
 * Apply → Ready through the real Metacontroller.
 *
 * For each Metacontroller flag set, in a fresh stack of its own (harness/cluster/kubecell-stack.ts:
 * etcd, kube-apiserver, kube-controller-manager, KubeCell's CRDs, RBAC, hook server and
 * admission webhook, Metacontroller v4.17.2 as metacontroller/metacontroller with server-side
 * apply, KubeCell's controllers without the GPUCellPool ones):
 *
 * 1. the simulated outside world (harness/simulate): the provider baseline, one ManagedCluster
 *    that joins and renews its lease, a few Nodes of the Cell's machine profile, and k3k
 *    (K3kSimulator, polling every `k3kIntervalMs`);
 * 2. Metacontroller's requests counted for 10 s while it has nothing to do (its API discovery,
 *    which has a client-go rate limiter of its own), then one Cell (waited for until Ready) and
 *    one VirtualNodeClass;
 * 3. for each wave size N: N host namespaces (labelled; waited for until the host-namespace
 *    controller has given each its NetworkPolicies and Pod Security labels, then until the hook
 *    server is quiet), then N VirtualClusters, one per namespace, applied one after another as
 *    `kubectl apply -f <dir>` would. Watches on VirtualClusters and k3k Clusters timestamp what
 *    happens; the hook server's and Metacontroller's /metrics and the processes' CPU time are
 *    read before the first apply and once every VirtualCluster is Ready.
 *
 * Per VirtualCluster: apply (the create answered) → children created (the k3k Cluster exists:
 * its ADDED watch event), k3k served (the simulator wrote Ready and the kubeconfig Secret) →
 * VirtualCluster Ready (phase Ready seen on the watch), apply → Ready. Per wave: the total,
 * hook calls, Metacontroller's requests (by method and code against what its client-go token
 * bucket lets through, burst + QPS × the wave's duration; by verb and resource from the
 * apiserver's audit log, which records Metacontroller's requests only), its work queue, CPU time.
 */
import { statSync } from 'node:fs';
import os from 'node:os';
import {
  cellManifest,
  virtualClusterManifest,
  virtualNodeClassManifest,
} from '../harness/manifests.js';
import { serviceAccountUserName } from '../harness/cluster/audit.js';
import {
  METACONTROLLER_SERVICE_ACCOUNT,
  startKubeCellStack,
  type KubeCellStack,
} from '../harness/cluster/kubecell-stack.js';
import {
  KubeClient,
  resourcePath,
  startSimulation,
  type Simulation,
} from '../harness/simulate/index.js';
import { whileRunning } from '../harness/cluster/processes.js';
import { readPinnedVersions } from '../harness/cluster/versions.js';
import { auditLogOffset, perEach, readAuditRequests, type AuditCounts } from './audit-log.js';
import { cpuMsOf } from './processes.js';
import { type Stats, stats, round } from './stats.js';
import { type Sample, difference, sum, scrape } from './prometheus.js';
import { adminConnection, Watch } from './watch.js';
import { poll, sleep, type PollOutcome } from '../harness/poll.js';
import { flagValues, throttling, type EffectiveFlags } from './metacontroller-log.js';
import { untilCellReady, type BenchWorldNames } from './world.js';

export interface FlagSet {
  name: string;
  /** Metacontroller flags added to the stack's own (appended last, so they win). */
  args: string[];
  description: string;
}

/**
 * Metacontroller v4.17.2's defaults (pkg/cmd/metacontroller/main.go, lines 48-50):
 * `--client-go-qps=5`, `--client-go-burst=10`, `--workers=5`. Given explicitly so that the
 * results name them; Metacontroller logs the values it runs with ("Configuration information"),
 * which the benchmark reads back.
 */
export const DEFAULT_FLAGS = ['--workers=5', '--client-go-qps=5', '--client-go-burst=10'];

export const FLAG_SETS: FlagSet[] = [
  { name: 'default', args: DEFAULT_FLAGS, description: "Metacontroller's defaults" },
  {
    name: 'workers',
    args: ['--workers=20', '--client-go-qps=5', '--client-go-burst=10'],
    description: 'workers raised, default client-go rate limit',
  },
  {
    name: 'qps',
    args: ['--workers=5', '--client-go-qps=50', '--client-go-burst=100'],
    description: 'client-go rate limit raised, default workers',
  },
  {
    name: 'raised',
    args: ['--workers=20', '--client-go-qps=50', '--client-go-burst=100'],
    description: 'workers and client-go rate limit raised',
  },
  {
    name: 'high',
    args: ['--workers=20', '--client-go-qps=200', '--client-go-burst=400'],
    description: 'workers raised, client-go rate limit raised further',
  },
];

export interface WaveResult {
  virtualClusters: number;
  /** Host namespaces created and labelled → every one has its baseline (NetworkPolicies, PSA labels). */
  hostNamespacesMs: number;
  /** From the first create sent to the last one answered (admission webhook included). */
  applyWallMs: number;
  /** Each create, sent → answered. */
  create: Stats;
  /** Apply → the k3k Cluster exists (its ADDED watch event). */
  toChildren: Stats;
  /** Apply → `status.resolved` seen. */
  toResolved: Stats;
  /** k3k Cluster created → the simulator served it (its poll interval and writes). */
  childrenToServed: Stats;
  /** k3k served (Ready status and kubeconfig Secret written) → VirtualCluster phase Ready. */
  servedToReady: Stats;
  /** Apply → VirtualCluster phase Ready. */
  toReady: Stats;
  /** First create sent → the last VirtualCluster Ready. */
  allReadyMs: number;
  /** Hook calls answered during the wave (first create → all Ready), by `<controller>/<hook>`. */
  hookCalls: Record<string, number>;
  /** Hook calls answered with anything but 200, by `<controller>/<hook> <code>`. */
  hookFailures: Record<string, number>;
  /** Metacontroller's requests to the apiserver during the wave (client-go), by method and code. */
  apiRequests: Record<string, number>;
  /**
   * Metacontroller's requests as the apiserver's audit log records them (bench/audit-log.ts),
   * received from the first create sent until the last VirtualCluster was Ready: by verb and
   * resource, in all and per VirtualCluster. Absent in runs before it was recorded.
   */
  auditRequests?: AuditCounts & { perVirtualCluster: Record<string, number> };
  /**
   * The most requests client-go's token bucket lets through during the wave:
   * burst + QPS × (first create → last Ready). When the requests beyond API discovery
   * (FlagSetResult.discoveryRequestsPerSecond) come to this, the rate limiter was the
   * bottleneck for the whole wave.
   */
  rateLimiterCap?: number;
  /**
   * Metacontroller's log lines "Waited before sending request" (client-go logs a client-side
   * throttling wait at info level only when it exceeds 1 s) during the wave, and the longest.
   */
  throttledOver1s: { count: number; maxSeconds: number };
  /**
   * Metacontroller's work queue of the VirtualCluster controller during the wave: keys added
   * (a key already waiting is not added twice), mean wait in the queue and mean time a worker
   * spent on a key (the sync: hook calls and API requests, throttling waits included), in
   * seconds, and delayed adds (client-go's `workqueue_retries_total`, which counts every
   * AddAfter: a sync hook's resyncAfterSeconds as well as the backoff after an error).
   */
  queue?: { adds: number; meanWaitSeconds: number; meanWorkSeconds: number; delayedAdds: number };
  /** CPU time of the processes during the wave (ms). */
  cpuMs: Record<string, number>;
  /** 1-minute load average at the first create and once all were Ready. */
  loadAverage: [number, number];
}

export interface FlagSetResult {
  name: string;
  description: string;
  args: string[];
  /** What Metacontroller logged it runs with ("Configuration information"). */
  effective?: EffectiveFlags;
  stackStartSeconds: number;
  /**
   * Metacontroller's requests per second while it had nothing to do (10 s after the stack
   * started, before the Cell): its API discovery, every --discovery-interval (2 s in the
   * stack), through a client with a rate limiter of its own.
   */
  discoveryRequestsPerSecond: number;
  cellReadySeconds: number;
  waves: WaveResult[];
  /** Client-side throttling waits over 1 s Metacontroller logged during the whole run. */
  throttledOver1s: { count: number; maxSeconds: number };
  loadAverageStart: number[];
  loadAverageEnd: number[];
}

export interface MetacontrollerResult {
  measured: boolean;
  reason?: string;
  metacontrollerVersion: string;
  /** Metacontroller flags every set shares (set by the stack). */
  commonArgs: string[];
  /** The user whose requests the apiserver's audit log recorded (absent in runs before it). */
  auditedUser?: string;
  setup: {
    profileNodes: number;
    k3kIntervalMs: number;
    classEntitlement: Record<string, string>;
  };
  flagSets: FlagSetResult[];
}

export interface MetacontrollerOptions {
  sizes: number[];
  flagSets: FlagSet[];
  profileNodes: number;
  k3kIntervalMs: number;
  log: (line: string) => void;
}

const CELL_NAMESPACE = 'kubecell-system';
const CELL = 'bench-cell';
const PROFILE = 'bench-cpu';
const CLASS = 'bench-small';
const CLASS_ENTITLEMENT = { 'requests.cpu': '1', 'requests.memory': '2Gi', pods: '20' };
const VC_NAME = 'vc';
/** Metacontroller runs as this ServiceAccount in the stack; its requests are audited. */
const METACONTROLLER_USER = serviceAccountUserName(METACONTROLLER_SERVICE_ACCOUNT);
const IDLE_WINDOW_MS = 10_000;
const USER_FIELD_MANAGER = 'bench-user';
const POLICIES = [
  'kubecell-allow-api-server',
  'kubecell-allow-same-namespace',
  'kubecell-deny-ingress',
  'kubecell-egress',
];

interface Timeline {
  /** Create sent / answered (Date.now()). */
  sentAt?: number;
  appliedAt?: number;
  clusterAt?: number;
  resolvedAt?: number;
  readyAt?: number;
  phases: Map<string, number>;
  lastPhase?: string;
  lastReason?: string;
}

// --- the run ---

const WORLD: BenchWorldNames = {
  cellNamespace: CELL_NAMESPACE,
  cell: CELL,
  profile: PROFILE,
  klass: CLASS,
  entitlement: CLASS_ENTITLEMENT,
  virtualCluster: VC_NAME,
};

interface StatusLike {
  status?: { phase?: string; conditions?: { type: string; reason?: string }[] };
}

export function processCpu(stack: KubeCellStack): Record<string, number | undefined> {
  const processes = stack.cluster.processes;
  return {
    metacontroller: cpuMsOf(stack.metacontroller.process.pid),
    hookServer: cpuMsOf(stack.hookServer.pid),
    kubeApiserver: cpuMsOf(processes.kubeApiserver.pid),
    etcd: cpuMsOf(processes.etcd.pid),
    kubeControllerManager: cpuMsOf(processes.kubeControllerManager.pid),
    bench: process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000,
  };
}

export function hookCallsOf(samples: Sample[]): {
  ok: Record<string, number>;
  failed: Record<string, number>;
} {
  const ok: Record<string, number> = {};
  const failed: Record<string, number> = {};
  for (const sample of samples) {
    if (sample.name !== 'kubecell_hook_requests_total' || sample.value === 0) continue;
    const key = `${sample.labels.controller}/${sample.labels.hook}`;
    if (sample.labels.code === '200') ok[key] = (ok[key] ?? 0) + sample.value;
    else failed[`${key} ${sample.labels.code}`] = sample.value;
  }
  return { ok, failed };
}

function totalRequests(samples: Sample[]): number {
  return sum(samples, 'rest_client_requests_total', () => true);
}

function totalHookCalls(samples: Sample[]): number {
  return sum(samples, 'kubecell_hook_requests_total', () => true);
}

/** Waits until the hook server has answered no call for `quietMs` (at most `timeoutMs`). */
async function waitQuiet(stack: KubeCellStack, quietMs: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = totalHookCalls(await scrape(`${stack.hookServerUrl}/metrics`));
  let since = Date.now();
  while (Date.now() < deadline) {
    await sleep(500);
    const now = totalHookCalls(await scrape(`${stack.hookServerUrl}/metrics`));
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return;
  }
}

/**
 * Metacontroller's requests the apiserver received from `fromMs` to `toMs` (the wave), from its
 * audit log written since `offset`. The apiserver writes an event once the response is sent; a
 * request received just before the last Ready may still be answering, so the log is read a
 * moment later.
 */
async function auditedRequests(
  file: string,
  offset: number,
  fromMs: number,
  toMs: number,
  virtualClusters: number,
): Promise<WaveResult['auditRequests']> {
  await sleep(1000);
  const counts = readAuditRequests(file, { user: METACONTROLLER_USER, fromMs, toMs }, offset);
  return { ...counts, perVirtualCluster: perEach(counts.byRequest, virtualClusters) };
}

/** One log line: the audited requests per VirtualCluster, most first. */
function auditSummary(audit: NonNullable<WaveResult['auditRequests']>): string {
  const each = Object.entries(audit.perVirtualCluster)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([key, count]) => `${key} ${count}`)
    .join(', ');
  const codes = Object.entries(audit.byCodeClass)
    .map(([code, count]) => `${code} ${count}`)
    .join(', ');
  return `Metacontroller's requests (audit log) ${audit.total} (${codes}); per VirtualCluster: ${each}`;
}

async function runWave(
  stack: KubeCellStack,
  client: KubeClient,
  simulation: Simulation,
  timelines: Map<string, Timeline>,
  size: number,
  log: (line: string) => void,
): Promise<WaveResult> {
  const namespaces = Array.from(
    { length: size },
    (_, index) => `bench-n${size}-${String(index).padStart(2, '0')}`,
  );
  // Host namespaces first (the platform's job), and their baseline through Metacontroller.
  const nsStart = Date.now();
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
  const wanted = new Set(namespaces);
  const baseline = async (): Promise<PollOutcome<true>> => {
    const policies = await client.list(
      resourcePath({ apiVersion: 'networking.k8s.io/v1', resource: 'networkpolicies' }),
    );
    const count = new Map<string, number>();
    for (const policy of policies) {
      const ns = policy.metadata.namespace ?? '';
      if (wanted.has(ns) && POLICIES.includes(policy.metadata.name))
        count.set(ns, (count.get(ns) ?? 0) + 1);
    }
    if (namespaces.some((ns) => count.get(ns) !== POLICIES.length))
      return { notYet: 'NetworkPolicies missing' };
    const all = await client.list(resourcePath({ apiVersion: 'v1', resource: 'namespaces' }));
    const labelled = all.filter(
      (ns) =>
        wanted.has(ns.metadata.name) &&
        ns.metadata.labels?.['pod-security.kubernetes.io/enforce'] !== undefined,
    );
    return labelled.length === size
      ? { value: true }
      : { notYet: `${labelled.length} Pod Security labels` };
  };
  await poll(`the baseline of ${size} host namespaces`, baseline, {
    timeoutMs: 15 * 60_000,
    intervalMs: 500,
  });
  const hostNamespacesMs = Date.now() - nsStart;
  log(`${size} host namespaces have their baseline (${(hostNamespacesMs / 1000).toFixed(1)} s)`);
  await waitQuiet(stack, 2000, 30_000);
  const logFile = stack.metacontroller.process.logFile;
  const logOffset = statSync(logFile).size;
  const hookBefore = await scrape(`${stack.hookServerUrl}/metrics`);
  const mcBefore = await scrape(stack.metacontroller.metricsUrl);
  const auditFile = stack.cluster.auditLogFile;
  const auditOffset = auditFile === undefined ? 0 : auditLogOffset(auditFile);
  const cpuBefore = processCpu(stack);
  const loadStart = round(os.loadavg()[0] ?? 0, 2);

  // The VirtualClusters, one after another.
  const firstSent = Date.now();
  const createTimes: number[] = [];
  for (const namespace of namespaces) {
    const timeline: Timeline = timelines.get(`${namespace}/${VC_NAME}`) ?? { phases: new Map() };
    timelines.set(`${namespace}/${VC_NAME}`, timeline);
    timeline.sentAt = Date.now();
    await client.create(
      resourcePath({
        apiVersion: 'kubecell.io/v1alpha1',
        resource: 'virtualclusters',
        namespace,
      }),
      virtualClusterManifest(namespace, WORLD.virtualCluster, {
        cell: WORLD.cell,
        klass: WORLD.klass,
      }),
      USER_FIELD_MANAGER,
    );
    timeline.appliedAt = Date.now();
    createTimes.push(timeline.appliedAt - timeline.sentAt);
  }
  const applyWallMs = Date.now() - firstSent;
  const mine = () => namespaces.map((ns) => timelines.get(`${ns}/${VC_NAME}`) as Timeline);
  const phasesSeen = (): string => {
    const phases = new Map<string, number>();
    for (const timeline of mine()) {
      const phase = `${timeline.lastPhase ?? '(none)'}/${timeline.lastReason ?? ''}`;
      phases.set(phase, (phases.get(phase) ?? 0) + 1);
    }
    return JSON.stringify(Object.fromEntries(phases));
  };
  const serving = whileRunning(stack.metacontroller.process, stack.hookServer);
  await poll(
    `${size} VirtualClusters to be Ready`,
    async () =>
      mine().every((timeline) => timeline.readyAt !== undefined)
        ? { value: true }
        : { notYet: phasesSeen() },
    {
      timeoutMs: 20 * 60_000,
      intervalMs: 100,
      abort: () => {
        const failed = mine().find((timeline) => timeline.lastPhase === 'Failed');
        return serving.abort() ?? (failed && `a VirtualCluster failed: ${failed.lastReason ?? ''}`);
      },
    },
  );
  const allReadyAt = Math.max(...mine().map((timeline) => timeline.readyAt ?? 0));
  const loadEnd = round(os.loadavg()[0] ?? 0, 2);
  const cpuAfter = processCpu(stack);
  const hookAfter = await scrape(`${stack.hookServerUrl}/metrics`);
  const mcAfter = await scrape(stack.metacontroller.metricsUrl);
  const auditRequests =
    auditFile === undefined
      ? undefined
      : await auditedRequests(auditFile, auditOffset, firstSent, allReadyAt, size);

  const served = (namespace: string) =>
    simulation.k3k?.served.get(`${namespace}/${VC_NAME}`)?.servedAt.getTime();
  const list = (pick: (timeline: Timeline, namespace: string) => number | undefined) =>
    namespaces.flatMap((namespace) => {
      const value = pick(timelines.get(`${namespace}/${VC_NAME}`) as Timeline, namespace);
      return value === undefined || Number.isNaN(value) ? [] : [value];
    });
  const diff = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined ? undefined : b - a;

  const hook = hookCallsOf(difference(hookBefore, hookAfter));
  const flags = flagValues(stack.metacontroller.process.logFile);
  const mc = difference(mcBefore, mcAfter);
  const apiRequests: Record<string, number> = {};
  for (const sample of mc) {
    if (sample.name !== 'rest_client_requests_total' || sample.value === 0) continue;
    const key = `${sample.labels.method ?? '?'} ${sample.labels.code ?? '?'}`;
    apiRequests[key] = (apiRequests[key] ?? 0) + sample.value;
  }
  const queueName = 'CompositeController-kubecell-virtualcluster';
  const ofQueue = (name: string) => sum(mc, name, (labels) => labels.name === queueName);
  const queueAdds = ofQueue('workqueue_adds_total');
  const waits = ofQueue('workqueue_queue_duration_seconds_count');
  const works = ofQueue('workqueue_work_duration_seconds_count');
  const cpuMs: Record<string, number> = {};
  for (const [name, after] of Object.entries(cpuAfter)) {
    const before = cpuBefore[name];
    if (after !== undefined && before !== undefined) cpuMs[name] = Math.round(after - before);
  }

  return {
    virtualClusters: size,
    hostNamespacesMs,
    applyWallMs,
    create: stats(createTimes),
    toChildren: stats(list((t) => diff(t.appliedAt, t.clusterAt))),
    toResolved: stats(list((t) => diff(t.appliedAt, t.resolvedAt))),
    childrenToServed: stats(list((t, ns) => diff(t.clusterAt, served(ns)))),
    servedToReady: stats(list((t, ns) => diff(served(ns), t.readyAt))),
    toReady: stats(list((t) => diff(t.appliedAt, t.readyAt))),
    allReadyMs: allReadyAt - firstSent,
    ...(flags?.clientGoQps !== undefined && flags.clientGoBurst !== undefined
      ? {
          rateLimiterCap: Math.round(
            flags.clientGoBurst + (flags.clientGoQps * (allReadyAt - firstSent)) / 1000,
          ),
        }
      : {}),
    hookCalls: hook.ok,
    hookFailures: hook.failed,
    apiRequests,
    ...(auditRequests ? { auditRequests } : {}),
    ...(queueAdds > 0
      ? {
          queue: {
            adds: queueAdds,
            meanWaitSeconds: round(ofQueue('workqueue_queue_duration_seconds_sum') / waits, 3),
            meanWorkSeconds: round(ofQueue('workqueue_work_duration_seconds_sum') / works, 3),
            delayedAdds: ofQueue('workqueue_retries_total'),
          },
        }
      : {}),
    throttledOver1s: throttling(logFile, logOffset),
    cpuMs,
    loadAverage: [loadStart, loadEnd],
  };
}

async function runFlagSet(
  flagSet: FlagSet,
  options: MetacontrollerOptions,
): Promise<FlagSetResult> {
  const { log } = options;
  const loadAverageStart = os.loadavg().map((value) => round(value, 2));
  const started = Date.now();
  const stack = await startKubeCellStack({
    metacontrollerArgs: flagSet.args,
    provisioners: [],
    // Only Metacontroller's requests: everyone else's would make the log many times larger.
    controlPlane: { auditLog: { users: [METACONTROLLER_USER] } },
    log: (line) => log(`  stack: ${line}`),
  });
  const stackStartSeconds = (Date.now() - started) / 1000;
  const client = new KubeClient(stack.cluster.kubeconfigPath, { maxSockets: 32 });
  const connection = adminConnection(stack.cluster.kubeconfigPath);
  const timelines = new Map<string, Timeline>();
  const timelineOf = (key: string) => {
    let timeline = timelines.get(key);
    if (!timeline) {
      timeline = { phases: new Map() };
      timelines.set(key, timeline);
    }
    return timeline;
  };
  const watches = [
    new Watch(
      connection,
      '/apis/kubecell.io/v1alpha1/virtualclusters',
      (type, object, at) => {
        if (type !== 'ADDED' && type !== 'MODIFIED') return;
        const timeline = timelineOf(`${object.metadata.namespace ?? ''}/${object.metadata.name}`);
        const status = (object as StatusLike).status;
        const phase = status?.phase;
        if (phase) {
          if (!timeline.phases.has(phase)) timeline.phases.set(phase, at);
          timeline.lastPhase = phase;
          timeline.lastReason = status.conditions?.find((c) => c.type === 'Ready')?.reason;
          if (phase === 'Ready' && timeline.readyAt === undefined) timeline.readyAt = at;
        }
        if (
          (object.status as { resolved?: unknown } | undefined)?.resolved !== undefined &&
          timeline.resolvedAt === undefined
        ) {
          timeline.resolvedAt = at;
        }
      },
      log,
    ),
    new Watch(
      connection,
      '/apis/k3k.io/v1beta1/clusters',
      (type, object, at) => {
        if (type !== 'ADDED') return;
        const timeline = timelineOf(`${object.metadata.namespace ?? ''}/${object.metadata.name}`);
        if (timeline.clusterAt === undefined) timeline.clusterAt = at;
      },
      log,
    ),
  ];
  let simulation: Simulation | undefined;
  try {
    for (const watch of watches) watch.start();
    simulation = await startSimulation(client, {
      profileNodes: { perProfile: options.profileNodes },
      k3k: { intervalMs: options.k3kIntervalMs },
      kubevirt: false,
      clusterAPI: false,
    });
    await waitQuiet(stack, 2000, 30_000);
    const idleStart = await scrape(stack.metacontroller.metricsUrl);
    const idleFrom = Date.now();
    await sleep(IDLE_WINDOW_MS);
    const idleEnd = await scrape(stack.metacontroller.metricsUrl);
    const discoveryRequestsPerSecond = round(
      totalRequests(difference(idleStart, idleEnd)) / ((Date.now() - idleFrom) / 1000),
      2,
    );
    const cellStart = Date.now();
    await client.apply(
      cellManifest(WORLD.cell, { namespace: WORLD.cellNamespace, profile: WORLD.profile }),
      USER_FIELD_MANAGER,
    );
    await client.apply(
      virtualNodeClassManifest(WORLD.klass, WORLD.entitlement),
      USER_FIELD_MANAGER,
    );
    await simulation.syncCells();
    await untilCellReady(client, WORLD, 5 * 60_000, 500);
    const cellReadySeconds = (Date.now() - cellStart) / 1000;
    log(`  Cell Ready after ${cellReadySeconds.toFixed(1)} s`);
    const waves: WaveResult[] = [];
    for (const size of options.sizes) {
      const wave = await runWave(stack, client, simulation, timelines, size, (line) =>
        log(`  ${line}`),
      );
      log(
        `  N=${size}: apply → children median ${(wave.toChildren.medianMs / 1000).toFixed(2)} s, ` +
          `served → Ready median ${(wave.servedToReady.medianMs / 1000).toFixed(2)} s, ` +
          `apply → Ready median ${(wave.toReady.medianMs / 1000).toFixed(2)} s / max ${(wave.toReady.maxMs / 1000).toFixed(2)} s, ` +
          `all Ready ${(wave.allReadyMs / 1000).toFixed(1)} s`,
      );
      if (wave.auditRequests) log(`  N=${size}: ${auditSummary(wave.auditRequests)}`);
      waves.push(wave);
    }
    const logFile = stack.metacontroller.process.logFile;
    const effective = flagValues(logFile);
    return {
      name: flagSet.name,
      description: flagSet.description,
      args: flagSet.args,
      ...(effective ? { effective } : {}),
      stackStartSeconds: round(stackStartSeconds),
      discoveryRequestsPerSecond,
      cellReadySeconds: round(cellReadySeconds),
      waves,
      throttledOver1s: throttling(logFile),
      loadAverageStart,
      loadAverageEnd: os.loadavg().map((value) => round(value, 2)),
    };
  } finally {
    for (const watch of watches) watch.stop();
    await simulation?.stop();
    client.close();
    connection.agent.destroy();
    await stack.stop();
  }
}

export async function runMetacontrollerBenchmark(
  options: MetacontrollerOptions,
): Promise<MetacontrollerResult> {
  const versions = readPinnedVersions();
  const result: MetacontrollerResult = {
    measured: false,
    metacontrollerVersion: versions.metacontroller.version,
    commonArgs: ['--apply-strategy=server-side-apply', '--discovery-interval=2s'],
    auditedUser: METACONTROLLER_USER,
    setup: {
      profileNodes: options.profileNodes,
      k3kIntervalMs: options.k3kIntervalMs,
      classEntitlement: CLASS_ENTITLEMENT,
    },
    flagSets: [],
  };
  for (const flagSet of options.flagSets) {
    options.log(`metacontroller: flag set ${flagSet.name} (${flagSet.args.join(' ')})`);
    result.flagSets.push(await runFlagSet(flagSet, options));
  }
  result.measured = true;
  return result;
}
