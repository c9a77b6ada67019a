/**
 * Load shedding for hook calls: past `maxInflight` calls in progress, a new call is answered
 * at once with `429 Too Many Requests` and `Retry-After: <seconds>` instead of queueing.
 *
 * Why: the hook server runs one event loop. A burst of large calls (a Cell sync for 1,000
 * Nodes is a ~28 MB body) queues behind one another; past Metacontroller's hook timeout (10 s)
 * every queued call is wasted work, answered to a client that already gave up and will send it
 * again. A 429 costs microseconds, and Metacontroller retries it after `Retry-After`
 * (DESIGN.md §6), so the work is spread out instead of lost.
 *
 * A call is in flight from the moment its route is matched (before its body is read: reading
 * and parsing the body is most of the cost) until its answer is written or its client goes
 * away. Only `POST /hooks/...` is limited; `/healthz`, `/readyz` and `/metrics` never are, so a
 * busy server is not restarted by its liveness probe and stays observable.
 */
import type { NextFunction, Request, Response } from 'express';
import { Counter, Gauge, type Registry } from 'prom-client';

export interface LoadSheddingOptions {
  /** Most hook calls in flight at once; 0 turns shedding off. */
  maxInflight: number;
  /** Value of the `Retry-After` header (seconds) on a shed call. */
  retryAfterSeconds: number;
  /** Where the shed counter and the in-flight gauge are registered. */
  registry: Registry;
  /**
   * Answers a shed call. Default: `429 {error}` as JSON. The app passes its own so that a
   * shed call is logged and counted like every other hook call.
   */
  reject?: (res: Response, message: string) => void;
  /** Labels for the shed counter, e.g. the controller and hook of the URL. */
  labelsOf?: (req: Request, res: Response) => { controller: string; hook: string };
}

export const SHED_METRIC = 'kubecell_hook_shed_total';
export const INFLIGHT_METRIC = 'kubecell_hook_inflight';

export interface LoadShedder {
  /** Express middleware for the hook routes. */
  middleware(req: Request, res: Response, next: NextFunction): void;
  /** Calls in flight now. */
  inflight(): number;
}

export function createLoadShedder(options: LoadSheddingOptions): LoadShedder {
  const { maxInflight, retryAfterSeconds, registry } = options;
  const shed = metricOf(
    registry,
    SHED_METRIC,
    () =>
      new Counter({
        name: SHED_METRIC,
        help: 'Hook calls answered 429 (with Retry-After) because KUBECELL_MAX_INFLIGHT calls were in flight.',
        labelNames: ['controller', 'hook'] as const,
        registers: [registry],
      }),
  );
  const gauge = metricOf(
    registry,
    INFLIGHT_METRIC,
    () =>
      new Gauge({
        name: INFLIGHT_METRIC,
        help: 'Hook calls in flight (body being read, handler running or answer being written).',
        registers: [registry],
      }),
  );
  const reject =
    options.reject ??
    ((res: Response, message: string) => res.status(429).json({ error: message }));
  let inflight = 0;

  return {
    inflight: () => inflight,
    middleware(req, res, next) {
      if (maxInflight > 0 && inflight >= maxInflight) {
        shed.inc(options.labelsOf?.(req, res) ?? { controller: 'unknown', hook: 'unknown' });
        // The body is never parsed: Node discards it after the answer, keeping the connection.
        res.set('Retry-After', String(retryAfterSeconds));
        reject(
          res,
          `the hook server is busy: ${maxInflight} hook calls are in flight ` +
            `(KUBECELL_MAX_INFLIGHT); retry after ${retryAfterSeconds} s`,
        );
        return;
      }
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
      next();
    },
  };
}

/** The metric already registered under `name` (a second app on the same registry), or a new one. */
function metricOf<T>(registry: Registry, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create();
}
