/**
 * What every admission review leaves behind: one log line and, when the webhook's rules answered
 * it, one metrics sample (metrics.ts). What is known of a review (its request, its answer, an
 * error) is gathered on `res.locals.reviewCall` as the call goes, and recorded once: when the
 * answer is sent, or when the connection closes first. Request bodies are never logged, and what
 * the log line quotes (names, uids, kinds) is bounded (hooks/json/echo.ts).
 */
import type { NextFunction, Request, Response } from 'express';
import { boundMessage, echo } from '../json/echo.js';
import { timeoutOf } from '../server/deadlines.js';
import type { Logger } from '../server/logger.js';
import type { AdmissionMetrics, AdmissionResult, AdmissionWebhook } from './metrics.js';
import type { AdmissionRequest, AdmissionResponse } from './review.js';

/** One review as it goes. */
export interface ReviewCall {
  startedAt: bigint;
  webhook: AdmissionWebhook;
  request?: AdmissionRequest;
  response?: AdmissionResponse;
  error?: string;
}

/** Where a review's record goes. */
export interface ReviewRecorder {
  logger: Logger;
  metrics?: AdmissionMetrics;
}

/** What the log line says of a review the rules did not answer, by status. */
const UNANSWERED: Record<number, string> = { 408: 'timeout', 429: 'shed', 499: 'client_gone' };

/** The review of this call (set by `trackReview`). */
export function reviewCallOf(res: Response): ReviewCall {
  return res.locals.reviewCall as ReviewCall;
}

/**
 * The first middleware of a review: starts its record, and writes it once, when the answer is
 * sent or when the connection closes before that.
 */
export function trackReview(
  webhook: AdmissionWebhook,
  bodySeconds: number,
  recorder: ReviewRecorder,
): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    const call: ReviewCall = { startedAt: process.hrtime.bigint(), webhook };
    res.locals.reviewCall = call;
    let recorded = false;
    const once = (status: number): void => {
      if (recorded) return;
      recorded = true;
      recordReview(call, status, recorder);
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

/** Answers a call that carries no answerable review with `{error}`, and notes the error. */
export function failReview(res: Response, status: number, message: string): void {
  const bounded = boundMessage(message);
  reviewCallOf(res).error = bounded;
  res.status(status).json({ error: bounded });
}

function resultOf(status: number, response: AdmissionResponse | undefined): AdmissionResult {
  if (status !== 200 || response === undefined) return 'bad_request';
  if (response.allowed) return 'allowed';
  return (response.status?.code ?? 0) >= 500 ? 'error' : 'denied';
}

function recordReview(call: ReviewCall, status: number, recorder: ReviewRecorder): void {
  const durationMs = Number(process.hrtime.bigint() - call.startedAt) / 1e6;
  const result = resultOf(status, call.response);
  const request = call.request;
  // Not answered by the webhook's rules: shed (429, counted by kubecell_admission_shed_total),
  // closed by a deadline (408) or by the apiserver (499). Logged, not counted as a review.
  const unanswered = UNANSWERED[status];
  if (unanswered === undefined) {
    recorder.metrics?.observe({
      webhook: call.webhook,
      kind: request?.kind?.kind,
      operation: request?.operation,
      result,
      durationSeconds: durationMs / 1000,
    });
  }
  const level = result === 'allowed' ? 'info' : result === 'error' ? 'error' : 'warn';
  recorder.logger.log(level, 'admission review', {
    ...requestFields(call),
    status,
    result: unanswered ?? result,
    ...answerFields(call),
    durationMs: Math.round(durationMs * 10) / 10,
  });
}

function shown(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? echo(value) : undefined;
}

/** What the log line says of the request. */
function requestFields(call: ReviewCall): Record<string, unknown> {
  const request = call.request;
  const object = (request?.object ?? request?.oldObject) as
    { metadata?: { name?: unknown } } | undefined;
  const name = request?.name || object?.metadata?.name;
  return {
    webhook: call.webhook,
    uid: shown(request?.uid),
    kind: shown(request?.kind?.kind),
    operation: shown(request?.operation),
    namespace: shown(request?.namespace),
    name: shown(name),
    dryRun: request?.dryRun || undefined,
  };
}

/** What the log line says of the answer and of an error. */
function answerFields(call: ReviewCall): Record<string, unknown> {
  const response = call.response;
  return {
    ...(response?.patch !== undefined ? { patched: true } : {}),
    ...(response?.status !== undefined
      ? { code: response.status.code, reason: boundMessage(response.status.message, 2000) }
      : {}),
    ...(call.error !== undefined ? { error: boundMessage(call.error, 2000) } : {}),
  };
}
