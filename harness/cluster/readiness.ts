// Waiting for servers to become ready. Every wait names what it waits for, gives up early when
// the server process has died, and reports the end of its log, because "timed out" alone
// explains nothing on a slow CI machine.
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { describeExit, logTail, type ManagedProcess } from './processes.js';

export interface TlsClientFiles {
  /** Trust anchor for the server certificate; omit together with `insecure` for plain HTTP. */
  caCertFile?: string;
  certFile?: string;
  keyFile?: string;
  /** Accept any server certificate (for self-signed serving certs of controllers). */
  insecure?: boolean;
}

export interface HttpResponse {
  status: number;
  body: string;
}

/** A single GET with a short timeout; never follows redirects. */
export function httpGet(
  url: string,
  tls: TlsClientFiles = {},
  timeoutMs = 5000,
): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const onResponse = (response: http.IncomingMessage): void => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', reject);
    };
    const request =
      target.protocol === 'https:'
        ? https.get(
            target,
            {
              ca: tls.caCertFile ? readFileSync(tls.caCertFile) : undefined,
              cert: tls.certFile ? readFileSync(tls.certFile) : undefined,
              key: tls.keyFile ? readFileSync(tls.keyFile) : undefined,
              rejectUnauthorized: !tls.insecure,
              timeout: timeoutMs,
            },
            onResponse,
          )
        : http.get(target, { timeout: timeoutMs }, onResponse);
    request.on('timeout', () =>
      request.destroy(new Error(`no answer from ${url} within ${timeoutMs} ms`)),
    );
    request.on('error', reject);
  });
}

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Give up at once (with its log) if this process exits while we wait. */
  process?: ManagedProcess;
}

/**
 * Polls `check` until it returns true. A string or a thrown error counts as "not yet" and is
 * kept as the reason reported when the wait fails.
 */
export async function waitUntil(
  description: string,
  check: () => Promise<true | string>,
  options: WaitOptions,
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  const intervalMs = options.intervalMs ?? 250;
  let lastReason: string;
  for (;;) {
    const exit = options.process?.exitStatus();
    if (options.process && exit) {
      throw new Error(
        `${options.process.name} ${describeExit(exit)} while waiting for ${description}; ` +
          `log ${options.process.logFile}:\n${logTail(options.process.logFile)}`,
      );
    }
    try {
      const outcome = await check();
      if (outcome === true) return;
      lastReason = outcome;
    } catch (error) {
      lastReason = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() >= deadline) {
      const logHint = options.process
        ? `; log ${options.process.logFile}:\n${logTail(options.process.logFile)}`
        : '';
      throw new Error(
        `timed out after ${(options.timeoutMs / 1000).toFixed(0)} s waiting for ${description} (last: ${lastReason})${logHint}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Waits until GET `url` answers 200. */
export function waitForHttpOk(
  description: string,
  url: string,
  tls: TlsClientFiles,
  options: WaitOptions,
): Promise<void> {
  return waitUntil(
    description,
    async () => {
      const response = await httpGet(url, tls);
      return response.status === 200
        ? true
        : `HTTP ${response.status}: ${response.body.slice(0, 500)}`;
    },
    options,
  );
}
