/**
 * The connection guard (connections.ts) on a real HTTP server: past the cap a new connection is
 * closed at once and a line says so; from a quarter of the cap, answers carry
 * `Connection: close` and connections already idle are closed after the short keep-alive;
 * below it, connections are kept alive again.
 */
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import {
  guardConnections,
  openFileLimit,
  pressureMark,
  type ConnectionGuard,
} from './connections.js';
import { KEEP_ALIVE_TIMEOUT_MS } from './deadlines.js';
import { captureLogger, type CapturedLogger } from './testing.js';

interface Started {
  server: Server;
  port: number;
  guard: ConnectionGuard;
  logs: CapturedLogger;
}

async function start(maxConnections: number): Promise<Started> {
  const logs = captureLogger();
  const server = createServer({ keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS }, (_req, res) => {
    res.end('ok');
  });
  const guard = guardConnections(server, {
    maxConnections,
    logger: logs.logger,
    listener: 'hooks',
    pressureKeepAliveMs: 300,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, guard, logs };
}

interface Client {
  socket: Socket;
  /** Sends a GET and resolves with the head of its answer. */
  get(): Promise<string>;
  closed: Promise<void>;
  isClosed(): boolean;
}

async function client(port: number): Promise<Client> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let closed = false;
  const whenClosed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      closed = true;
      resolve();
    }),
  );
  await new Promise((resolve) => socket.once('connect', resolve));
  return {
    socket,
    get: () =>
      new Promise((resolve) => {
        socket.once('data', (chunk: Buffer) => resolve(chunk.toString()));
        socket.write('GET /healthz HTTP/1.1\r\nHost: kubecell-hooks\r\n\r\n');
      }),
    closed: whenClosed,
    isClosed: () => closed,
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

describe('connections: a cap per port, idle connections let go under pressure (hooks/server/connections.ts)', () => {
  let started: Started | undefined;
  const clients: Client[] = [];
  afterEach(async () => {
    for (const each of clients.splice(0)) each.socket.destroy();
    if (started === undefined) return;
    const { server } = started;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    started = undefined;
  });

  it('closes a connection past KUBECELL_MAX_CONNECTIONS at once, and logs it', async () => {
    started = await start(3);
    for (let i = 0; i < 3; i++) clients.push(await client(started.port));
    await waitFor(() => (started as Started).guard.open() === 3);
    const fourth = await client(started.port);
    clients.push(fourth);
    await fourth.closed;
    expect(clients.slice(0, 3).filter((each) => each.isClosed())).to.have.length(0);
    await started.logs.waitForLines(1);
    expect(started.logs.entries().find((line) => line.level === 'warn')).to.deep.include({
      msg: 'connection cap reached: new connections were closed',
      listener: 'hooks',
      maxConnections: 3,
      closed: 1,
      setting: 'KUBECELL_MAX_CONNECTIONS',
    });
    // A connection closed frees its place.
    clients[0]?.socket.destroy();
    await waitFor(() => (started as Started).guard.open() === 2);
    const again = await client(started.port);
    clients.push(again);
    expect(await again.get()).to.match(/^HTTP\/1\.1 200 OK\r\n/);
  });

  it('from a quarter of the cap, closes connections after each answer and idle ones soon', async () => {
    started = await start(8);
    expect(pressureMark(8)).to.equal(2);
    const idle = await client(started.port);
    clients.push(idle);
    // One connection: kept alive.
    expect(await idle.get()).to.include('Connection: keep-alive');
    expect(started.guard.pressured()).to.equal(false);

    const second = await client(started.port);
    clients.push(second);
    await waitFor(() => (started as Started).guard.pressured());
    // The connection idle when the mark was crossed got the short keep-alive (300 ms here).
    await idle.closed;
    const third = await client(started.port);
    clients.push(third);
    // Two connections again: the answer says the connection ends, and it does.
    expect(await second.get()).to.include('Connection: close');
    await second.closed;
    expect(started.logs.entries().map((line) => line.msg)).to.include.members([
      'many connections open',
      'connections back to normal',
    ]);

    // Below the mark again: kept alive, with the long keep-alive.
    third.socket.destroy();
    await waitFor(() => !(started as Started).guard.pressured());
    const calm = await client(started.port);
    clients.push(calm);
    expect(await calm.get()).to.include('Connection: keep-alive');
    expect(started.guard.pressured()).to.equal(false);
    expect(started.server.keepAliveTimeout).to.equal(KEEP_ALIVE_TIMEOUT_MS);
    await sleep(600);
    expect(calm.isClosed()).to.equal(false);
  });

  it('reads the open-file limit the cap must fit under (Linux)', () => {
    const limit = openFileLimit();
    if (process.platform === 'linux') expect(limit).to.be.a('number').and.above(0);
  });
});
