/**
 * What the idle benchmarks count, shared by bench/idle.ts (one local Cell) and bench/remote.ts
 * (Cells on clusters joined through OCM): hook calls and request bytes per controller and hook
 * from the hook server's /metrics, Metacontroller's requests and work queue, the processes' CPU
 * time over a window, the VirtualCluster sync rate while it settles, the stored Cell's size, and
 * the size of a VirtualCluster sync request after an annotation.
 */
import https from 'node:https';
import os from 'node:os';
import { statSync } from 'node:fs';
import type { KubeCellStack } from '../harness/cluster/kubecell-stack.js';
import { whileRunning } from '../harness/cluster/processes.js';
import { KubeClient, resourcePath, type KubeObject } from '../harness/simulate/index.js';
import { difference, scrape, sum, type Sample } from './prometheus.js';
import { hookCallsOf } from './metacontroller.js';
import { round } from './stats.js';
import { poll, PollTimeout, sleep } from '../harness/poll.js';
import { throttling } from './metacontroller-log.js';
import { type AdminConnection } from './watch.js';

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

// --- metrics ---

/** `<controller>/<hook>` → { count, sum } of kubecell_hook_request_bytes in these samples. */
export function requestBytesOf(samples: Sample[]): Map<string, { count: number; sum: number }> {
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

export function okCalls(samples: Sample[], controller: string, hook: string): number {
  return sum(
    samples,
    'kubecell_hook_requests_total',
    (labels) => labels.controller === controller && labels.hook === hook && labels.code === '200',
  );
}

export function perControllerOf(diff: Sample[], minutes: number): Record<string, ControllerCost> {
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

export function cpuPerMinute(
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
export function rawGet(connection: AdminConnection, path: string): Promise<Buffer> {
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

export const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value ?? null));

/** metadata.managedFields (the hooks' ObjectMeta type leaves it out: no hook reads it). */
export function managedFieldsOf(object: KubeObject): unknown[] {
  const entries = (object.metadata as { managedFields?: unknown }).managedFields;
  return Array.isArray(entries) ? entries : [];
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
}

export interface StoredCell {
  /** The Cell as the apiserver serves it (GET, JSON), managedFields included. */
  cellBytes: number;
  cellManagedFieldsBytes: number;
  cellStatusBytes: number;
  /** cellBytes ÷ Nodes. */
  cellBytesPerNode: number;
  /** managedFields entries of the Cell: `<manager> <operation> <subresource>` → bytes. */
  cellManagedFields: Record<string, number>;
}

/** The Cell as stored (GET as JSON), its managedFields by manager, and its bytes per Node. */
export async function storedCell(
  connection: AdminConnection,
  cell: { namespace: string; name: string },
  nodes: number,
): Promise<StoredCell> {
  const cellBody = await rawGet(
    connection,
    resourcePath({ apiVersion: 'kubecell.io/v1alpha1', resource: 'cells', ...cell }),
  );
  const stored = JSON.parse(cellBody.toString('utf8')) as KubeObject & { status?: unknown };
  const managedFields = managedFieldsOf(stored) as ManagedFieldsEntry[];
  const cellManagedFields: Record<string, number> = {};
  for (const entry of managedFields) {
    const key = `${entry.manager ?? '?'} ${entry.operation ?? '?'}${entry.subresource ? ` ${entry.subresource}` : ''}`;
    cellManagedFields[key] = (cellManagedFields[key] ?? 0) + bytesOf(entry);
  }
  return {
    cellBytes: cellBody.length,
    cellManagedFieldsBytes: bytesOf(managedFields),
    cellStatusBytes: bytesOf(stored.status),
    cellBytesPerNode: Math.round(cellBody.length / nodes),
    cellManagedFields,
  };
}

// --- waiting for the world, and for the sync rate to settle ---

export const VC_QUEUE = 'CompositeController-kubecell-virtualcluster';

interface PhaseLike {
  status?: { phase?: string; conditions?: unknown };
}

/**
 * Waits until `count` VirtualClusters (all namespaces) are Ready; a Failed one throws. After
 * `timeoutSeconds` it returns the phases seen (`notAllReady`): what a cluster that never gets
 * there costs is a figure too.
 */
export async function allVirtualClustersReady(
  stack: KubeCellStack,
  client: KubeClient,
  options: { count: number; timeoutSeconds: number; log: (line: string) => void },
): Promise<{ notAllReady?: string }> {
  const started = Date.now();
  let phases = '';
  let failed: string | undefined;
  let lastReport = Date.now();
  const serving = whileRunning(stack.metacontroller.process, stack.hookServer);
  try {
    await poll(
      `${options.count} VirtualClusters to be Ready`,
      async () => {
        const vcs = (await client.list(
          resourcePath({ apiVersion: 'kubecell.io/v1alpha1', resource: 'virtualclusters' }),
        )) as (KubeObject & PhaseLike)[];
        const count = new Map<string, number>();
        for (const vc of vcs) {
          const phase = vc.status?.phase ?? '(none)';
          if (phase === 'Failed')
            failed = `VirtualCluster ${vc.metadata.namespace}/${vc.metadata.name} Failed: ${JSON.stringify(vc.status?.conditions)}`;
          count.set(phase, (count.get(phase) ?? 0) + 1);
        }
        phases = JSON.stringify(Object.fromEntries(count));
        if (Date.now() - lastReport > 60_000) {
          lastReport = Date.now();
          options.log(`waiting: ${phases} after ${((Date.now() - started) / 1000).toFixed(0)} s`);
        }
        return (count.get('Ready') ?? 0) === options.count ? { value: true } : { notYet: phases };
      },
      {
        timeoutMs: options.timeoutSeconds * 1000,
        intervalMs: 2000,
        abort: () => serving.abort() ?? failed,
      },
    );
    return {};
  } catch (error) {
    if (!(error instanceof PollTimeout)) throw error;
    options.log(
      `not all Ready after ${options.timeoutSeconds} s (${phases}); measuring all the same`,
    );
    return { notAllReady: phases };
  }
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

/**
 * The VirtualCluster sync rate in slices of `sliceSeconds` until two slices in a row agree (or
 * `settleMaxSeconds` have passed: then `settled` is false).
 */
export async function settleSyncRate(
  stack: KubeCellStack,
  virtualClusters: number,
  options: { sliceSeconds: number; settleMaxSeconds: number; log: (line: string) => void },
): Promise<{ settled: boolean; slices: number[]; seconds: number }> {
  const start = Date.now();
  const slices: number[] = [];
  let settled = false;
  const agree = (a: number, b: number) => Math.abs(a - b) <= Math.max(0.25 * Math.max(a, b), 0.5);
  for (;;) {
    slices.push(await vcSyncRate(stack, options.sliceSeconds, virtualClusters));
    const [a, b] = slices.slice(-2);
    options.log(
      `  convergence: ${slices[slices.length - 1]} VirtualCluster syncs per VirtualCluster per minute over the last ${options.sliceSeconds} s`,
    );
    if (slices.length >= 2 && a !== undefined && b !== undefined && agree(a, b)) {
      settled = true;
      break;
    }
    if ((Date.now() - start) / 1000 + options.sliceSeconds > options.settleMaxSeconds) break;
  }
  return { settled, slices, seconds: round((Date.now() - start) / 1000) };
}

// --- the window ---

export type CpuReader = () => Record<string, number | undefined>;

export interface WindowStart {
  at: number;
  /** Byte offsets of the hook server's and Metacontroller's logs. */
  logFrom: number;
  mcLogFrom: number;
  hook: Sample[];
  mc: Sample[];
  cpu: Record<string, number | undefined>;
  load: number;
}

export async function startWindow(stack: KubeCellStack, cpu: CpuReader): Promise<WindowStart> {
  const logFrom = statSync(stack.hookServer.logFile).size;
  const mcLogFrom = statSync(stack.metacontroller.process.logFile).size;
  const hook = await scrape(`${stack.hookServerUrl}/metrics`);
  const mc = await scrape(stack.metacontroller.metricsUrl);
  return {
    logFrom,
    mcLogFrom,
    hook,
    mc,
    cpu: cpu(),
    load: round(os.loadavg()[0] ?? 0, 2),
    at: Date.now(),
  };
}

function requestBytesByHook(bytes: Map<string, { count: number; sum: number }>, minutes: number) {
  const requestBytes: Record<string, HookBytes> = {};
  for (const [key, entry] of [...bytes].sort(([a], [b]) => a.localeCompare(b))) {
    if (entry.count === 0) continue;
    requestBytes[key] = {
      count: entry.count,
      meanBytes: Math.round(entry.sum / entry.count),
      bytesPerMinute: Math.round(entry.sum / minutes),
    };
  }
  return requestBytes;
}

function metacontrollerFigures(mc: Sample[], mcAfter: Sample[], minutes: number) {
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
  return {
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
  };
}

/** The window's figures, from `start` until now; per Cell when there are several. */
export async function finishWindow(
  stack: KubeCellStack,
  start: WindowStart,
  cpu: CpuReader,
  counts: { virtualClusters: number; cells: number },
): Promise<{ window: WindowFigures; to: number }> {
  const hookAfter = await scrape(`${stack.hookServerUrl}/metrics`);
  const mcAfter = await scrape(stack.metacontroller.metricsUrl);
  const cpuAfter = cpu();
  const to = Date.now();
  const minutes = (to - start.at) / 60_000;
  const diff = difference(start.hook, hookAfter);
  const calls = hookCallsOf(diff);
  const bytes = requestBytesOf(diff);
  const perMinute = Object.fromEntries(
    Object.entries(calls.ok)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, count]) => [key, round(count / minutes, 2)]),
  );
  const vcSync = bytes.get('virtualcluster/sync');
  const cellSync = bytes.get('cell/sync');
  const window: WindowFigures = {
    seconds: round((to - start.at) / 1000),
    virtualClusterSyncsPerVirtualClusterPerMinute: round(
      (calls.ok['virtualcluster/sync'] ?? 0) / counts.virtualClusters / minutes,
      2,
    ),
    cellSyncsPerCellPerMinute: round((calls.ok['cell/sync'] ?? 0) / counts.cells / minutes, 2),
    planSyncsPerMinute: round((calls.ok['plan/sync'] ?? 0) / minutes, 2),
    ...(vcSync?.count ? { bytesPerVirtualClusterSync: Math.round(vcSync.sum / vcSync.count) } : {}),
    bytesPerCellSync: cellSync?.count ? Math.round(cellSync.sum / cellSync.count) : 0,
    perController: perControllerOf(diff, minutes),
    hookCallsPerMinute: perMinute,
    requestBytes: requestBytesByHook(bytes, minutes),
    hookFailures: calls.failed,
    ...metacontrollerFigures(difference(start.mc, mcAfter), mcAfter, minutes),
    cpuSecondsPerMinute: cpuPerMinute(start.cpu, cpuAfter, minutes),
    throttledOver1s: throttling(stack.metacontroller.process.logFile, start.mcLogFrom),
    loadAverage: [start.load, round(os.loadavg()[0] ?? 0, 2)],
  };
  return { window, to };
}

/**
 * Annotates one VirtualCluster (a change it must be synced for) and measures the
 * virtualcluster/sync requests that follow within 5 s of the first: the request size when a
 * quiet cluster syncs no VirtualCluster at all.
 */
export async function probeVirtualClusterSync(
  stack: KubeCellStack,
  client: KubeClient,
  virtualCluster: { namespace: string; name: string },
): Promise<{ syncs: number; meanBytes: number } | { error: string }> {
  const metricsUrl = `${stack.hookServerUrl}/metrics`;
  const vcSyncs = (samples: Sample[]) => okCalls(samples, 'virtualcluster', 'sync');
  try {
    const before = await scrape(metricsUrl);
    await client.patch(
      resourcePath({
        apiVersion: 'kubecell.io/v1alpha1',
        resource: 'virtualclusters',
        ...virtualCluster,
      }),
      { metadata: { annotations: { 'bench.kubecell.io/probe': new Date().toISOString() } } },
      'bench-user',
    );
    await poll(
      'a VirtualCluster sync after the probe',
      async () =>
        vcSyncs(await scrape(metricsUrl)) > vcSyncs(before)
          ? { value: true }
          : { notYet: 'no sync yet' },
      { timeoutMs: 120_000, intervalMs: 500 },
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
