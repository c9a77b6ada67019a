/**
 * The HTTPS listener of the admission webhooks, with a certificate that is reloaded when its
 * files change. cert-manager renews the Secret in place and the kubelet swaps the mounted files
 * atomically (a symlink flip) within a minute or two; the server polls the files' content and
 * installs a new pair with `tls.Server#setSecureContext`, so renewals need no restart and
 * connections already open keep working. A new pair that cannot be loaded (a key that does not
 * match its certificate, half-written files) is logged and ignored until the files change again;
 * the previous certificate stays in use.
 */
import { X509Certificate, createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import { DEFAULT_DEADLINES, DEFAULTS } from '../server/config.js';
import { guardConnections } from '../server/connections.js';
import { deadlineServerOptions, type Deadlines } from '../server/deadlines.js';
import type { Logger } from '../server/logger.js';

export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

/** How often the files are read for changes. */
export const DEFAULT_TLS_POLL_INTERVAL_MS = 10_000;
const MIN_TLS_VERSION = 'TLSv1.2';

export interface WebhookServerOptions {
  app: RequestListener;
  port: number;
  /** Interface to listen on; all when absent. */
  host?: string;
  tls: TlsFiles;
  logger: Logger;
  pollIntervalMs?: number;
  /**
   * Headers and body deadlines of the HTTPS server (hooks/server/deadlines.ts); the defaults of
   * hooks/server/config.ts when absent. The request deadline is the app's (app.ts).
   */
  deadlines?: Deadlines;
  /** Open connections before new ones are closed (KUBECELL_MAX_CONNECTIONS); default 1000. */
  maxConnections?: number;
}

export interface WebhookServer {
  server: Server;
  /** The port actually listened on (useful with port 0). */
  port: number;
  /** Reads the files now and installs them if they changed; true when a new pair is in use. */
  reload(): Promise<boolean>;
  /** Stops polling, stops accepting connections, and resolves once open ones are done. */
  close(): Promise<void>;
  /** Closes every connection at once (the shutdown deadline). */
  closeAllConnections(): void;
}

interface KeyPair {
  cert: string;
  key: string;
}

export class TlsError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TlsError';
  }
}

async function readPair(files: TlsFiles): Promise<KeyPair> {
  const read = async (file: string, what: string): Promise<string> => {
    try {
      return await readFile(file, 'utf8');
    } catch (err) {
      throw new TlsError(`cannot read the webhook TLS ${what} ${file}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  };
  const [cert, key] = await Promise.all([
    read(files.certFile, 'certificate (KUBECELL_TLS_CERT_FILE)'),
    read(files.keyFile, 'key (KUBECELL_TLS_KEY_FILE)'),
  ]);
  return { cert, key };
}

/** Throws a TlsError unless the pair loads (valid PEM, key matching the certificate). */
function checkPair(pair: KeyPair, files: TlsFiles): void {
  try {
    createSecureContext({ ...pair, minVersion: MIN_TLS_VERSION });
  } catch (err) {
    throw new TlsError(
      `the webhook certificate ${files.certFile} and key ${files.keyFile} cannot be used: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/** What is logged about a certificate: never the key, only public facts. */
export function describeCertificate(pem: string): Record<string, string> {
  try {
    const cert = new X509Certificate(pem);
    return {
      subject: cert.subject.replace(/\n/g, ', '),
      subjectAltName: cert.subjectAltName ?? '',
      notAfter: new Date(cert.validTo).toISOString(),
      sha256: cert.fingerprint256,
    };
  } catch {
    return { sha256: createHash('sha256').update(pem).digest('hex') };
  }
}

/** Starts the HTTPS server; rejects with a TlsError or the listen error when it cannot serve. */
export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const { tls: files, logger } = options;
  const first = await readPair(files);
  checkPair(first, files);

  // The apiserver keeps idle connections to webhooks for 90 s; the keep-alive timeout outlives
  // them, except under pressure (hooks/server/connections.ts), while a request must arrive within
  // the deadlines (hooks/server/deadlines.ts). A TLS handshake gets the headers deadline too
  // (Node's default is 120 s): the handshake and then the headers are what a caller must send
  // before anything is asked of the server.
  const deadlines = options.deadlines ?? DEFAULT_DEADLINES;
  const server = createServer(
    {
      ...first,
      minVersion: MIN_TLS_VERSION,
      ...deadlineServerOptions(deadlines),
      handshakeTimeout: deadlines.headersSeconds * 1000,
    },
    options.app,
  );
  guardConnections(server, {
    maxConnections: options.maxConnections ?? Number(DEFAULTS.KUBECELL_MAX_CONNECTIONS),
    logger,
    listener: 'webhook',
  });
  await listen(server, options.port, options.host);

  const reload = certificateReloader(server, files, first, logger);
  const timer = setInterval(() => {
    void reload();
  }, options.pollIntervalMs ?? DEFAULT_TLS_POLL_INTERVAL_MS);
  timer.unref();

  const port = (server.address() as AddressInfo).port;
  logger.info('admission webhook listening', {
    port,
    certFile: files.certFile,
    keyFile: files.keyFile,
    ...describeCertificate(first.cert),
  });

  return {
    server,
    port,
    reload,
    close() {
      clearInterval(timer);
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
    },
    closeAllConnections() {
      server.closeAllConnections();
    },
  };
}

function listen(server: Server, port: number, host: string | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/**
 * `reload()` of a server serving `first`: reads the files, and installs a pair that changed and
 * loads. One reload at a time; a pair that was refused is logged once, not at every poll.
 */
function certificateReloader(
  server: Server,
  files: TlsFiles,
  first: KeyPair,
  logger: Logger,
): () => Promise<boolean> {
  let current = first;
  let lastRejected: string | undefined;
  let busy: Promise<boolean> | undefined;

  const refused = (key: string, message: string, error: string): false => {
    if (key !== lastRejected) logger.warn(message, { error });
    lastRejected = key;
    return false;
  };

  const reloadNow = async (): Promise<boolean> => {
    let next: KeyPair;
    try {
      next = await readPair(files);
    } catch (err) {
      // Mid-swap, a file can be briefly missing; the next poll sees the new one.
      const message = (err as Error).message;
      return refused(message, 'webhook certificate not reloaded', message);
    }
    if (next.cert === current.cert && next.key === current.key) return false;
    const fingerprint = createHash('sha256').update(next.cert).update(next.key).digest('hex');
    try {
      checkPair(next, files);
      server.setSecureContext({ ...next, minVersion: MIN_TLS_VERSION });
    } catch (err) {
      return refused(
        fingerprint,
        'webhook certificate not reloaded; still serving the previous one',
        (err as Error).message,
      );
    }
    current = next;
    lastRejected = undefined;
    logger.info('webhook certificate reloaded', {
      certFile: files.certFile,
      ...describeCertificate(next.cert),
    });
    return true;
  };

  return () => {
    busy ??= reloadNow().finally(() => {
      busy = undefined;
    });
    return busy;
  };
}
