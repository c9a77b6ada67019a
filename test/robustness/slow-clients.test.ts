// Slow clients (issue 15, finding 1), against the real server: hooks/main.ts started as a
// process, the way the image runs it, with the admission webhook on HTTPS. 64 connections send
// their headers and one byte of body and never finish. Before the fix, each took a
// load-shedding slot before its body was read, so every hook call was answered 429 until Node's
// 300 s request timeout. Now a slot is taken only once a body is complete, and the deadlines
// (hooks/server/deadlines.ts) close such connections: an ordinary hook call and an ordinary
// AdmissionReview are still answered 200 while the 64 are held open, and with short deadlines
// the 64 are answered 408 and closed. The waits are generous (a busy 2-core machine); nothing
// asserts how fast an answer comes.
import { expect } from 'chai';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { selfSignedCertificate, type TestCertificate } from '../../hooks/admission/testing.js';
import {
  admissionCall,
  ANSWER_WITHIN_MS,
  expectAllowed,
  hookCall,
  metric,
  startServer,
  unreachableKubeconfig,
  type Started,
} from './server-process.js';

const SLOW_CLIENTS = 64;

interface SlowClient {
  socket: Socket;
  /** What the server sent, until it closed the connection. */
  received: () => string;
  closed: Promise<void>;
  isClosed: () => boolean;
}

/** Headers of a POST announcing a body of 1 MB, and its first byte; the rest never comes. */
function slowRequest(path: string): string {
  return (
    `POST ${path} HTTP/1.1\r\nHost: kubecell-hooks\r\nContent-Type: application/json\r\n` +
    'Content-Length: 1048576\r\n\r\n{'
  );
}

/** `count` connections made by `open`, each with its slow request written once `ready` fires. */
async function openSlowClients(
  count: number,
  open: () => Socket,
  ready: 'connect' | 'secureConnect',
  path: string,
): Promise<SlowClient[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<SlowClient>((resolve, reject) => {
          const socket = open();
          let received = '';
          let closed = false;
          socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
          socket.on('error', () => undefined);
          const whenClosed = new Promise<void>((done) =>
            socket.once('close', () => {
              closed = true;
              done();
            }),
          );
          socket.once('error', reject);
          socket.once(ready, () => {
            socket.off('error', reject);
            socket.write(slowRequest(path), () =>
              resolve({
                socket,
                received: () => received,
                closed: whenClosed,
                isClosed: () => closed,
              }),
            );
          });
        }),
    ),
  );
}

describe('robustness: slow clients on the hook and webhook ports (hooks/main.ts)', function () {
  this.timeout(120_000);
  let cert: TestCertificate;
  let kubeconfig: string;
  let server: Started | undefined;
  let slow: SlowClient[] = [];

  before(() => {
    cert = selfSignedCertificate('kubecell-hooks.kubecell-system.svc');
    kubeconfig = unreachableKubeconfig('kubecell-slow-');
  });

  afterEach(async () => {
    for (const client of slow) client.socket.destroy();
    slow = [];
    await server?.stop();
    server = undefined;
  });

  const openHookClients = (count = SLOW_CLIENTS): Promise<SlowClient[]> =>
    openSlowClients(
      count,
      () => netConnect((server as Started).hookPort, '127.0.0.1'),
      'connect',
      '/hooks/cell/sync',
    );
  const openWebhookClients = (count = SLOW_CLIENTS): Promise<SlowClient[]> =>
    openSlowClients(
      count,
      () =>
        tlsConnect({
          host: '127.0.0.1',
          port: (server as Started).webhookPort,
          servername: 'localhost',
          ca: cert.cert,
        }),
      'secureConnect',
      '/admission/mutate',
    );
  // Let the server read every slow request's headers and first byte before the ordinary call.
  const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1000));

  it(`answers an ordinary hook call 200 while ${SLOW_CLIENTS} clients hold their bodies back`, async () => {
    server = await startServer(cert, kubeconfig);
    slow = await openHookClients();
    await settle();

    for (let i = 0; i < 3; i++) {
      const answer = await hookCall(server.hookPort);
      expect(answer.status, answer.text.slice(0, 300)).to.equal(200);
    }
    // The slow requests were held open all along, not closed by a deadline, and hold no slot.
    expect(slow.filter((client) => client.isClosed())).to.have.length(0);
    expect(await metric(server.hookPort, 'kubecell_hook_inflight')).to.equal(0);
    expect((await fetch(`http://127.0.0.1:${server.hookPort}/healthz`)).status).to.equal(200);
  });

  it(`answers an ordinary AdmissionReview 200 while ${SLOW_CLIENTS} clients hold their bodies back`, async () => {
    server = await startServer(cert, kubeconfig);
    slow = await openWebhookClients();
    await settle();

    for (let i = 0; i < 3; i++) expectAllowed(await admissionCall(server.webhookPort, cert.cert));
    expect(slow.filter((client) => client.isClosed())).to.have.length(0);
    expect(await metric(server.hookPort, 'kubecell_admission_inflight')).to.equal(0);
    // And the hook port is not affected by the webhook port's slow clients.
    expect((await hookCall(server.hookPort)).status).to.equal(200);
  });

  it('answers 408 and closes slow requests on both ports once their body deadline passes', async () => {
    server = await startServer(cert, kubeconfig, {
      KUBECELL_HEADERS_TIMEOUT_SECONDS: '1',
      KUBECELL_BODY_TIMEOUT_SECONDS: '2',
      // Well after the body deadline (checked once a second), so that one is what fires.
      KUBECELL_REQUEST_TIMEOUT_SECONDS: '30',
    });
    const hooks = await openHookClients(8);
    const webhooks = await openWebhookClients(8);
    slow = [...hooks, ...webhooks];
    // Headers that never end are closed too.
    const headless = netConnect(server.hookPort, '127.0.0.1');
    headless.on('error', () => undefined);
    headless.write('POST /hooks/cell/sync HTTP/1.1\r\nHost: kubecell-hooks\r\n');
    let headlessReceived = '';
    headless.on('data', (chunk: Buffer) => (headlessReceived += chunk.toString()));
    const headlessClosed = new Promise((resolve) => headless.once('close', resolve));

    await Promise.all([...slow.map((client) => client.closed), headlessClosed]);
    for (const client of slow) {
      expect(client.received()).to.match(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    }
    expect(headlessReceived).to.match(/^HTTP\/1\.1 408 Request Timeout\r\n/);

    // Each is logged: a hook call, or an admission review, with status 408 and the reason.
    const deadline = Date.now() + ANSWER_WITHIN_MS;
    const timedOut = (): Array<Record<string, unknown>> =>
      server!.lines().filter((line) => line.status === 408);
    while (timedOut().length < 16 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const logged = timedOut();
    expect(logged.filter((line) => line.msg === 'hook call')).to.have.length(8);
    expect(logged.filter((line) => line.msg === 'admission review')).to.have.length(8);
    for (const line of logged) {
      expect(line.error).to.match(
        /^the request was not received within 2 s \(KUBECELL_BODY_TIMEOUT_SECONDS\)/,
      );
    }
    expect((await hookCall(server.hookPort)).status).to.equal(200);
  });
});
