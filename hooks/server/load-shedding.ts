/**
 * Load shedding for hook calls and admission reviews: past `maxInflight` calls in progress, a
 * new call is answered at once with `429 Too Many Requests` and `Retry-After: <seconds>` instead
 * of queueing.
 *
 * Why: the server runs one event loop. A burst of large calls (a Cell sync for 1,000 Nodes is a
 * ~28 MB body) queues behind one another; past Metacontroller's hook timeout (10 s) every queued
 * call is wasted work, answered to a client that already gave up and will send it again. A 429
 * costs microseconds, and Metacontroller retries it after `Retry-After` (DESIGN.md §6), so the
 * work is spread out instead of lost.
 *
 * A call is in flight from the moment its body has been received in full, before it is parsed
 * (parsing is most of the cost, and runs only for admitted calls), until its answer is written
 * or its client goes away. A client that sends its body slowly, or never finishes it, holds no
 * slot: otherwise 64 connections sending one byte each would have every hook call answered 429
 * until Node's 300 s request timeout (issue 15, finding 1). How long such a client may hold its
 * connection is bounded by the deadlines of hooks/server/deadlines.ts instead. Express gets the
 * slot through `express.json({verify})`, which body-parser calls with the whole (decoded) body
 * just before parsing it; `admit` is idempotent, so a handler may also ask for it.
 *
 * Only `POST /hooks/...` and `POST /admission/...` are limited; `/healthz`, `/readyz` and
 * `/metrics` never are, so a busy server is not restarted by its liveness probe and stays
 * observable.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, type Registry } from 'prom-client';

type Request = IncomingMessage;
type Response = ServerResponse;

export interface ShedMetricNames {
  /** Counter of shed calls. */
  shed: string;
  shedHelp: string;
  /** Gauge of calls in flight. */
  inflight: string;
  inflightHelp: string;
  /** Label names of the shed counter; `labelsOf` returns their values. */
  labelNames: readonly string[];
}

export interface LoadSheddingOptions {
  /** Most calls in flight at once; 0 turns shedding off. */
  maxInflight: number;
  /** Value of the `Retry-After` header (seconds) on a shed call. */
  retryAfterSeconds: number;
  /** Where the shed counter and the in-flight gauge are registered. */
  registry: Registry;
  /** The variable that sets `maxInflight`, for the message. Default KUBECELL_MAX_INFLIGHT. */
  setting?: string;
  /** The server and what it counts, for the message. Default `the hook server`, `hook calls`. */
  server?: string;
  what?: string;
  /** Metric names; default the hook server's (kubecell_hook_shed_total, kubecell_hook_inflight). */
  metrics?: ShedMetricNames;
  /** Labels for the shed counter, e.g. the controller and hook of the URL. */
  labelsOf?: (req: Request, res: Response) => Record<string, string>;
}

export const SHED_METRIC = 'kubecell_hook_shed_total';
export const INFLIGHT_METRIC = 'kubecell_hook_inflight';

const HOOK_METRICS: ShedMetricNames = {
  shed: SHED_METRIC,
  shedHelp:
    'Hook calls answered 429 (with Retry-After) because KUBECELL_MAX_INFLIGHT calls were in flight.',
  inflight: INFLIGHT_METRIC,
  inflightHelp:
    'Hook calls in flight (body received: being parsed, handled, or its answer being written).',
  labelNames: ['controller', 'hook'],
};

/** `err.type` of a ShedError, as body-parser errors carry a type. */
export const SHED_ERROR_TYPE = 'kubecell.shed';

/**
 * Thrown from body-parser's `verify` when no slot is free: body-parser passes it on to the
 * error handlers (keeping its status 429), which answer with its message. `Retry-After` is
 * already set on the response.
 */
export class ShedError extends Error {
  readonly status = 429;
  readonly expose = true;
  readonly type = SHED_ERROR_TYPE;
  constructor(message: string) {
    super(message);
    this.name = 'ShedError';
  }
}

export function isShedError(err: unknown): err is ShedError {
  return err instanceof ShedError;
}

export type Admission = { ok: true } | { ok: false; message: string };

export interface LoadShedder {
  /**
   * Takes a slot for this call (once: a second call for the same response is a no-op), or counts
   * the call as shed, sets `Retry-After` and says why. The slot is freed when the answer is
   * written or the connection closes.
   */
  admit(req: Request, res: Response): Admission;
  /** `express.json({verify})`: admits the call once its body is complete; throws a ShedError. */
  verify(req: Request, res: Response): void;
  /** Calls in flight now. */
  inflight(): number;
}

const ADMITTED = Symbol('kubecell.admitted');

export function createLoadShedder(options: LoadSheddingOptions): LoadShedder {
  const { maxInflight, retryAfterSeconds } = options;
  const names = options.metrics ?? HOOK_METRICS;
  const setting = options.setting ?? 'KUBECELL_MAX_INFLIGHT';
  const server = options.server ?? 'the hook server';
  const what = options.what ?? 'hook calls';
  const { shed, gauge } = sheddingMetrics(options.registry, names);
  let inflight = 0;

  /** Holds a slot until the answer is written or the connection closes. */
  const hold = (res: Response): void => {
    inflight += 1;
    gauge.set(inflight);
    let done = false;
    const release = (): void => {
      if (done) return;
      done = true;
      inflight -= 1;
      gauge.set(inflight);
    };
    res.once('finish', release);
    res.once('close', release);
  };

  const admit = (req: Request, res: Response): Admission => {
    const marked = res as Response & { [ADMITTED]?: true };
    if (marked[ADMITTED]) return { ok: true };
    if (maxInflight > 0 && inflight >= maxInflight) {
      shed.inc(options.labelsOf?.(req, res) ?? defaultLabels(names.labelNames));
      if (!res.headersSent) res.setHeader('Retry-After', String(retryAfterSeconds));
      return {
        ok: false,
        message:
          `${server} is busy: ${maxInflight} ${what} are in flight (${setting}); ` +
          `retry after ${retryAfterSeconds} s`,
      };
    }
    marked[ADMITTED] = true;
    hold(res);
    return { ok: true };
  };

  return {
    admit,
    verify(req, res) {
      const admission = admit(req, res);
      if (!admission.ok) throw new ShedError(admission.message);
    },
    inflight: () => inflight,
  };
}

function sheddingMetrics(registry: Registry, names: ShedMetricNames) {
  const shed = metricOf(
    registry,
    names.shed,
    () =>
      new Counter({
        name: names.shed,
        help: names.shedHelp,
        labelNames: names.labelNames,
        registers: [registry],
      }),
  );
  const gauge = metricOf(
    registry,
    names.inflight,
    () => new Gauge({ name: names.inflight, help: names.inflightHelp, registers: [registry] }),
  );
  return { shed, gauge };
}

function defaultLabels(labelNames: readonly string[]): Record<string, string> {
  return Object.fromEntries(labelNames.map((name) => [name, 'unknown']));
}

/** The metric already registered under `name` (a second app on the same registry), or a new one. */
function metricOf<T>(registry: Registry, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create();
}
