/**
 * Prometheus metrics for `GET /metrics`, on a registry of their own (not
 * prom-client's global one) so tests and embedders get independent counts.
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RegisteredController } from './registry.js';

export interface HookCallSample {
  /** As in the URL when registered, else `unknown` (URL segments are caller-controlled). */
  controller: string;
  hook: string;
  status: number;
  durationSeconds: number;
  /** The request body's size as announced by Content-Length; undefined when not announced. */
  requestBytes?: number;
}

export interface HookMetrics {
  registry: Registry;
  observeHookCall(sample: HookCallSample): void;
  /** Starts the error series of these controllers' hooks at 0. */
  startSeries(controllers: readonly RegisteredController[]): void;
}

export interface MetricsOptions {
  /** Also export Node.js process metrics (CPU, memory, event loop). Default true. */
  processMetrics?: boolean;
}

export function createMetrics({ processMetrics = true }: MetricsOptions = {}): HookMetrics {
  const registry = new Registry();
  if (processMetrics) collectDefaultMetrics({ register: registry });

  const requests = new Counter({
    name: 'kubecell_hook_requests_total',
    help: 'Hook calls, by controller, hook and HTTP status code.',
    labelNames: ['controller', 'hook', 'code'] as const,
    registers: [registry],
  });
  const errors = new Counter({
    name: 'kubecell_hook_errors_total',
    help: 'Hook calls that did not answer 200; Metacontroller records a SyncError and retries.',
    labelNames: ['controller', 'hook'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'kubecell_hook_duration_seconds',
    help: "Time to answer a hook call, body parsing included (Metacontroller's default timeout is 10 s).",
    labelNames: ['controller', 'hook'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });

  const requestBytes = new Histogram({
    name: 'kubecell_hook_request_bytes',
    help: 'Size of a hook request body (Content-Length), by controller and hook: what Metacontroller sends per sync.',
    labelNames: ['controller', 'hook'] as const,
    buckets: [1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216],
    registers: [registry],
  });

  return {
    registry,
    // So that rate() and increase() see the first error.
    startSeries(controllers) {
      for (const { controller, hooks } of controllers) {
        for (const hook of hooks) errors.labels({ controller, hook }).inc(0);
      }
    },
    observeHookCall({ controller, hook, status, durationSeconds, requestBytes: bytes }) {
      const labels = { controller, hook };
      requests.labels({ ...labels, code: String(status) }).inc();
      if (status !== 200) errors.labels(labels).inc();
      duration.labels(labels).observe(durationSeconds);
      if (bytes !== undefined) requestBytes.labels(labels).observe(bytes);
    },
  };
}
