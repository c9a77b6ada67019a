// Waiting for servers to become ready (with harness/poll.ts): every wait names what it waits
// for, gives up early when the server process has died, and reports the end of its log, because
// "timed out" alone explains nothing on a slow CI machine.
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { poll } from '../poll.js';
import { whileRunning, type ManagedProcess } from './processes.js';

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

/** Waits until GET `url` answers 200. */
export function waitForHttpOk(
  description: string,
  url: string,
  tls: TlsClientFiles,
  { process, ...options }: WaitOptions,
): Promise<void> {
  return poll(
    description,
    async () => {
      const response = await httpGet(url, tls);
      return response.status === 200
        ? { value: undefined }
        : { notYet: `HTTP ${response.status}: ${response.body.slice(0, 500)}` };
    },
    { ...options, ...(process ? whileRunning(process) : {}) },
  );
}
