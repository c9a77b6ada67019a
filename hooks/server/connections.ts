/**
 * Connections on each port (issue 23, both listeners): a cap, and idle keep-alive connections
 * let go sooner when many are open.
 *
 * The cap (`KUBECELL_MAX_CONNECTIONS` per port, `server.maxConnections`): past it Node closes a
 * new connection as soon as it is accepted. Without it, 374 idle connections used up a
 * 400-descriptor limit and real calls were reset; with it, both ports together stay below the
 * process's open-file limit (config.ts checks `2 × cap + RESERVED_FILE_DESCRIPTORS` against
 * it), leaving descriptors for the Kubernetes API, the certificate files and Node itself. What
 * holds a connection is bounded in time: a TLS handshake by `handshakeTimeout` (tls.ts), a
 * request's headers and body by the deadlines (deadlines.ts; a connection that never sends a
 * byte gets the headers deadline too), an idle keep-alive connection by the keep-alive below.
 *
 * The keep-alive, and why it is not simply short. Metacontroller and the apiserver are Go
 * clients whose transports keep idle connections for 90 s (`IdleConnTimeout` of Go's
 * `DefaultTransport`, net/http/transport.go; client-go keeps that default,
 * k8s.io/apimachinery pkg/util/net/http.go `SetTransportDefaults`). When a server closes an idle
 * connection, Go's transport sees the FIN and drops the connection from its pool; but a POST it
 * writes while the FIN is in flight fails with "http: server closed idle connection" and is not
 * retried: `persistConn.shouldRetryRequest` retries only a request nothing of which was written,
 * or a replayable one (GET, HEAD, OPTIONS, TRACE or one with an Idempotency-Key header,
 * `Request.isReplayable` in net/http/request.go), and hook calls and reviews are POSTs with
 * neither; the comment on `errServerClosedIdle` in transport.go describes exactly this race
 * (golang/go#19943), and client-go does not retry a failed POST either (rest/request.go,
 * "We are not automatically retrying write operations"). A failed review fails closed: the
 * user's write is refused. So in normal operation the keep-alive (95 s) outlives the clients'
 * 90 s and the client always closes first: no race.
 *
 * Under pressure (a quarter of the cap in use, far beyond what Metacontroller and a few
 * apiservers open), idle connections are what an attacker holds most cheaply, so:
 * - every answer carries `Connection: close`: Go's transport reads it and does not reuse the
 *   connection (transport.go, `readLoop`: `resp.Close`), so real clients are not raced, they
 *   only connect anew for each call;
 * - connections already idle are given `PRESSURE_KEEP_ALIVE_MS`: only these few can race, once.
 * When the count falls back below the mark, idle connections get the 95 s again.
 */
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { KEEP_ALIVE_TIMEOUT_MS } from './deadlines.js';
import type { Logger } from './logger.js';

/** Descriptors kept beyond both ports' caps: the API client, files, Node's own. */
export const RESERVED_FILE_DESCRIPTORS = 100;

/** The keep-alive of connections idle when the pressure mark is crossed. */
export const PRESSURE_KEEP_ALIVE_MS = 5_000;

/** How often a line says that the cap turned connections away. */
const DROP_LOG_INTERVAL_MS = 10_000;

/** The number of open connections from which a port is under pressure. */
export function pressureMark(maxConnections: number): number {
  return Math.max(1, Math.floor(maxConnections / 4));
}

/** The process's open-file limit (Linux, /proc/self/limits); undefined where unknown. */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    return soft !== undefined && /^\d+$/.test(soft) ? Number(soft) : undefined;
  } catch {
    return undefined;
  }
}

export interface ConnectionGuardOptions {
  maxConnections: number;
  logger: Logger;
  /** Which listener, for log lines: `hooks` or `webhook`. */
  listener: string;
  /** The keep-alive under pressure; PRESSURE_KEEP_ALIVE_MS unless a test says otherwise. */
  pressureKeepAliveMs?: number;
}

export interface ConnectionGuard {
  /** Connections open now. */
  open(): number;
  /** Whether the port is under pressure now. */
  pressured(): boolean;
}

/** Applies the cap and the keep-alive under pressure to `server`. */
export function guardConnections(
  server: HttpServer | HttpsServer,
  options: ConnectionGuardOptions,
): ConnectionGuard {
  const { maxConnections, logger, listener } = options;
  const mark = pressureMark(maxConnections);
  const shortKeepAliveMs = options.pressureKeepAliveMs ?? PRESSURE_KEEP_ALIVE_MS;
  server.maxConnections = maxConnections;
  let open = 0;
  let pressured = false;
  const idle = new Set<Socket>();

  const update = (): void => {
    if (open >= mark === pressured) return;
    pressured = open >= mark;
    server.keepAliveTimeout = pressured ? shortKeepAliveMs : KEEP_ALIVE_TIMEOUT_MS;
    for (const socket of idle) socket.setTimeout(server.keepAliveTimeout);
    logger.info(pressured ? 'many connections open' : 'connections back to normal', {
      listener,
      open,
      mark,
      maxConnections,
      keepAliveMs: server.keepAliveTimeout,
    });
  };

  server.on('connection', (socket: Socket) => {
    open += 1;
    socket.once('close', () => {
      open -= 1;
      update();
    });
    update();
  });
  const watched = new WeakSet<Socket>();
  // Before the app's own listener, so that the header is set before any answer is written.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    idle.delete(socket);
    if (!watched.has(socket)) {
      watched.add(socket);
      socket.once('close', () => idle.delete(socket));
    }
    if (pressured) res.setHeader('Connection', 'close');
    res.once('finish', () => {
      // A `Connection: close` answer (pressure, a refused body) ends its connection.
      if (!socket.destroyed && !res.hasHeader('connection')) idle.add(socket);
    });
  });
  logDrops(server, options);
  return { open: () => open, pressured: () => pressured };
}

/** A line when the cap first turns a connection away, then at most one every interval. */
function logDrops(server: HttpServer | HttpsServer, options: ConnectionGuardOptions): void {
  let dropped = 0;
  let timer: NodeJS.Timeout | undefined;
  const report = (): void => {
    if (dropped === 0) {
      timer = undefined;
      return;
    }
    options.logger.warn('connection cap reached: new connections were closed', {
      listener: options.listener,
      maxConnections: options.maxConnections,
      closed: dropped,
      setting: 'KUBECELL_MAX_CONNECTIONS',
    });
    dropped = 0;
    timer = setTimeout(report, DROP_LOG_INTERVAL_MS);
    timer.unref();
  };
  server.on('drop', () => {
    dropped += 1;
    if (timer === undefined) report();
  });
}
