import { expect } from 'chai';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CompositeSyncResponse } from '../metacontroller/protocol.js';
import { createApp } from './app.js';
import { createMetrics } from './metrics.js';
import { HookRegistry } from './registry.js';
import { CELL_SYNC_BODY, captureLogger, type CapturedLogger } from './testing.js';

/** A hook server whose cell sync waits until the test releases it. */
class SlowServer {
  readonly logs: CapturedLogger = captureLogger();
  /** Calls that reached the handler. */
  entered = 0;
  #waiting: Array<() => void> = [];
  #server?: Server;
  #base = '';

  constructor(readonly config: { maxInflight?: number; retryAfterSeconds?: number }) {}

  async start(): Promise<this> {
    const registry = new HookRegistry().registerComposite('cell', {
      sync: async (): Promise<CompositeSyncResponse> => {
        this.entered += 1;
        await new Promise<void>((resolve) => this.#waiting.push(resolve));
        return { status: {}, children: [] };
      },
    });
    const app = createApp({
      registry,
      logger: this.logs.logger,
      metrics: createMetrics({ processMetrics: false }),
      config: { bodyLimit: '1mb', bodyLimitBytes: 1024 * 1024, ...this.config },
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    this.#server = server;
    this.#base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  post(signal?: AbortSignal): Promise<Response> {
    return fetch(`${this.#base}/hooks/cell/sync`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: CELL_SYNC_BODY,
      signal,
    });
  }

  get(path: string): Promise<Response> {
    return fetch(`${this.#base}${path}`);
  }

  async waitUntilEntered(count: number): Promise<void> {
    const deadline = Date.now() + 5000;
    while (this.entered < count) {
      if (Date.now() > deadline) throw new Error(`${this.entered} calls entered, not ${count}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  releaseAll(): void {
    for (const resolve of this.#waiting.splice(0)) resolve();
  }

  async stop(): Promise<void> {
    this.releaseAll();
    this.#server?.closeAllConnections();
    await new Promise((resolve) => this.#server?.close(resolve));
  }
}

describe('hook server load shedding', () => {
  let server: SlowServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('answers 429 with Retry-After beyond KUBECELL_MAX_INFLIGHT calls, and counts them', async () => {
    server = await new SlowServer({ maxInflight: 2, retryAfterSeconds: 3 }).start();
    const admitted = [server.post(), server.post()];
    await server.waitUntilEntered(2);

    const shed = await Promise.all([server.post(), server.post(), server.post()]);
    for (const res of shed) {
      expect(res.status).to.equal(429);
      expect(res.headers.get('retry-after')).to.equal('3');
      const answer = (await res.json()) as { error: string };
      expect(answer.error).to.include('KUBECELL_MAX_INFLIGHT').and.include('retry after 3 s');
    }
    expect(server.entered, 'a shed call never reaches its handler').to.equal(2);

    // Probes and metrics are never shed, even now.
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      expect((await server.get(path)).status, path).to.equal(200);
    }
    const metrics = await (await server.get('/metrics')).text();
    expect(metrics).to.include('kubecell_hook_shed_total{controller="cell",hook="sync"} 3');
    expect(metrics).to.include(
      'kubecell_hook_requests_total{controller="cell",hook="sync",code="429"} 3',
    );
    expect(metrics).to.include('kubecell_hook_inflight 2');

    server.releaseAll();
    for (const res of await Promise.all(admitted)) expect(res.status).to.equal(200);
    // The slots are free again.
    const next = server.post();
    await server.waitUntilEntered(3);
    server.releaseAll();
    expect((await next).status).to.equal(200);

    // Each shed call is logged like any other hook call: one line, status 429.
    await server.logs.waitForLines(6);
    const shedLines = server.logs.entries().filter((entry) => entry.status === 429);
    expect(shedLines).to.have.length(3);
    expect(shedLines[0]).to.deep.include({ level: 'warn', controller: 'cell', hook: 'sync' });
  });

  it('frees the slot of a caller that went away', async () => {
    server = await new SlowServer({ maxInflight: 1 }).start();
    const abort = new AbortController();
    const gone = server.post(abort.signal).catch((err: unknown) => err);
    await server.waitUntilEntered(1);
    expect((await server.post()).status).to.equal(429);
    abort.abort();
    await gone;

    const deadline = Date.now() + 5000;
    for (;;) {
      const res = server.post();
      // Admitted calls wait in the handler; release them until the answer arrives (on a busy
      // machine the call may reach its handler only after a while).
      const releasing = setInterval(() => server?.releaseAll(), 20);
      const { status } = await res.finally(() => clearInterval(releasing));
      if (status === 200) break;
      expect(status).to.equal(429);
      if (Date.now() > deadline) throw new Error('the slot of the aborted call was never freed');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  });

  it('sheds nothing when KUBECELL_MAX_INFLIGHT is 0', async () => {
    server = await new SlowServer({ maxInflight: 0 }).start();
    const calls = Array.from({ length: 8 }, () => server!.post());
    await server.waitUntilEntered(8);
    server.releaseAll();
    for (const res of await Promise.all(calls)) expect(res.status).to.equal(200);
  });

  it('defaults to 64 calls in flight when the config does not say', async () => {
    server = await new SlowServer({}).start();
    const calls = Array.from({ length: 65 }, () => server!.post());
    await server.waitUntilEntered(64);
    const statuses: number[] = [];
    // The 65th call is the one shed; which one that is depends on arrival order.
    await new Promise((resolve) => setTimeout(resolve, 50));
    server.releaseAll();
    for (const res of await Promise.all(calls)) statuses.push(res.status);
    expect(statuses.filter((status) => status === 429)).to.have.length(1);
    expect(statuses.filter((status) => status === 200)).to.have.length(64);
  });
});
