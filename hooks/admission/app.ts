/**
 * The HTTP side of the admission webhooks, served on the HTTPS port:
 *
 *   POST /admission/validate   ValidatingWebhookConfiguration kubecell-validating
 *   POST /admission/mutate     MutatingWebhookConfiguration kubecell-mutating
 *   GET  /healthz              the HTTPS listener answers (for a probe over TLS)
 *
 * A body that is not an `admission.k8s.io/v1` AdmissionReview with a `request.uid` gets a 400
 * with a JSON `{error}` (there is no uid to answer to); anything wrong inside a well-formed
 * review is a denial with a reason. Every review produces one log line and one metrics sample;
 * request bodies are never logged, and what the log line and the answers quote from a request
 * (names, uids, kinds, values) is bounded (hooks/json/echo.ts).
 *
 * Like the hook server (hooks/server/app.ts), a review takes one of `maxInflight` slots only once
 * its body is received (hooks/server/load-shedding.ts: 429 with Retry-After past the limit), and
 * a call whose answer is not written within the request deadline is closed
 * (hooks/server/deadlines.ts); the headers and body deadlines are the HTTPS server's (tls.ts).
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { Registry } from 'prom-client';
import { describeBodyError } from '../server/body-errors.js';
import { DEFAULT_DEADLINES, DEFAULTS } from '../server/config.js';
import { requestDeadline, timeoutOf, type Deadlines } from '../server/deadlines.js';
import { boundMessage, echo } from '../json/echo.js';
import { createLoadShedder, isShedError } from '../server/load-shedding.js';
import type { Logger } from '../server/logger.js';
import { MAX_BODY_DEPTH, nestingDepthExceeds } from '../server/malformed-input.js';
import { WEBHOOK_DEFAULTS } from './config.js';
import type { ClusterLookup } from './lookup.js';
import type { AdmissionMetrics, AdmissionResult, AdmissionWebhook } from './metrics.js';
import {
  deny,
  parseAdmissionReview,
  reviewOf,
  type AdmissionRequest,
  type AdmissionResponse,
} from './review.js';
import { mutateReview, validateReview } from './webhook.js';

/**
 * The apiserver refuses objects over 3 MiB; an UPDATE review carries the object twice.
 * KUBECELL_BODY_LIMIT (64mb, sized for Cell syncs) does not apply here.
 */
export const ADMISSION_BODY_LIMIT_BYTES = 8 * 1024 * 1024;

