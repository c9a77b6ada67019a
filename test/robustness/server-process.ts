/**
 * The hook server as the image runs it, for the robustness tests that attack it over the network
 * (slow-clients.test.ts, memory-bounds.test.ts): hooks/main.ts started as a process on free
 * ports, with the admission webhook on HTTPS, and the ordinary calls a real Metacontroller and a
 * real apiserver make, to check they are still answered.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { admissionReview, sample, type TestCertificate } from '../../hooks/admission/testing.js';
import { cellSyncBody } from './bodies.js';

const MAIN = fileURLToPath(new URL('../../hooks/main.ts', import.meta.url));
/** A generous wait for an answer; the point is that one comes, not how fast. */
export const ANSWER_WITHIN_MS = 15_000;

export interface Started {
  child: ChildProcess;
  hookPort: number;
  webhookPort: number;
  lines: () => Array<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** A kubeconfig whose server nobody listens on: the mutating webhook needs no lookup. */
export function unreachableKubeconfig(prefix: string): string {
  const file = join(mkdtempSync(join(tmpdir(), prefix)), 'kubeconfig');
  writeFileSync(
    file,
    stringify({
      'current-context': 'x',
      contexts: [{ name: 'x', context: { cluster: 'x', user: 'x' } }],
      clusters: [{ name: 'x', cluster: { server: 'https://127.0.0.1:1' } }],
      users: [{ name: 'x', user: { token: 'x' } }],
    }),
  );
  return file;
}

/** Starts hooks/main.ts on free ports; resolves once both listeners are up. */
export async function startServer(
  cert: TestCertificate,
  kubeconfig: string,
  env: Record<string, string> = {},
): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: {
      ...process.env,
      KUBECELL_PORT: '0',
      KUBECELL_WEBHOOK_PORT: '0',
      KUBECELL_TLS_CERT_FILE: cert.certFile,
      KUBECELL_TLS_KEY_FILE: cert.keyFile,
      KUBECONFIG: kubeconfig,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = (): Array<Record<string, unknown>> =>
    stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const lineOf = async (msg: string): Promise<Record<string, unknown>> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const line = lines().find((entry) => entry.msg === msg);
      if (line) return line;
      if (Date.now() > deadline || child.exitCode !== null) {
        throw new Error(`no "${msg}" line; stdout: ${stdout} stderr: ${stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  const webhook = await lineOf('admission webhook listening');
  const hooks = await lineOf('hook server listening');
  return {
    child,
    hookPort: Number(hooks.port),
    webhookPort: Number(webhook.port),
    lines,
    async stop() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

export interface Answer {
  status: number;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

/** A Cell sync as Metacontroller sends it (the small body of bodies.ts unless one is given). */
export function hookCall(
  port: number,
  body: string = JSON.stringify(cellSyncBody()),
): Promise<Answer> {
  return fetch(`http://127.0.0.1:${port}/hooks/cell/sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  }).then(async (res) => ({
    status: res.status,
    text: await res.text(),
    headers: Object.fromEntries(res.headers),
  }));
}

/** An AdmissionReview of a VirtualCluster CREATE, as the apiserver sends it to the mutating webhook. */
export function admissionCall(port: number, ca: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/admission/mutate',
        method: 'POST',
        servername: 'localhost',
        ca,
        headers: { 'content-type': 'application/json' },
        timeout: ANSWER_WITHIN_MS,
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${ANSWER_WITHIN_MS} ms`)));
    req.on('error', reject);
    req.end(JSON.stringify(admissionReview('CREATE', sample('51-virtualcluster-full.yaml'))));
  });
}

/** Checks an AdmissionReview answer: 200, and the review allowed. */
export function expectAllowed(answer: Answer): void {
  expect(answer.status, answer.text.slice(0, 300)).to.equal(200);
  const body = JSON.parse(answer.text) as { response?: { allowed?: boolean } };
  expect(body.response?.allowed).to.equal(true);
}

/** A sample's value on the hook server's /metrics. */
export async function metric(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((entry) => entry.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}
