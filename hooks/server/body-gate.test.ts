/**
 * The body gate (body-gate.ts) on a real HTTP server with the hook app: a compressed body is
 * refused with 415 and a declared length over the limit with 413 before the body is sent, a
 * chunked body past the limit gets its 413 while its sender is still sending, and past the
 * budget of body bytes a call gets 429 with Retry-After; each refusal closes its connection
 * (each `exchange(...).closed` resolves only once the server has closed it).
 */
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { CompositeSyncResponse } from '../metacontroller/protocol.js';
import { createApp } from './app.js';
import { createBodyBudget, type BodyBudget } from './body-budget.js';
import { DEFAULT_DEADLINES } from './config.js';
import { deadlineServerOptions } from './deadlines.js';
import { createMetrics } from './metrics.js';
import { HookRegistry } from './registry.js';
import { CELL_SYNC_BODY, captureLogger } from './testing.js';

interface Started {
  server: Server;
  port: number;
  budget: BodyBudget;
}

/** The hook app with a 1 KiB body limit and `budgetBytes` of budget (grace `graceMs`). */
async function start(budgetBytes: number, graceMs = 60_000): Promise<Started> {
  const budget = createBodyBudget({
    limitBytes: budgetBytes,
    limit: `${budgetBytes}b`,
    retryAfterSeconds: 7,
    graceMs,
  });
  const registry = new HookRegistry().registerComposite('cell', {
    sync: (): CompositeSyncResponse => ({ status: {}, children: [] }),
  });
  const app = createApp({
    registry,
    logger: captureLogger().logger,
    metrics: createMetrics({ processMetrics: false }),
    config: { bodyLimit: '1kb', bodyLimitBytes: 1024 },
    bodyBudget: budget,
  });
  const server = createServer(deadlineServerOptions(DEFAULT_DEADLINES), app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, budget };
}

interface Exchange {
  /** Sends more bytes on the connection. */
  write(bytes: string): void;
  /** Everything the server sent, once it closed the connection. */
  closed: Promise<string>;
  /** Everything the server sent so far. */
  received(): string;
}

/** A raw connection that sends `head` (a request's headers, perhaps part of its body). */
function exchange(port: number, head: string): Exchange {
  const socket = connect(port, '127.0.0.1');
  socket.write(head);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.on('error', () => undefined);
  return {
    write: (bytes) => socket.write(bytes),
    closed: new Promise((resolve) => socket.once('close', () => resolve(received))),
    received: () => received,
  };
}

function post(headers: string): string {
  return `POST /hooks/cell/sync HTTP/1.1\r\nHost: kubecell-hooks\r\nContent-Type: application/json\r\n${headers}\r\n`;
}

/** Status, headers (lower-cased names) and parsed JSON body of a raw HTTP answer. */
function parse(raw: string): { status: number; headers: Record<string, string>; body: unknown } {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
    }),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) };
}

