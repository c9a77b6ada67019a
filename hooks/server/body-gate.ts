/**
 * What stands between a caller and the JSON body parser (`express.json`), on both ports
 * (issue 23): memory stays bounded whatever callers send.
 *
 * - A body with a `Content-Encoding` other than `identity` is refused with 415 before a byte of
 *   it is read. Inflating it is what let 1.2 MB of gzip take the process past 1 GiB. Nobody
 *   legitimate compresses: Metacontroller POSTs the bare JSON of `k8sjson.Marshal` with only
 *   Content-Type (and Authorization, If-None-Match) set (pkg/hooks/webhook.go `Call` of
 *   Metacontroller 4.17.2), and the apiserver sends AdmissionReviews with client-go's
 *   `client.Post().Body(request)` (k8s.io/apiserver pkg/admission/plugin/webhook/validating and
 *   mutating dispatcher.go), which sets no Content-Encoding (k8s.io/client-go rest/request.go).
 *   `inflate: false` on the parser stays as a second lock.
 * - A declared `Content-Length` over the port's limit gets 413 at once. body-parser finds it
 *   too, but reads the whole announced body off the connection before answering.
 * - Every body counts against the process-wide budget (body-budget.ts): its declared length as
 *   soon as its headers are read, a chunked body's bytes as they arrive. The body limit is also
 *   enforced here as bytes arrive, so a chunked body past the limit gets its 413 at once rather
 *   than after the caller stops sending.
 *
 * Each refusal stops reading the body and closes the connection after its answer
 * (`Connection: close`), so the rest of the body is not kept. The close lingers: Node ends such
 * an answer's connection with `socket.destroySoon()` (lib/_http_server.js, `resOnFinish`), which
 * destroys it as soon as the answer is flushed, and a socket destroyed with unread data is reset,
 * so a caller still sending its body got a reset instead of the answer (that is how the review's
 * gzip attackers on the webhook port lost their 415). Here the server half-closes after the
 * answer and destroys the connection `LINGER_MS` later: the caller reads the answer meanwhile
 * (Go's transport reads an answer that comes while it is still writing: net/http/transport.go,
 * `wroteRequest`, issue 7569). The answers go through the route's own error handler (the 415 and
 * 413 as body-parser errors, the 429 as a ShedError), so each is logged and counted like any
 * other.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Socket } from 'node:net';
import { echo } from '../json/echo.js';
import type { BodyBudget, BodyTicket } from './body-budget.js';
import { ShedError } from './load-shedding.js';

/** How long a refused caller has to read its answer before its connection is destroyed. */
export const LINGER_MS = 1_000;

/** A refusal shaped like body-parser's errors, which describeBodyError (body-errors.ts) reads. */
export class BodyRefusal extends Error {
  readonly expose = true;
  constructor(
    readonly status: number,
    readonly type: 'encoding.unsupported' | 'entity.too.large',
    message: string,
    readonly length?: number,
    readonly limit?: number,
  ) {
    super(message);
    this.name = 'BodyRefusal';
  }
}

export interface BodyGateOptions {
  /** The port's body limit in bytes. */
  limitBytes: number;
  budget: BodyBudget;
}

/** The Content-Encoding of a request, lower-cased; undefined when absent or `identity`. */
export function contentEncodingOf(req: Request): string | undefined {
  const value = req.headers['content-encoding']?.trim().toLowerCase();
  return value === undefined || value === '' || value === 'identity' ? undefined : value;
}

/** The length the caller announced, when it announced one. */
function declaredLength(req: Request): number | undefined {
  const text = req.headers['content-length'];
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;
}

function tooLarge(limitBytes: number, length?: number): BodyRefusal {
  return new BodyRefusal(413, 'entity.too.large', 'request entity too large', length, limitBytes);
}

/** The request's refusal before its body is read, if it has one. */
function refusalOf(
  req: Request,
  declared: number | undefined,
  limitBytes: number,
): BodyRefusal | undefined {
  const encoding = contentEncodingOf(req);
  if (encoding !== undefined) {
    return new BodyRefusal(
      415,
      'encoding.unsupported',
      `request body has Content-Encoding: ${echo(encoding, 40)}; the KubeCell hook server ` +
        'accepts only uncompressed bodies (no Content-Encoding header, or identity), as ' +
        'Metacontroller and the apiserver send them: remove the header and send the body as is',
    );
  }
  return declared !== undefined && declared > limitBytes
    ? tooLarge(limitBytes, declared)
    : undefined;
}

/**
 * `parser` (express.json with this port's limit) behind the gate. The parser's own completion is
 * ignored once the gate has answered the call.
 */
export function gateBody(parser: RequestHandler, options: BodyGateOptions): RequestHandler {
  const { limitBytes, budget } = options;
  return (req: Request, res: Response, next: NextFunction): void => {
    let settled = false;
    const settle = (err?: unknown): void => {
      if (settled) return;
      settled = true;
      next(err);
    };
    const refuse = (err: Error): void => {
      if (settled) return;
      // Read no more of the body: the parser would keep it until the connection is closed.
      req.pause();
      if (!res.headersSent) res.setHeader('Connection', 'close');
      lingerOnClose(req.socket);
      settle(err);
    };
    const declared = declaredLength(req);
    const early = refusalOf(req, declared, limitBytes);
    if (early !== undefined) {
      refuse(early);
      return;
    }
    const shed = (message: string): void => {
      if (!res.headersSent) res.setHeader('Retry-After', String(budget.retryAfterSeconds));
      refuse(new ShedError(message));
    };
    const ticket = budget.open(shed);
    res.once('finish', ticket.release);
    res.once('close', ticket.release);
    parser(req, res, settle);
    // The parser reads the body only when it is JSON it will parse; otherwise Node discards it.
    if (req.listenerCount('data') === 0) {
      ticket.release();
      return;
    }
    countBody(req, ticket, declared, {
      limitBytes,
      tooLarge: () => refuse(tooLarge(limitBytes)),
      full: () => {
        ticket.release();
        shed(budget.fullMessage());
      },
      settled: () => settled,
    });
  };
}

interface Counting {
  limitBytes: number;
  tooLarge(): void;
  full(): void;
  settled(): boolean;
}

/**
 * Holds the body's bytes in the budget: a declared length at once, before a byte is read (what
 * Metacontroller and the apiserver send always has one), so a body that cannot fit is refused
 * without reading it; a chunked body's bytes as they arrive. No data has flowed yet: the parser
 * starts reading on the next tick.
 */
function countBody(
  req: Request,
  ticket: BodyTicket,
  declared: number | undefined,
  counting: Counting,
): void {
  if (declared !== undefined && !ticket.declare(declared)) {
    counting.full();
    return;
  }
  let received = 0;
  req.on('data', (chunk: Buffer) => {
    if (counting.settled()) return;
    received += chunk.length;
    if (received > counting.limitBytes) counting.tooLarge();
    else if (!ticket.receive(chunk.length)) counting.full();
  });
  req.once('end', ticket.complete);
}

/** Makes Node's close after a `Connection: close` answer linger (see above). */
function lingerOnClose(socket: Socket): void {
  socket.destroySoon = function lingeringClose(this: Socket): void {
    this.end();
    setTimeout(() => this.destroy(), LINGER_MS).unref();
  };
}
