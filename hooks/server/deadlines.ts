/**
 * How long a client may take, on both listeners (the hook server's HTTP port and the admission
 * webhook's HTTPS port). Node's defaults let a client hold a connection for 300 s while sending
 * one byte of its request (issue 15, finding 1); three deadlines bound it instead:
 *
 * | Deadline | Variable                           | Default | From → to                                        | Then                      |
 * |----------|------------------------------------|---------|--------------------------------------------------|---------------------------|
 * | headers  | `KUBECELL_HEADERS_TIMEOUT_SECONDS` | 10      | first byte of a request → end of its headers     | Node answers 408, closes  |
 * | body     | `KUBECELL_BODY_TIMEOUT_SECONDS`    | 20      | first byte of a request → end of its body        | Node answers 408, closes  |
 * | request  | `KUBECELL_REQUEST_TIMEOUT_SECONDS` | 30      | end of the headers → answer written              | the connection is closed  |
 *
 * The guide is Metacontroller's hook timeout: 10 s unless a controller sets `webhook.timeout`
 * (`webhookTimeout`, pkg/hooks/webhook.go of Metacontroller 4.17.2, "Defaults to 10 Seconds"),
 * and its `http.Client{Timeout}` counts the whole exchange, so a call still sending headers after
 * 10 s was already abandoned. The apiserver's webhook timeout is 10 s too
 * (manifests/webhook/base/webhooks.yaml `timeoutSeconds`), at most 30 s. The body gets twice
 * that, and the whole request three times, so that nothing a default Metacontroller or apiserver
 * still waits for is ever cut; raise them with Metacontroller's `webhook.timeout`.
 *
 * The deadlines are checked once a second (`connectionsCheckingInterval`), so one fires within
 * a second of being due. A keep-alive connection waiting between requests is not subject to the
 * headers and body deadlines (only to `keepAliveTimeout`); Metacontroller and the apiserver keep
 * idle connections for 90 s. A connection that has not sent a byte yet is subject to the headers
 * deadline. On the HTTPS port a TLS handshake gets the headers deadline as well (tls.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface Deadlines {
  headersSeconds: number;
  bodySeconds: number;
  requestSeconds: number;
}

/**
 * Go's HTTP clients keep idle connections for 90 s; a server closing first races their reuse, and
 * Go does not retry a POST lost that way. Shorter only when many connections are open
 * (connections.ts says why, from Go's net/http/transport.go).
 */
export const KEEP_ALIVE_TIMEOUT_MS = 95_000;

/** How often Node checks the headers and body deadlines of connections. */
export const DEADLINE_CHECK_INTERVAL_MS = 1_000;

/** Options for `http.createServer` and `https.createServer`. */
export function deadlineServerOptions(deadlines: Deadlines): {
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  connectionsCheckingInterval: number;
} {
  return {
    headersTimeout: deadlines.headersSeconds * 1000,
    requestTimeout: deadlines.bodySeconds * 1000,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: DEADLINE_CHECK_INTERVAL_MS,
  };
}

const EXPIRED = Symbol('kubecell.requestDeadlineExpired');

type Marked = ServerResponse & { [EXPIRED]?: string };

/**
 * Express middleware: closes the connection of a call whose answer is not written within
 * `seconds` (a client that does not read its answer, or a handler that never answers), which
 * also frees its load-shedding slot. `timeoutOf` tells the log line why.
 */
export function requestDeadline(seconds: number, setting = 'KUBECELL_REQUEST_TIMEOUT_SECONDS') {
  return (_req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    const timer = setTimeout(() => {
      if (res.writableFinished) return;
      (res as Marked)[EXPIRED] =
        `the call did not finish within ${seconds} s (${setting}); the connection was closed`;
      res.destroy();
    }, seconds * 1000);
    timer.unref();
    res.once('close', () => clearTimeout(timer));
    next();
  };
}

/**
 * Why a connection was closed before its answer was written, when a deadline closed it: the
 * body deadline (Node answered 408) or the request deadline. Undefined when the client left.
 */
export function timeoutOf(
  req: IncomingMessage,
  res: ServerResponse,
  bodySeconds: number,
): string | undefined {
  const expired = (res as Marked)[EXPIRED];
  if (expired !== undefined) return expired;
  const errored = (req.socket as { errored?: { code?: unknown } | null }).errored;
  if (errored?.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return (
      `the request was not received within ${bodySeconds} s (KUBECELL_BODY_TIMEOUT_SECONDS); ` +
      'answered 408 and closed'
    );
  }
  return undefined;
}
