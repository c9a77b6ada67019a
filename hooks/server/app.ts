/**
 * The HTTP layer around the hook handlers, kept thin: route, parse, check,
 * call the handler, answer. Every hook call produces exactly one log line and
 * one metrics sample, whatever its outcome.
 *
 * Routes:
 *   POST /hooks/:controller/:hook  Metacontroller v2 hooks (429 + Retry-After when overloaded)
 *   GET  /healthz                  liveness: the process answers
 *   GET  /readyz                   readiness: listening and not shutting down
 *   GET  /metrics                  Prometheus text format
 */
import { InvalidHookInputError } from '../metacontroller/invalid-input.js';
import { RetryLaterError } from '../metacontroller/retry-later.js';
import express, { type NextFunction, type Request, type Response } from 'express';
import { isJsonObject, summarizeProblems } from '../json/json.js';
import { QuantityError } from '../quantity/quantity.js';
import { checkResponse } from '../metacontroller/response-shape.js';
import { defaultBodyBudget, type BodyBudget } from './body-budget.js';
import { describeBodyError } from './body-errors.js';
import { gateBody } from './body-gate.js';
import { DEFAULT_DEADLINES, DEFAULTS, type ServerConfig } from './config.js';
import { requestDeadline, timeoutOf } from './deadlines.js';
import { boundMessage, echo } from '../json/echo.js';
import { errorMessage, serveFallbacks } from './fallbacks.js';
import { logHookCall, type Logger, type ParentIdentity } from './logger.js';
import { createLoadShedder, isShedError } from './load-shedding.js';
import type { HookMetrics } from './metrics.js';
import { Readiness } from './readiness.js';
import { isHookName, type HookRegistry, type ResolvedHook } from './registry.js';

export interface AppDeps {
  registry: HookRegistry;
  logger: Logger;
  metrics: HookMetrics;
  config: Pick<ServerConfig, 'bodyLimit' | 'bodyLimitBytes'> &
    // Load shedding and deadlines; unset means the defaults (64 in flight, Retry-After 1 s,
    // hooks/server/config.ts DEFAULTS).
    Partial<Pick<ServerConfig, 'maxInflight' | 'retryAfterSeconds' | 'deadlines'>>;
  /** Defaults to a Readiness that is already ready (convenient in tests). */
  readiness?: Readiness;
  /**
   * The process-wide budget of body bytes, shared with the admission webhook (body-budget.ts);
   * a budget of its own, of the default size, when absent.
   */
  bodyBudget?: BodyBudget;
}

/** Per-call state, kept in `res.locals` from the first middleware to the log line. */
interface HookCall {
  startedAt: bigint;
  controller: string;
  hook: string;
  resolved?: ResolvedHook;
  parent?: ParentIdentity;
  error?: string;
  stack?: string;
}

const MAX_SEGMENT_CHARS = 64;

export function createApp(deps: AppDeps): express.Express {
  const { registry, logger, metrics } = deps;
  deps.metrics.startSeries(registry.registered());
  const app = express();
  app.disable('x-powered-by');
  // Hashing a 30 MB response for an ETag nobody uses is wasted CPU.
  app.set('etag', false);
  serveProbes(app, deps.readiness ?? readyNow(), metrics);
  serveHooks(app, deps);
  serveFallbacks(app, logger);
  return app;
}

function serveProbes(app: express.Express, readiness: Readiness, metrics: HookMetrics): void {
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    if (readiness.ready) res.json({ status: 'ready' });
    else res.status(503).json({ status: 'not ready', reason: readiness.reason });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}

