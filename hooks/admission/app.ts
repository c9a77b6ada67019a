/**
 * The HTTP side of the admission webhooks, served on the HTTPS port:
 *
 *   POST /admission/validate   ValidatingWebhookConfiguration kubecell-validating
 *   POST /admission/mutate     MutatingWebhookConfiguration kubecell-mutating
 *   GET  /healthz              the HTTPS listener answers (for a probe over TLS)
 *
 * A body that is not an `admission.k8s.io/v1` AdmissionReview with a `request.uid` gets a 400
 * with a JSON `{error}` (there is no uid to answer to); anything wrong inside a well-formed
 * review is a denial with a reason (each webhook's route: review-route.ts). Every review produces
 * one log line and one metrics sample (review-log.ts); request bodies are never logged, and what the log line and the answers quote from a request
 * (names, uids, kinds, values) is bounded (hooks/json/echo.ts).
 *
 * Like the hook server (hooks/server/app.ts), a body is read only uncompressed, within its limit
 * and the process-wide budget of body bytes (hooks/server/body-gate.ts), and a review takes one of `maxInflight` slots only once
 * its body is received (hooks/server/load-shedding.ts: 429 with Retry-After past the limit), and
 * a call whose answer is not written within the request deadline is closed
 * (hooks/server/deadlines.ts); the headers and body deadlines are the HTTPS server's (tls.ts).
 */
import express, { type Response } from 'express';
import { Registry } from 'prom-client';
import { defaultBodyBudget, type BodyBudget } from '../server/body-budget.js';
import { gateBody } from '../server/body-gate.js';
import { DEFAULT_DEADLINES, DEFAULTS, WEBHOOK_BODY_LIMIT_BYTES } from '../server/config.js';
import type { Deadlines } from '../server/deadlines.js';
import { serveFallbacks } from '../server/fallbacks.js';
import { createLoadShedder, type LoadShedder } from '../server/load-shedding.js';
import type { Logger } from '../server/logger.js';
import { WEBHOOK_DEFAULTS } from './config.js';
import type { ClusterLookup } from './lookup.js';
import type { AdmissionMetrics } from './metrics.js';
import { reviewCallOf } from './review-log.js';
import { reviewRoute, type ReviewRouteContext } from './review-route.js';

export interface AdmissionAppDeps {
  lookup: ClusterLookup;
  /** The watch cache (cached-lookup.ts), tried before `lookup`; it may only admit (D38). */
  cache?: ClusterLookup;
  logger: Logger;
  metrics?: AdmissionMetrics;
  controllerNamespace?: string;
  lookupTimeoutMs?: number;
  bodyLimitBytes?: number;
  /** Reviews in flight before new ones get 429; 0 = no limit. Default 64. */
  maxInflight?: number;
  /** `Retry-After` of a 429 answer. Default 1 s. */
  retryAfterSeconds?: number;
  /** The request deadline is applied here (the others by the HTTPS server, tls.ts). */
  deadlines?: Deadlines;
  /** Where the shedding metrics go; none when absent. */
  registry?: Registry;
  /** The process-wide budget of body bytes (hooks/server/body-budget.ts); own one when absent. */
  bodyBudget?: BodyBudget;
}

/** Shed reviews and reviews in flight, beside the hook server's own (load-shedding.ts). */
export const ADMISSION_SHED_METRICS = {
  shed: 'kubecell_admission_shed_total',
  shedHelp:
    'AdmissionReviews answered 429 (with Retry-After) because KUBECELL_WEBHOOK_MAX_INFLIGHT reviews were in flight.',
  inflight: 'kubecell_admission_inflight',
  inflightHelp: 'AdmissionReviews in flight (body received: being parsed, checked or answered).',
  labelNames: ['webhook'],
} as const;

export function createAdmissionApp(deps: AdmissionAppDeps): express.Express {
  const limitBytes = deps.bodyLimitBytes ?? WEBHOOK_BODY_LIMIT_BYTES;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  const shedder = admissionShedder(deps);
  const context: ReviewRouteContext = {
    deps,
    shedder,
    // Reviews are never inflated (hooks/server/body-gate.ts); `inflate: false` backs its 415.
    jsonBody: gateBody(
      express.json({ limit: limitBytes, verify: shedder.verify, inflate: false }),
      {
        limitBytes,
        budget: deps.bodyBudget ?? defaultBodyBudget(retryAfterOf(deps)),
      },
    ),
    limitBytes,
    deadlines: deps.deadlines ?? DEFAULT_DEADLINES,
  };
  app.post('/admission/validate', ...reviewRoute('validate', context));
  app.post('/admission/mutate', ...reviewRoute('mutate', context));
  app.all(['/admission/validate', '/admission/mutate'], (req, res) => {
    res
      .status(405)
      .set('Allow', 'POST')
      .json({ error: `admission webhooks accept POST only, got ${req.method}` });
  });

  serveFallbacks(app, deps.logger);
  return app;
}

/** The slots of reviews in flight (hooks/server/load-shedding.ts), with their own metrics. */
function admissionShedder(deps: AdmissionAppDeps): LoadShedder {
  return createLoadShedder({
    maxInflight: deps.maxInflight ?? Number(WEBHOOK_DEFAULTS.KUBECELL_WEBHOOK_MAX_INFLIGHT),
    retryAfterSeconds: retryAfterOf(deps),
    // A registry of its own when none is given: the metrics then go nowhere.
    registry: deps.registry ?? new Registry(),
    setting: 'KUBECELL_WEBHOOK_MAX_INFLIGHT',
    server: 'the KubeCell admission webhook',
    what: 'reviews',
    metrics: ADMISSION_SHED_METRICS,
    labelsOf: (_req, res) => ({ webhook: reviewCallOf(res as Response).webhook }),
  });
}

function retryAfterOf(deps: AdmissionAppDeps): number {
  return deps.retryAfterSeconds ?? Number(DEFAULTS.KUBECELL_RETRY_AFTER_SECONDS);
}
