/**
 * TLS for the HTTP benchmark. The admission webhook listens on HTTPS (hooks/admission/tls.ts),
 * so its floor is the same floor logic behind node:https with the same kind of certificate: a
 * throwaway self-signed ECDSA P-256 certificate for localhost and 127.0.0.1, made at bench time
 * the way the webhook tests make theirs (hooks/admission/testing.ts selfSignedCertificate, the
 * openssl CLI; bench/http-servers.ts), with TLS 1.2 as the lowest version as the webhook sets
 * it. The hook server and the floor then run the same handshake and record layer, and the ratio
 * compares the webhook's own work with the floor's.
 *
 * A server started here listens on a plain HTTP port too, where the benchmark checks it is up
 * (bench/processes.ts startServer), as the hook server answers /readyz on its HTTP port while
 * the webhook is served on its HTTPS port. Node built-ins only: the floor loads nothing else.
 */
import http, { type RequestListener } from 'node:http';
import https from 'node:https';

/** The lowest TLS version the webhook accepts (hooks/admission/tls.ts MIN_TLS_VERSION). */
export const MIN_TLS_VERSION = 'TLSv1.2';

export interface TlsListener {
  port: number;
  cert: string;
  key: string;
}

/**
 * Serves `handler` on 127.0.0.1:`port` over HTTP and, when `tls` is given, on `tls.port` over
 * HTTPS, with the hook server's keep-alive (hooks/main.ts: keep-alive connections outlive the
 * client's).
 */
export function listenPlainAndTls(handler: RequestListener, port: number, tls?: TlsListener): void {
  const servers: Array<http.Server | https.Server> = [http.createServer(handler)];
  if (tls !== undefined) {
    servers.push(
      https.createServer({ cert: tls.cert, key: tls.key, minVersion: MIN_TLS_VERSION }, handler),
    );
  }
  servers.forEach((server, i) => {
    server.keepAliveTimeout = 95_000;
    server.headersTimeout = 96_000;
    server.listen(i === 0 ? port : tls?.port, '127.0.0.1');
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => process.exit(0));
}

export interface Answer {
  status: number;
  text: string;
}

/** One POST of `body` to `url` (http: or https:, trusting `ca`), its status and text. */
export function postOnce(url: string, body: string, ca?: string): Promise<Answer> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      target,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        ...(ca === undefined ? {} : { ca, servername: 'localhost' }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