function serveHooks(app: express.Express, deps: AppDeps): void {
  const { registry, logger, metrics, config } = deps;
  // Load shedding: a slot once the body is received, before it is parsed (load-shedding.ts).
  const retryAfterSeconds =
    config.retryAfterSeconds ?? Number(DEFAULTS.KUBECELL_RETRY_AFTER_SECONDS);
  const shedder = createLoadShedder({
    maxInflight: config.maxInflight ?? Number(DEFAULTS.KUBECELL_MAX_INFLIGHT),
    retryAfterSeconds,
    registry: metrics.registry,
    labelsOf: (_req, res) => {
      const resolved = callOf(res as Response).resolved as ResolvedHook;
      return { controller: resolved.controller, hook: resolved.hook };
    },
  });
  // Bodies are never inflated (body-gate.ts): `inflate: false` backs the gate's 415.
  const jsonBody = gateBody(
    express.json({ limit: config.bodyLimitBytes, verify: shedder.verify, inflate: false }),
    {
      limitBytes: config.bodyLimitBytes,
      budget: deps.bodyBudget ?? defaultBodyBudget(retryAfterSeconds),
    },
  );
  const { bodySeconds, requestSeconds } = config.deadlines ?? DEFAULT_DEADLINES;

  app.post(
    '/hooks/:controller/:hook',
    startCall(registry, logger, metrics, bodySeconds),
    resolveHook(registry),
    requestDeadline(requestSeconds),
    jsonBody,
    async (req: Request, res: Response): Promise<void> => {
      // A call with a body was admitted by `verify` (a no-op here); runHook answers one without
      // a body (400, 415) at once, without a handler.
      if (req.body !== undefined) {
        const admission = shedder.admit(req, res);
        if (!admission.ok) {
          fail(res, 429, admission.message);
          return;
        }
      }
      await runHook(req, res);
    },
    hookErrors(config.bodyLimit),
  );
  app.all('/hooks/:controller/:hook', (req, res) => {
    res
      .status(405)
      .set('Allow', 'POST')
      .json({ error: `hooks accept POST only, got ${req.method}` });
  });
}

function readyNow(): Readiness {
  const readiness = new Readiness();
  readiness.markReady();
  return readiness;
}

function callOf(res: Response): HookCall {
  return res.locals.hookCall as HookCall;
}

/** The body size the caller announced, if it announced a plausible one. */
function announcedBytes(req: Request): number | undefined {
  const bytes = Number(req.headers['content-length']);
  return Number.isSafeInteger(bytes) && bytes >= 0 ? bytes : undefined;
}

/** Records the start time and arranges for exactly one log line and metric sample. */
function startCall(
  registry: HookRegistry,
  logger: Logger,
  metrics: HookMetrics,
  bodySeconds: number,
) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const call: HookCall = {
      startedAt: process.hrtime.bigint(),
      controller: echo(String(req.params.controller), MAX_SEGMENT_CHARS),
      hook: echo(String(req.params.hook), MAX_SEGMENT_CHARS),
    };
    res.locals.hookCall = call;

    let recorded = false;
    const record = (status: number, error?: string): void => {
      if (recorded) return;
      recorded = true;
      const durationMs = Number(process.hrtime.bigint() - call.startedAt) / 1e6;
      metrics.observeHookCall({
        // URL segments are caller-controlled: a name that is not registered is not a label.
        controller: registry.has(call.controller) ? call.controller : 'unknown',
        hook: isHookName(call.hook) ? call.hook : 'unknown',
        status,
        durationSeconds: durationMs / 1000,
        requestBytes: announcedBytes(req),
      });
      logHookCall(logger, {
        controller: call.controller,
        hook: call.hook,
        parent: call.parent,
        durationMs,
        status,
        error: error ?? call.error,
        stack: call.stack,
      });
    };
    res.once('finish', () => record(res.statusCode));
    // The connection closed before the answer was written. Either a deadline closed it
    // (hooks/server/deadlines.ts: 408, as Node answers a late body), or the caller went away,
    // e.g. Metacontroller's hook timeout (10 s by default) fired: 499 as in nginx, client
    // closed request.
    // (`res.writableFinished` cannot tell: an answer written after the socket closed counts as
    // finished, yet emits no 'finish'.)
    res.once('close', () => {
      if (recorded) return;
      const timedOut = timeoutOf(req, res, bodySeconds);
      if (timedOut !== undefined) record(408, timedOut);
      else record(499, call.error ?? 'client closed the connection before the answer was sent');
    });
    next();
  };
}

function resolveHook(registry: HookRegistry) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const call = callOf(res);
    const lookup = registry.lookup(call.controller, call.hook);
    if (!lookup.found) {
      fail(res, 404, lookup.message);
      return;
    }
    call.resolved = lookup.hook;
    next();
  };
}

