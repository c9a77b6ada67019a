/**
 * One webhook's route, `POST /admission/validate` or `POST /admission/mutate`: the review is
 * tracked (review-log.ts), given the request deadline, its JSON body read within the body limit,
 * admitted by the load shedder once the body is complete, parsed, and answered by the webhook
 * (webhook.ts). A body that cannot be read or is no AdmissionReview is answered with a status and
 * a JSON `{error}`; anything wrong inside a well-formed review is a denial with a reason.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { describeBodyError } from '../server/body-errors.js';
import { requestDeadline, type Deadlines } from '../server/deadlines.js';
import { echo } from '../json/echo.js';
import { MAX_BODY_DEPTH, nestingDepthExceeds } from '../json/json.js';
import { isShedError, type LoadShedder } from '../server/load-shedding.js';
import type { AdmissionWebhook } from './metrics.js';
import {
  failReview,
  reviewCallOf,
  trackReview,
  type ReviewCall,
  type ReviewRecorder,
} from './review-log.js';
import {
  deny,
  parseAdmissionReview,
  reviewOf,
  type AdmissionRequest,
  type AdmissionResponse,
} from './review.js';
import { mutateReview, validateReview, type ValidateOptions } from './webhook.js';

/** What a route needs, shared by both webhooks. */
export interface ReviewRouteContext {
  deps: ValidateOptions & ReviewRecorder;
  shedder: LoadShedder;
  /** `express.json`, with the body limit and the shedder's `verify`. */
  jsonBody: RequestHandler;
  limitBytes: number;
  deadlines: Deadlines;
}

/** The middlewares of one webhook's route, in order. */
export function reviewRoute(
  webhook: AdmissionWebhook,
  context: ReviewRouteContext,
): Array<RequestHandler | BodyErrorHandler> {
  const { bodySeconds, requestSeconds } = context.deadlines;
  return [
    trackReview(webhook, bodySeconds, context.deps),
    requestDeadline(requestSeconds),
    context.jsonBody,
    answerReview(webhook, context),
    bodyErrorHandler(context.limitBytes),
  ];
}

function answerReview(
  webhook: AdmissionWebhook,
  context: ReviewRouteContext,
): (req: Request, res: Response) => Promise<void> {
  return async (req, res) => {
    if (!bodyAdmitted(req, res, context.shedder)) return;
    const parsed = parseAdmissionReview(req.body);
    if (!parsed.ok) {
      failReview(res, 400, parsed.message);
      return;
    }
    const call = reviewCallOf(res);
    call.request = parsed.request;
    call.response = await decide(webhook, parsed.request, context.deps, call);
    res.status(200).json(reviewOf(call.response));
  };
}

/**
 * A review with a body was admitted by `verify` (a no-op here); one without a body is answered
 * 400 or 415 at once. False when the call has been answered.
 */
function bodyAdmitted(req: Request, res: Response, shedder: LoadShedder): boolean {
  if (req.body !== undefined) {
    const admission = shedder.admit(req, res);
    if (!admission.ok) failReview(res, 429, admission.message);
    return admission.ok;
  }
  const type = req.get('content-type');
  if (type !== undefined && req.is('application/json') === false) {
    failReview(
      res,
      415,
      `request body must be JSON (Content-Type: application/json), got ${echo(type, 100)}`,
    );
  } else {
    failReview(res, 400, 'request body is required: an admission.k8s.io/v1 AdmissionReview');
  }
  return false;
}

/** The webhook's answer; a bug must not take the server down nor let the object through. */
async function decide(
  webhook: AdmissionWebhook,
  request: AdmissionRequest,
  deps: ReviewRouteContext['deps'],
  call: ReviewCall,
): Promise<AdmissionResponse> {
  try {
    return webhook === 'validate' ? await validateReview(request, deps) : mutateReview(request);
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    call.error = error;
    // Nesting no Kubernetes object has (the validators recurse): the request's fault, not ours.
    if (
      nestingDepthExceeds(request.object, MAX_BODY_DEPTH) ||
      nestingDepthExceeds(request.oldObject, MAX_BODY_DEPTH)
    ) {
      return deny(
        request.uid,
        400,
        'BadRequest',
        `the object nests deeper than ${MAX_BODY_DEPTH} levels; no Kubernetes object does`,
      );
    }
    deps.logger.error('admission webhook failed', {
      webhook,
      error,
      stack: err instanceof Error ? err.stack : undefined,
    });
    return {
      uid: request.uid,
      allowed: false,
      status: {
        code: 500,
        reason: 'InternalError',
        message: `the KubeCell ${webhook} webhook failed: ${error}`,
      },
    };
  }
}

type BodyErrorHandler = (err: unknown, req: Request, res: Response, next: NextFunction) => void;

function formatBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)}mb`;
  if (bytes % 1024 === 0) return `${bytes / 1024}kb`;
  return `${bytes}b`;
}

/** A body that could not be read: shed, too large, not JSON, cut short. */
function bodyErrorHandler(limitBytes: number): BodyErrorHandler {
  return (err, _req, res, next) => {
    if (res.headersSent) return next(err);
    if (isShedError(err)) {
      // No free slot once the body was received; Retry-After is set.
      failReview(res, 429, err.message);
      return;
    }
    const typed = err as { type?: unknown; length?: unknown };
    if (typed?.type === 'entity.too.large') {
      const size = typeof typed.length === 'number' ? ` (${typed.length} bytes)` : '';
      failReview(
        res,
        413,
        `AdmissionReview body${size} exceeds the limit of ${formatBytes(limitBytes)}; ` +
          'the apiserver never sends one this large (objects are limited to 3 MiB)',
      );
      return;
    }
    const answer = describeBodyError(err, formatBytes(limitBytes));
    if (answer !== undefined) {
      failReview(res, answer.status, answer.message);
      return;
    }
    next(err);
  };
}