export interface AdmissionAppDeps {
  lookup: ClusterLookup;
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

interface ReviewCall {
  startedAt: bigint;
  webhook: AdmissionWebhook;
  request?: AdmissionRequest;
  response?: AdmissionResponse;
  error?: string;
}

/** What the log line says of a review the rules did not answer, by status. */
const UNANSWERED: Record<number, string> = { 408: 'timeout', 429: 'shed', 499: 'client_gone' };

function formatBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)}mb`;
  if (bytes % 1024 === 0) return `${bytes / 1024}kb`;
  return `${bytes}b`;
}

export function createAdmissionApp(deps: AdmissionAppDeps): express.Express {
  const { logger, metrics } = deps;
  const limitBytes = deps.bodyLimitBytes ?? ADMISSION_BODY_LIMIT_BYTES;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  const shedder = createLoadShedder({
    maxInflight: deps.maxInflight ?? Number(WEBHOOK_DEFAULTS.KUBECELL_WEBHOOK_MAX_INFLIGHT),
    retryAfterSeconds: deps.retryAfterSeconds ?? Number(DEFAULTS.KUBECELL_RETRY_AFTER_SECONDS),
    // A registry of its own when none is given: the metrics then go nowhere.
    registry: deps.registry ?? new Registry(),
    setting: 'KUBECELL_WEBHOOK_MAX_INFLIGHT',
    server: 'the KubeCell admission webhook',
    what: 'reviews',
    metrics: ADMISSION_SHED_METRICS,
    labelsOf: (_req, res) => ({ webhook: (res as Response).locals.reviewCall.webhook }),
  });
  const jsonBody = express.json({ limit: limitBytes, verify: shedder.verify });
  const { bodySeconds, requestSeconds } = deps.deadlines ?? DEFAULT_DEADLINES;

  const route = (webhook: AdmissionWebhook) => [
    start(webhook),
    requestDeadline(requestSeconds),
    jsonBody,
    async (req: Request, res: Response): Promise<void> => {
      const call = res.locals.reviewCall as ReviewCall;
      const body: unknown = req.body;
      // A review with a body was admitted by `verify` (a no-op here); one without a body is
      // answered 400 or 415 at once.
      if (body !== undefined) {
        const admission = shedder.admit(req, res);
        if (!admission.ok) {
          fail(res, 429, admission.message);
          return;
        }
      }
      if (body === undefined) {
        const type = req.get('content-type');
        if (type !== undefined && req.is('application/json') === false) {
          fail(
            res,
            415,
            `request body must be JSON (Content-Type: application/json), got ${echo(type, 100)}`,
          );
        } else {
          fail(res, 400, 'request body is required: an admission.k8s.io/v1 AdmissionReview');
        }
        return;
      }
      const parsed = parseAdmissionReview(body);
      if (!parsed.ok) {
        fail(res, 400, parsed.message);
        return;
      }
      call.request = parsed.request;
      let response: AdmissionResponse;
      try {
        response =
          webhook === 'validate'
            ? await validateReview(parsed.request, deps)
            : mutateReview(parsed.request);
      } catch (err) {
        // A bug must not take the server down nor let the object through.
        call.error = err instanceof Error ? err.message : String(err);
        // Nesting no Kubernetes object has (the validators recurse): the request's fault, not ours.
        const { object, oldObject } = parsed.request;
        if (
          nestingDepthExceeds(object, MAX_BODY_DEPTH) ||
          nestingDepthExceeds(oldObject, MAX_BODY_DEPTH)
        ) {
          call.response = deny(
            parsed.request.uid,
            400,
            'BadRequest',
            `the object nests deeper than ${MAX_BODY_DEPTH} levels; no Kubernetes object does`,
          );
          res.status(200).json(reviewOf(call.response));
          return;
        }
        logger.error('admission webhook failed', {
          webhook,
          error: call.error,
          stack: err instanceof Error ? err.stack : undefined,
        });
        response = {
          uid: parsed.request.uid,
          allowed: false,
          status: {
            code: 500,
            reason: 'InternalError',
            message: `the KubeCell ${webhook} webhook failed: ${call.error}`,
          },
        };
      }
      call.response = response;
      res.status(200).json(reviewOf(response));
    },
    (err: unknown, _req: Request, res: Response, next: NextFunction): void => {
      if (res.headersSent) return next(err);
      if (isShedError(err)) {
        // No free slot once the body was received; Retry-After is set.
        fail(res, 429, err.message);
        return;
      }
      const typed = err as { type?: unknown; length?: unknown };
      if (typed?.type === 'entity.too.large') {
        const size = typeof typed.length === 'number' ? ` (${typed.length} bytes)` : '';
        fail(
          res,
          413,
          `AdmissionReview body${size} exceeds the limit of ${formatBytes(limitBytes)}; ` +
            'the apiserver never sends one this large (objects are limited to 3 MiB)',
        );
        return;
      }
      const answer = describeBodyError(err, formatBytes(limitBytes));
      if (answer !== undefined) {
        fail(res, answer.status, answer.message);
        return;
      }
      next(err);
    },
  ];

  app.post('/admission/validate', ...route('validate'));
  app.post('/admission/mutate', ...route('mutate'));
  app.all(['/admission/validate', '/admission/mutate'], (req, res) => {
    res
      .status(405)
      .set('Allow', 'POST')
      .json({ error: `admission webhooks accept POST only, got ${req.method}` });
  });

  app.use((req, res) => {
    res.status(404).json({ error: `no route for ${echo(req.method)} ${echo(req.path)}` });
  });

  app.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const message = boundMessage(err instanceof Error ? err.message : String(err));
    logger.error('request failed', {
      method: echo(req.method),
      path: echo(req.path),
      error: message,
    });
    res.status(500).json({ error: message });
  });

  function start(webhook: AdmissionWebhook) {
    return (req: Request, res: Response, next: NextFunction): void => {
      const call: ReviewCall = { startedAt: process.hrtime.bigint(), webhook };
      res.locals.reviewCall = call;
      let recorded = false;
      const once = (status: number): void => {
        if (recorded) return;
        recorded = true;
        record(call, status);
      };
      res.once('finish', () => once(res.statusCode));
      // Closed before the answer was written: a deadline (408, hooks/server/deadlines.ts) or the
      // apiserver gave up (its webhook timeout): 499, client closed request.
      res.once('close', () => {
        if (recorded) return;
        const timedOut = timeoutOf(req, res, bodySeconds);
        if (timedOut !== undefined) call.error = timedOut;
        else call.error ??= 'client closed the connection before the answer was sent';
        once(timedOut !== undefined ? 408 : 499);
      });
      next();
    };
  }

  function record(call: ReviewCall, status: number): void {
    const durationMs = Number(process.hrtime.bigint() - call.startedAt) / 1e6;
    const response = call.response;
    let result: AdmissionResult;
    if (status !== 200 || response === undefined) result = 'bad_request';
    else if (response.allowed) result = 'allowed';
    else result = (response.status?.code ?? 0) >= 500 ? 'error' : 'denied';
    const request = call.request;
    const object = (request?.object ?? request?.oldObject) as
      { metadata?: { name?: unknown } } | undefined;
    const name = request?.name || object?.metadata?.name;
    // Not answered by the webhook's rules: shed (429, counted by kubecell_admission_shed_total),
    // closed by a deadline (408) or by the apiserver (499). Logged, not counted as a review.
    const unanswered = UNANSWERED[status];
    if (unanswered === undefined) {
      metrics?.observe({
        webhook: call.webhook,
        kind: request?.kind?.kind,
        operation: request?.operation,
        result,
        durationSeconds: durationMs / 1000,
      });
    }
    const level = result === 'allowed' ? 'info' : result === 'error' ? 'error' : 'warn';
    const shown = (value: unknown): string | undefined =>
      typeof value === 'string' && value !== '' ? echo(value) : undefined;
    logger.log(level, 'admission review', {
      webhook: call.webhook,
      uid: shown(request?.uid),
      kind: shown(request?.kind?.kind),
      operation: shown(request?.operation),
      namespace: shown(request?.namespace),
      name: shown(name),
      dryRun: request?.dryRun || undefined,
      status,
      result: unanswered ?? result,
      ...(response?.patch !== undefined ? { patched: true } : {}),
      ...(response?.status !== undefined
        ? { code: response.status.code, reason: boundMessage(response.status.message, 2000) }
        : {}),
      ...(call.error !== undefined ? { error: boundMessage(call.error, 2000) } : {}),
      durationMs: Math.round(durationMs * 10) / 10,
    });
  }

  function fail(res: Response, status: number, message: string): void {
    const bounded = boundMessage(message);
    (res.locals.reviewCall as ReviewCall).error = bounded;
    res.status(status).json({ error: bounded });
  }

  return app;
}