async function runHook(req: Request, res: Response): Promise<void> {
  const call = callOf(res);
  const hook = call.resolved as ResolvedHook;
  const body: unknown = req.body;
  if (body === undefined) {
    refuseMissingBody(req, res);
    return;
  }
  call.parent = parentIdentity(body);
  const prepared = hook.prepare(body);
  if (!prepared.ok) {
    fail(res, 400, `invalid ${hook.hook} request: ${summarizeProblems(prepared.problems)}`);
    return;
  }
  let response: unknown;
  try {
    response = await prepared.value();
  } catch (err) {
    failHandler(res, err);
    return;
  }
  sendResponse(res, hook, response);
}

/** express.json leaves the body unset when there is none or the content type is not JSON. */
function refuseMissingBody(req: Request, res: Response): void {
  if (req.is('application/json') === false && req.get('content-type') !== undefined) {
    fail(
      res,
      415,
      `request body must be JSON (Content-Type: application/json), got ${echo(String(req.get('content-type')), 100)}`,
    );
  } else {
    fail(res, 400, 'request body is required (Content-Type: application/json)');
  }
}

/** The answer to a handler that threw: the input it refused, a retry, or a bug. */
function failHandler(res: Response, err: unknown): void {
  if (err instanceof InvalidHookInputError) {
    fail(res, 400, err.message);
  } else if (err instanceof QuantityError) {
    // Every quantity a handler parses comes from the request (an observed object's requests,
    // allocatable or annotations): one that is not a quantity is bad input, not a bug.
    fail(res, 400, `the request holds ${err.message}`);
  } else if (err instanceof RetryLaterError) {
    res.set('Retry-After', String(err.retryAfterSeconds));
    fail(res, 429, err.message);
  } else {
    failUnexpectedly(res, err);
  }
}

function sendResponse(res: Response, hook: ResolvedHook, response: unknown): void {
  const problems = checkResponse(hook.responseKind, response);
  if (problems.length > 0) {
    fail(
      res,
      500,
      `the ${hook.controller} ${hook.hook} hook returned an invalid response: ${summarizeProblems(problems)}`,
    );
    return;
  }
  let text: string;
  try {
    text = JSON.stringify(response);
  } catch (err) {
    // E.g. a stack overflow on a response that carries a deeply nested part of the request.
    failUnexpectedly(res, err);
    return;
  }
  res.status(200).type('application/json').send(text);
}

/**
 * A handler (or the serialisation of its answer) threw. Its input was checked before it ran
 * (hooks/controllers/request-validation.ts), so this is a bug: 500, with the stack in the log.
 */
function failUnexpectedly(res: Response, err: unknown): void {
  callOf(res).stack = err instanceof Error ? err.stack : undefined;
  fail(res, 500, errorMessage(err));
}

/** Errors raised while reading the body, or unexpected ones, for hook routes. */
function hookErrors(bodyLimit: string) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) return next(err);
    if (isShedError(err)) {
      // body-parser's verify found no free slot; Retry-After is set.
      fail(res, 429, err.message);
      return;
    }
    const answer = describeBodyError(err, bodyLimit);
    if (answer !== undefined) {
      fail(res, answer.status, answer.message);
      return;
    }
    callOf(res).stack = err instanceof Error ? err.stack : undefined;
    fail(res, 500, errorMessage(err));
  };
}

/** Answers an error; the message is bounded, whatever it quotes from the request (echo.ts). */
function fail(res: Response, status: number, message: string): void {
  const bounded = boundMessage(message);
  callOf(res).error = bounded;
  res.status(status).json({ error: bounded });
}

/** kind, namespace, name and uid of `parent`, when they are strings. Nothing else is read. */
function parentIdentity(body: unknown): ParentIdentity | undefined {
  if (!isJsonObject(body)) return undefined;
  const parent = body.parent ?? body.object;
  if (!isJsonObject(parent)) return undefined;
  const metadata = isJsonObject(parent.metadata) ? parent.metadata : {};
  const identity: ParentIdentity = {};
  if (typeof parent.kind === 'string') identity.kind = echo(parent.kind);
  if (typeof metadata.namespace === 'string') identity.namespace = echo(metadata.namespace);
  if (typeof metadata.name === 'string') identity.name = echo(metadata.name);
  if (typeof metadata.uid === 'string') identity.uid = echo(metadata.uid, 64);
  return identity;
}