describe('body gate: memory bounded whatever callers send (hooks/server/body-gate.ts)', () => {
  let started: Started | undefined;
  afterEach(async () => {
    started?.server.closeAllConnections();
    await new Promise((resolve) => started?.server.close(resolve));
    started = undefined;
  });

  it('refuses a compressed body with 415 naming Content-Encoding, before reading it', async () => {
    started = await start(1024 * 1024);
    // The body never comes: the answer does not wait for it.
    for (const encoding of ['gzip', 'deflate', 'br', 'GZIP, identity']) {
      const answer = parse(
        await exchange(
          started.port,
          post(`Content-Encoding: ${encoding}\r\nContent-Length: 500\r\n`),
        ).closed,
      );
      expect(answer.status, encoding).to.equal(415);
      expect(answer.headers.connection).to.equal('close');
      expect(answer.body).to.deep.equal({
        error:
          `request body has Content-Encoding: ${encoding.toLowerCase()}; the KubeCell hook ` +
          'server accepts only uncompressed bodies (no Content-Encoding header, or identity), ' +
          'as Metacontroller and the apiserver send them: remove the header and send the body as is',
      });
    }
    // identity is no encoding.
    const plain = exchange(
      started.port,
      post(`Content-Encoding: identity\r\nContent-Length: ${CELL_SYNC_BODY.length}\r\n`) +
        CELL_SYNC_BODY,
    );
    await waitFor(() => plain.received().includes('\r\n\r\n'));
    expect(parse(plain.received()).status).to.equal(200);
  });

  it('answers 413 at once to a declared length over the limit', async () => {
    started = await start(1024 * 1024);
    const answer = parse(
      await exchange(started.port, post('Content-Length: 99999999999\r\n')).closed,
    );
    expect(answer.status).to.equal(413);
    expect(answer.headers.connection).to.equal('close');
    expect(answer.body).to.deep.equal({
      error:
        'request body (99999999999 bytes) exceeds the limit of 1kb (1024 bytes); raise ' +
        'KUBECELL_BODY_LIMIT on the hook server',
    });
  });

  it('answers 413 to a chunked body as soon as it passes the limit, while it is still being sent', async () => {
    started = await start(1024 * 1024);
    const client = exchange(started.port, post('Transfer-Encoding: chunked\r\n'));
    const chunk = 'x'.repeat(600);
    client.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    client.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    // No last chunk is ever sent.
    const answer = parse(await client.closed);
    expect(answer.status).to.equal(413);
    expect(answer.body).to.deep.equal({
      error:
        'request body exceeds the limit of 1kb (1024 bytes); raise KUBECELL_BODY_LIMIT on the hook server',
    });
  });

  it('answers 429 with Retry-After once the bodies held reach the budget, and frees their bytes', async () => {
    started = await start(1000);
    // A 1000-byte body, of which 900 bytes are sent: its declared length is held at once.
    const held = exchange(started.port, post('Content-Length: 1000\r\n') + 'x'.repeat(900));
    await waitFor(() => (started as Started).budget.used() === 1000);
    const answer = parse(
      await exchange(
        started.port,
        post(`Content-Length: ${CELL_SYNC_BODY.length}\r\n`) + CELL_SYNC_BODY,
      ).closed,
    );
    expect(answer.status).to.equal(429);
    expect(answer.headers['retry-after']).to.equal('7');
    expect(answer.headers.connection).to.equal('close');
    expect(answer.body).to.deep.equal({
      error:
        'the KubeCell hook server holds KUBECELL_BODY_BUDGET (1000b) of request bodies already; ' +
        'retry after 7 s',
    });
    expect(started.budget.used()).to.equal(1000);
    held.write('x'.repeat(100));
    await waitFor(() => held.received().includes('\r\n\r\n'));
    expect(parse(held.received()).status).to.equal(400);
    await waitFor(() => (started as Started).budget.used() === 0);
  });

  it('cuts a body held back past its grace, 429, to make room for a call that needs it', async () => {
    started = await start(1000, 0);
    const held = exchange(started.port, post('Content-Length: 1000\r\n') + 'x'.repeat(900));
    await waitFor(() => (started as Started).budget.used() === 1000);
    const fresh = exchange(
      started.port,
      post(`Content-Length: ${CELL_SYNC_BODY.length}\r\n`) + CELL_SYNC_BODY,
    );
    const cut = parse(await held.closed);
    expect(cut.status).to.equal(429);
    expect(cut.headers['retry-after']).to.equal('7');
    expect((cut.body as { error: string }).error).to.match(
      /^request body incomplete after \d+\.\d s while the request bodies held reach KUBECELL_BODY_BUDGET \(1000b\); cut to make room for others: send it again after 7 s$/,
    );
    await waitFor(() => fresh.received().includes('\r\n\r\n'));
    expect(parse(fresh.received()).status).to.equal(200);
  });
});

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
