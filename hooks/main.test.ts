/** Starts the real entry point (`hooks/main.ts`) as a process, the way `npm start` does. */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { systemClock } from './status/clock.js';
import { registerControllers } from './controllers/register.js';
import { HookRegistry } from './server/registry.js';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));

interface Started {
  child: ChildProcess;
  stdout: string[];
  stderr: () => string;
  exited: Promise<number | null>;
}

function start(env: Record<string, string>): Started {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  let stderr = '';
  let pending = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    stdout.push(...lines.filter((line) => line !== ''));
  });
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return { child, stdout, stderr: () => stderr, exited };
}

async function waitForLine(
  started: Started,
  msg: string,
  timeoutMs = 8000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const line of started.stdout) {
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (entry.msg === msg) return entry;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `no "${msg}" line; stdout: ${started.stdout.join('\n')} stderr: ${started.stderr()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('hook server process (hooks/main.ts)', function () {
  this.timeout(20000);
  let started: Started | undefined;

  afterEach(() => {
    if (started?.child.exitCode === null) started.child.kill('SIGKILL');
    started = undefined;
  });

  it('serves, answers JSON errors, and exits 0 on SIGTERM', async () => {
    started = start({ KUBECELL_PORT: '0', KUBECELL_LOG_LEVEL: 'info' });
    const listening = await waitForLine(started, 'hook server listening');
    expect(listening).to.include({ bodyLimit: '64mb', logLevel: 'info' });
    expect(listening.controllers).to.deep.equal(
      registerControllers(new HookRegistry(), { env: {}, clock: systemClock }).registered(),
    );
    const base = `http://127.0.0.1:${String(listening.port)}`;

    const health = await fetch(`${base}/healthz`);
    expect(health.status).to.equal(200);
    expect(await health.json()).to.deep.equal({ status: 'ok' });
    expect((await fetch(`${base}/readyz`)).status).to.equal(200);

    const malformed = await fetch(`${base}/hooks/cell/sync`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"parent":',
    });
    expect(malformed.status).to.equal(400);
    expect(((await malformed.json()) as { error: string }).error).to.match(
      /^request body is not valid JSON/,
    );

    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).to.include(
      'kubecell_hook_requests_total{controller="cell",hook="sync",code="400"} 1',
    );
    expect(metrics).to.include('process_resident_memory_bytes');

    started.child.kill('SIGTERM');
    expect(await started.exited).to.equal(0);
    await waitForLine(started, 'hook server stopped', 1000);
  });

  it('refuses to start on an invalid variable, naming it', async () => {
    started = start({ KUBECELL_PORT: 'http', KUBECELL_BODY_LIMIT: '64 MiB' });
    expect(await started.exited).to.equal(2);
    expect(started.stderr()).to.include('KUBECELL_PORT="http" is not a port');
    expect(started.stderr()).to.include('KUBECELL_BODY_LIMIT="64 MiB" is not a size');
  });

  it('refuses to start on an invalid controller variable, naming it', async () => {
    started = start({ KUBECELL_PORT: '0', KUBECELL_K3K_CONTROLLER: 'k3k' });
    expect(await started.exited).to.equal(2);
    expect(started.stderr()).to.include(
      'KUBECELL_K3K_CONTROLLER="k3k" is not <namespace>/<name>; set it like k3k-system/k3k (the default)',
    );
  });
});
