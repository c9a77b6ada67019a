/**
 * Hook throughput and latency over HTTP with autocannon, for every case of bench/http-cases.ts,
 * against the real hook server and, in the same run, against the floor: a plain Node.js server
 * that only parses and re-serialises the same body (bench/floor-server.ts; over HTTPS with the
 * same certificate for the admission webhook). Each hook is reported as a ratio to the floor's
 * time per request (wall time / completed requests) at the same concurrency, and of the server
 * process's CPU time per request (bench/http-servers.ts says which processes and settings).
 *
 * How much is sent: a case whose concurrency times its body exceeds maxBodyBytesInFlight runs
 * with fewer connections (the largest that fits), recorded with the concurrency asked for:
 * autocannon keeps a copy of the request per connection and both servers buffer every body
 * they receive, so 64 × 146 MB (5,000 Nodes) would hold 9 GB in the client and in each server.
 * A server for which one round (one request per connection, served one after another, at the
 * pace of its fastest probe) does not fit ten times in the run's duration is measured by count
 * instead of duration: at least two rounds, after two requests of warm-up on one connection,
 * so that no run ends with many requests still in flight. Hook and floor are planned each at its own pace, so that
 * a fast floor beside a slow hook is not measured over a few milliseconds.
 */
import autocannon from 'autocannon';
import { httpCases, type HttpCase } from './http-cases.js';
import { postOnce } from './floor-tls.js';
import { startHttpServers, type HttpServers, type Target } from './http-servers.js';
import type { Json } from './stored.js';

