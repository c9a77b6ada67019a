/**
 * Hook throughput and latency over HTTP with autocannon, against the real hook server
 * (`node --import tsx hooks/main.ts`, logging one info line per call to /dev/null as in
 * production) and, in the same run, against the floor: a plain Node.js server that only parses
 * and re-serialises the same body (bench/floor-server.ts). Each hook is reported as a ratio to
 * the floor's time per request (wall time / completed requests) at the same concurrency, and
 * of the server process's CPU time per request.
 */
import autocannon from 'autocannon';
import { freeLoopbackPorts } from '../test/cluster/ports.js';
import { planSyncBody, virtualClusterSyncBody, cellSyncBody, type Json } from './bodies.js';
import { startServer, type Server } from './processes.js';

export interface LoadRun {
  target: 'hook' | 'floor';
  connections: number;
  durationSeconds: number;
  requests: number;
  /** Wall time per completed request: duration / requests. */
  timePerRequestMs: number;
  requestsPerSecond: number;
  latencyMeanMs: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** Server CPU (user + system) per request; undefined off Linux. */
  cpuPerRequestMs?: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

export interface HttpCaseResult {
  hook: string;
  bodyBytes: number;
  responseBytes: number;
  runs: Array<{
    connections: number;
    hook: LoadRun;
    floor: LoadRun;
    /** hook / floor, time per request. */
    ratio: number;
    /** hook / floor, server CPU per request. */
    cpuRatio?: number;
  }>;
}

export interface HttpOptions {
  durationSeconds: number;
  warmupSeconds: number;
  connections: number[];
  /** Nodes of the Cell the bodies describe (the Cell sync body carries 20 pods per Node). */
  cellNodes: number;
  log: (line: string) => void;
}

interface HttpCase {
  hook: string;
  path: string;
  body: string;
}

function cases(now: Date, cellNodes: number): HttpCase[] {
  const text = (body: Json) => JSON.stringify(body);
  return [
    {
      hook: 'virtualcluster/sync',
      path: '/hooks/virtualcluster/sync',
      body: text(virtualClusterSyncBody(now, cellNodes)),
    },
    {
      hook: 'cell/sync',
      path: '/hooks/cell/sync',
      body: text(cellSyncBody({ nodes: cellNodes, podsPerNode: 20, hostNamespaces: 20 }, now)),
    },
    { hook: 'plan/sync', path: '/hooks/plan/sync', body: text(planSyncBody(now, cellNodes)) },
  ];
}

async function load(
  server: Server,
  path: string,
  body: string,
  connections: number,
  seconds: number,
) {
  const cpuBefore = server.cpuMs();
  const result = await autocannon({
    url: `${server.base}${path}`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections,
    pipelining: 1,
    duration: seconds,
    timeout: 30,
  });
  const cpuAfter = server.cpuMs();
  return {
    result,
    cpuMs: cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter - cpuBefore : undefined,
  };
}

async function measure(
  target: 'hook' | 'floor',
  server: Server,
  path: string,
  body: string,
  connections: number,
  options: HttpOptions,
): Promise<LoadRun> {
  if (options.warmupSeconds > 0) await load(server, path, body, connections, options.warmupSeconds);
  const { result, cpuMs } = await load(server, path, body, connections, options.durationSeconds);
  const requests = result.requests.total;
  return {
    target,
    connections,
    durationSeconds: result.duration,
    requests,
    timePerRequestMs: requests > 0 ? (result.duration * 1000) / requests : Number.NaN,
    requestsPerSecond: requests / result.duration,
    latencyMeanMs: result.latency.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    ...(cpuMs !== undefined && requests > 0 ? { cpuPerRequestMs: cpuMs / requests } : {}),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

/** One request, to check the answer is a 200 before measuring. */
async function probe(server: Server, path: string, body: string): Promise<number> {
  const res = await fetch(`${server.base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const text = await res.text();
  if (res.status !== 200)
    throw new Error(`${server.name} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
  return Buffer.byteLength(text);
}

export async function runHttpBenchmark(options: HttpOptions): Promise<HttpCaseResult[]> {
  const [hookPort, floorPort] = (await freeLoopbackPorts(2)) as [number, number];
  const hookServer = await startServer({
    name: 'hook server',
    script: 'hooks/main.ts',
    port: hookPort,
    readyPath: '/readyz',
    env: {
      KUBECELL_PORT: String(hookPort),
      KUBECELL_LOG_LEVEL: 'info',
      KUBECELL_BODY_LIMIT: '64mb',
      KUBECELL_MAX_INFLIGHT: '64',
    },
  });
  const floorServer = await startServer({
    name: 'floor server',
    script: 'bench/floor-server.ts',
    args: [String(floorPort)],
    port: floorPort,
    readyPath: '/',
  }).catch(async (err: unknown) => {
    await hookServer.stop();
    throw err;
  });
  try {
    const results: HttpCaseResult[] = [];
    for (const { hook, path, body } of cases(new Date(), options.cellNodes)) {
      const responseBytes = await probe(hookServer, path, body);
      await probe(floorServer, path, body);
      const runs: HttpCaseResult['runs'] = [];
      for (const connections of options.connections) {
        options.log(`http: ${hook} at concurrency ${connections}`);
        const floor = await measure('floor', floorServer, path, body, connections, options);
        const hookRun = await measure('hook', hookServer, path, body, connections, options);
        runs.push({
          connections,
          hook: hookRun,
          floor,
          ratio: hookRun.timePerRequestMs / floor.timePerRequestMs,
          ...(hookRun.cpuPerRequestMs !== undefined && floor.cpuPerRequestMs !== undefined
            ? { cpuRatio: hookRun.cpuPerRequestMs / floor.cpuPerRequestMs }
            : {}),
        });
      }
      results.push({ hook, bodyBytes: Buffer.byteLength(body), responseBytes, runs });
    }
    return results;
  } finally {
    await hookServer.stop();
    await floorServer.stop();
  }
}
