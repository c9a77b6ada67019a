/**
 * The deadlines of hooks/server/deadlines.ts on a real HTTP server: a request whose headers or
 * body do not arrive in time is answered 408 and closed, a call whose answer is not written in
 * time is closed, and neither holds a load-shedding slot meanwhile. Each test waits for a
 * deadline of 1-2 s to pass (checked once a second), never for an upper bound on time.
 */
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { CompositeSyncResponse } from '../metacontroller/protocol.js';
import { createApp } from './app.js';
import { deadlineServerOptions, type Deadlines } from './deadlines.js';
import { createMetrics } from './metrics.js';
import { HookRegistry } from './registry.js';
import { CELL_SYNC_BODY, captureLogger, type CapturedLogger } from './testing.js';

interface Started {
  server: Server;
  port: number;
  logs: CapturedLogger;
  /** The cell sync handler never answers while this is true. */
  hang: { value: boolean };
}

async function start(deadlines: Deadlines, maxInflight = 64): Promise<Started> {
  const logs = captureLogger();
  const hang = { value: false };
  const registry = new HookRegistry().registerComposite('cell', {
    sync: (): Promise<CompositeSyncResponse> | CompositeSyncResponse =>
      hang.value ? new Promise(() => undefined) : { status: {}, children: [] },
  });
  const app = createApp({
    registry,
    logger: logs.logger,
    metrics: createMetrics({ processMetrics: false }),
    config: { bodyLimit: '1mb', bodyLimitBytes: 1024 * 1024, maxInflight, deadlines },
  });
  const server = createServer(deadlineServerOptions(deadlines), app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, logs, hang };
}

/** A raw connection; resolves with everything the server sent once it closes the connection. */
function rawConnection(port: number, bytes: string): { socket: Socket; closed: Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  socket.write(bytes);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(received)));
  return { socket, closed };
}

function post(port: number): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/hooks/cell/sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: CELL_SYNC_BODY,
  });
}

describe('hook server deadlines (hooks/server/deadlines.ts)', function () {
  this.timeout(20_000);
  let started: Started | undefined;

  afterEach(async () => {
    started?.server.closeAllConnections();
    await new Promise((resolve) => started?.server.close(resolve));
    started = undefined;
  });

  it('answers 408 and closes a request whose headers do not arrive in time', async () => {
    started = await start({ headersSeconds: 1, bodySeconds: 2, requestSeconds: 30 });
    const { closed } = rawConnection(started.port, 'POST /hooks/cell/sync HTTP/1.1\r\nHost: x\r\n');
    expect(await closed).to.match(/^HTTP\/1\.1 408 Request Timeout\r\n/);
  });

  it('answers 408 to a body that does not arrive in time, logs it, and holds no slot meanwhile', async () => {
    // A request deadline well after the body deadline (checked once a second), so it cannot win.
    started = await start({ headersSeconds: 1, bodySeconds: 2, requestSeconds: 30 }, 1);
    const { closed } = rawConnection(
      started.port,
      'POST /hooks/cell/sync HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        'Content-Length: 1000\r\n\r\n{',
    );
    // KUBECELL_MAX_INFLIGHT is 1 and the slow body holds its connection: calls are still served.
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (let i = 0; i < 3; i++) expect((await post(started.port)).status).to.equal(200);

    expect(await closed).to.match(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    await started.logs.waitForLines(4);
    const timedOut = started.logs.entries().find((entry) => entry.status === 408);
    expect(timedOut).to.deep.include({ level: 'warn', controller: 'cell', hook: 'sync' });
    expect(timedOut?.error).to.equal(
      'the request was not received within 2 s (KUBECELL_BODY_TIMEOUT_SECONDS); answered 408 and closed',
    );
  });

  it('closes a call not answered within the request deadline, freeing its slot', async () => {
    started = await start({ headersSeconds: 1, bodySeconds: 1, requestSeconds: 1 }, 1);
    started.hang.value = true;
    const hanging = post(started.port).catch((err: unknown) => err);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await post(started.port)).status, 'the only slot is taken').to.equal(429);

    expect(await hanging).to.be.instanceOf(Error);
    started.hang.value = false;
    expect((await post(started.port)).status, 'the slot is free again').to.equal(200);
    await started.logs.waitForLines(3);
    const closed = started.logs.entries().find((entry) => entry.status === 408);
    expect(closed?.error).to.equal(
      'the call did not finish within 1 s (KUBECELL_REQUEST_TIMEOUT_SECONDS); the connection was closed',
    );
  });

  it('keeps an idle keep-alive connection past the headers deadline', async () => {
    started = await start({ headersSeconds: 1, bodySeconds: 1, requestSeconds: 1 });
    const request =
      'POST /hooks/cell/sync HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(CELL_SYNC_BODY)}\r\n\r\n${CELL_SYNC_BODY}`;
    const { socket } = rawConnection(started.port, request);
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    const answers = (): number => received.split('HTTP/1.1 200 OK').length - 1;
    const until = async (count: number): Promise<void> => {
      while (answers() < count) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    await until(1);
    // Idle for longer than every deadline: Metacontroller keeps idle connections for 90 s.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(socket.destroyed).to.equal(false);
    socket.write(request);
    await until(2);
    socket.destroy();
  });
});