export interface LoadRun {
  target: 'hook' | 'floor';
  connections: number;
  /** `requests`: measured by count, not duration (see the module comment). */
  measuredBy: 'duration' | 'requests';
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
  /** The apiserver stub's CPU per request, for the webhook's reviews (its lookups). */
  apiserverCpuPerRequestMs?: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

export interface HttpCaseResult {
  hook: string;
  path: string;
  bodyBytes: number;
  responseBytes: number;
  runs: Array<{
    connections: number;
    /** The concurrency asked for, when the run used fewer connections (see the module comment). */
    requestedConnections?: number;
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
  /** Nodes of the Cells measured (20 pods per Node). */
  cellNodes: number[];
  /** Request bytes the benchmark lets be in flight at once (see the module comment). */
  maxBodyBytesInFlight: number;
  log: (line: string) => void;
}

/** How one case is loaded at one concurrency. */
interface LoadPlan {
  connections: number;
  measure: { duration: number } | { amount: number };
  /** By count, on one connection: enough to warm the code, not a whole round of big bodies. */
  warmup?: { duration: number } | { amount: number; connections: 1 };
  /** autocannon's per-request timeout, seconds. */
  timeout: number;
}

export function loadPlan(
  asked: number,
  bodyBytes: number,
  secondsPerRequest: number,
  options: Pick<HttpOptions, 'durationSeconds' | 'warmupSeconds' | 'maxBodyBytesInFlight'>,
): LoadPlan {
  const connections = Math.max(
    1,
    Math.min(asked, Math.floor(options.maxBodyBytesInFlight / bodyBytes)),
  );
  const round = connections * secondsPerRequest;
  const timeout = Math.max(30, Math.ceil(round * 4));
  if (round * 10 <= options.durationSeconds) {
    return {
      connections,
      measure: { duration: options.durationSeconds },
      ...(options.warmupSeconds > 0 ? { warmup: { duration: options.warmupSeconds } } : {}),
      timeout,
    };
  }
  const rounds = Math.max(2, Math.ceil(options.durationSeconds / round));
  return {
    connections,
    measure: { amount: connections * rounds },
    ...(options.warmupSeconds > 0 ? { warmup: { amount: 2, connections: 1 } } : {}),
    timeout,
  };
}

interface Load {
  target: Target;
  path: string;
  body: Buffer;
  connections: number;
  apiserver?: HttpServers['apiserver'];
}

/** autocannon's run: a promise of the result that also reports each response as it comes. */
type Run = ReturnType<typeof autocannon> & { on(event: 'response', listener: () => void): void };

/**
 * One autocannon run. Its wall time is autocannon's `duration` when it runs for a duration;
 * by count it runs from the start to the last response: autocannon notices that every
 * connection is done only at its next sample tick (every second, lib/run.js `tickInterval`),
 * which would round the run up to whole seconds.
 */
async function load(run: Load, size: { duration: number } | { amount: number }, timeout: number) {
  const cpu = () => [run.target.server.cpuMs(), run.apiserver?.cpuMs()] as const;
  const before = cpu();
  const started = performance.now();
  let lastResponse = started;
  const running = autocannon({
    url: `${run.target.base}${run.path}`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: run.body,
    connections: run.connections,
    pipelining: 1,
    timeout,
    ...size,
  }) as Run;
  running.on('response', () => {
    lastResponse = performance.now();
  });
  const result = await running;
  const after = cpu();
  const spent = (i: 0 | 1) => {
    const [start, end] = [before[i], after[i]];
    return start !== undefined && end !== undefined ? end - start : undefined;
  };
  const seconds = 'amount' in size ? (lastResponse - started) / 1000 : result.duration;
  return { result, seconds, cpuMs: spent(0), apiserverCpuMs: spent(1) };
}

async function measure(target: 'hook' | 'floor', run: Load, plan: LoadPlan): Promise<LoadRun> {
  const { warmup } = plan;
  if (warmup && 'amount' in warmup) {
    await load(
      { ...run, connections: warmup.connections },
      { amount: warmup.amount },
      plan.timeout,
    );
  } else if (warmup) await load(run, warmup, plan.timeout);
  const { result, seconds, cpuMs, apiserverCpuMs } = await load(run, plan.measure, plan.timeout);
  const requests = result.requests.total;
  const per = (ms: number | undefined) =>
    ms !== undefined && requests > 0 ? ms / requests : undefined;
  const cpuPerRequestMs = per(cpuMs);
  const apiserverCpuPerRequestMs = per(apiserverCpuMs);
  return {
    target,
    connections: run.connections,
    measuredBy: 'amount' in plan.measure ? 'requests' : 'duration',
    durationSeconds: seconds,
    requests,
    timePerRequestMs: requests > 0 ? (seconds * 1000) / requests : Number.NaN,
    requestsPerSecond: requests / seconds,
    latencyMeanMs: result.latency.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    ...(cpuPerRequestMs !== undefined ? { cpuPerRequestMs } : {}),
    ...(apiserverCpuPerRequestMs !== undefined ? { apiserverCpuPerRequestMs } : {}),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

/** The fastest of a few calls one after another (at most 5 s of them), in seconds. */
async function pace(call: () => Promise<unknown>): Promise<number> {
  let fastest = Number.POSITIVE_INFINITY;
  const started = Date.now();
  for (let i = 0; i < 3 && Date.now() - started < 5000; i++) {
    const t = performance.now();
    await call();
    fastest = Math.min(fastest, (performance.now() - t) / 1000);
  }
  return fastest;
}

interface Probed {
  responseBytes: number;
  /** Each server's pace, for its load plan. */
  secondsPerRequest: Record<'hook' | 'floor', number>;
}

/**
 * Sends the body to each server, checking the hook's answer is the steady state's
 * (http-cases.ts) and the floor's a 200, then times a few more calls of each.
 */
async function probe(
  servers: HttpServers,
  httpCase: HttpCase,
  text: string,
  body: Json,
): Promise<Probed> {
  const { hook, floor } = servers.targets[httpCase.listener];
  const post = (target: Target) => postOnce(`${target.base}${httpCase.path}`, text, servers.ca);
  const answer = await post(hook);
  if (answer.status !== 200) {
    throw new Error(`hook server ${httpCase.hook}: ${answer.status} ${answer.text.slice(0, 500)}`);
  }
  const problem = httpCase.check(JSON.parse(answer.text) as Json, body);
  if (problem !== undefined) throw new Error(`hook server ${httpCase.hook}: ${problem}`);
  const floorAnswer = await post(floor);
  if (floorAnswer.status !== 200) throw new Error(`floor ${httpCase.hook}: ${floorAnswer.status}`);
  return {
    responseBytes: Buffer.byteLength(answer.text),
    secondsPerRequest: { hook: await pace(() => post(hook)), floor: await pace(() => post(floor)) },
  };
}

/** The case's body, built now and probed; the objects it was built from are let go. */
async function prepare(servers: HttpServers, httpCase: HttpCase) {
  const object = httpCase.body(new Date());
  const text = JSON.stringify(object);
  return { body: Buffer.from(text), ...(await probe(servers, httpCase, text, object)) };
}

const describePlan = (plan: LoadPlan) =>
  'amount' in plan.measure ? `${plan.measure.amount} requests` : `${plan.measure.duration} s`;

export async function runCase(
  servers: HttpServers,
  httpCase: HttpCase,
  options: HttpOptions,
): Promise<HttpCaseResult> {
  const { body, responseBytes, secondsPerRequest } = await prepare(servers, httpCase);
  const { hook, floor } = servers.targets[httpCase.listener];
  const apiserver = httpCase.listener === 'webhook' ? servers.apiserver : undefined;
  const runs: HttpCaseResult['runs'] = [];
  for (const asked of options.connections) {
    const floorPlan = loadPlan(asked, body.length, secondsPerRequest.floor, options);
    const hookPlan = loadPlan(asked, body.length, secondsPerRequest.hook, options);
    const { connections } = hookPlan; // the same for both: it depends on the body only
    options.log(
      `http: ${httpCase.hook} (${(body.length / 1e6).toFixed(2)} MB) at concurrency ` +
        `${connections}${connections === asked ? '' : ` (asked ${asked})`}: floor ` +
        `${describePlan(floorPlan)}, hook ${describePlan(hookPlan)}`,
    );
    const common = { path: httpCase.path, body, connections };
    const floorRun = await measure('floor', { ...common, target: floor }, floorPlan);
    const hookRun = await measure('hook', { ...common, target: hook, apiserver }, hookPlan);
    runs.push({
      connections,
      ...(connections === asked ? {} : { requestedConnections: asked }),
      hook: hookRun,
      floor: floorRun,
      ratio: hookRun.timePerRequestMs / floorRun.timePerRequestMs,
      ...(hookRun.cpuPerRequestMs !== undefined && floorRun.cpuPerRequestMs !== undefined
        ? { cpuRatio: hookRun.cpuPerRequestMs / floorRun.cpuPerRequestMs }
        : {}),
    });
  }
  return { hook: httpCase.hook, path: httpCase.path, bodyBytes: body.length, responseBytes, runs };
}

export async function runHttpBenchmark(options: HttpOptions): Promise<HttpCaseResult[]> {
  const servers = await startHttpServers(options.maxBodyBytesInFlight);
  try {
    const results: HttpCaseResult[] = [];
    for (const httpCase of httpCases(options.cellNodes)) {
      results.push(await runCase(servers, httpCase, options));
    }
    return results;
  } finally {
    await servers.stop();
  }
}
