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
 * request bodies are never logged.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { describeBodyError } from '../server/body-errors.js';
import type { Logger } from '../server/logger.js';
import { MAX_BODY_DEPTH, nestingDepthExceeds } from '../server/malformed-input.js';
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
}

interface ReviewCall {
  startedAt: bigint;
  webhook: AdmissionWebhook;
  request?: AdmissionRequest;
  response?: AdmissionResponse;
  error?: string;
}

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

  const jsonBody = express.json({ limit: limitBytes });

  const route = (webhook: AdmissionWebhook) => [
    start(webhook),
    jsonBody,
    async (req: Request, res: Response): Promise<void> => {
      const call = res.locals.reviewCall as ReviewCall;
      const body: unknown = req.body;
      if (body === undefined) {
        const type = req.get('content-type');
        if (type !== undefined && req.is('application/json') === false) {
          fail(
            res,
            415,
            `request body must be JSON (Content-Type: application/json), got ${type.slice(0, 100)}`,
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
    res.status(404).json({ error: `no route for ${req.method} ${req.path.slice(0, 200)}` });
  });

  app.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const message = err instanceof Error ? err.message : String(err);
    logger.error('request failed', {
      method: req.method,
      path: req.path.slice(0, 200),
      error: message,
    });
    res.status(500).json({ error: message });
  });

  function start(webhook: AdmissionWebhook) {
    return (_req: Request, res: Response, next: NextFunction): void => {
      const call: ReviewCall = { startedAt: process.hrtime.bigint(), webhook };
      res.locals.reviewCall = call;
      res.once('finish', () => record(call, res.statusCode));
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
    metrics?.observe({
      webhook: call.webhook,
      kind: request?.kind?.kind,
      operation: request?.operation,
      result,
      durationSeconds: durationMs / 1000,
    });
    const level = result === 'allowed' ? 'info' : result === 'error' ? 'error' : 'warn';
    logger.log(level, 'admission review', {
      webhook: call.webhook,
      uid: request?.uid,
      kind: request?.kind?.kind,
      operation: request?.operation,
      namespace: request?.namespace || undefined,
      name: typeof name === 'string' ? name.slice(0, 253) : undefined,
      dryRun: request?.dryRun || undefined,
      status,
      result,
      ...(response?.patch !== undefined ? { patched: true } : {}),
      ...(response?.status !== undefined
        ? { code: response.status.code, reason: response.status.message.slice(0, 2000) }
        : {}),
      ...(call.error !== undefined ? { error: call.error.slice(0, 2000) } : {}),
      durationMs: Math.round(durationMs * 10) / 10,
    });
  }

  function fail(res: Response, status: number, message: string): void {
    (res.locals.reviewCall as ReviewCall).error = message;
    res.status(status).json({ error: message });
  }

  return app;
}
