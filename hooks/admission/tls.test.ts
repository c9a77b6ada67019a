import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as netConnect } from 'node:net';
import { connect } from 'node:tls';
import { captureLogger } from '../server/testing.js';
import { createAdmissionApp } from './app.js';
import type { AdmissionReview } from './review.js';
import {
  admissionReview,
  fakeLookup,
  sample,
  selfSignedCertificate,
  type TestCertificate,
} from './testing.js';
import { TlsError, startWebhookServer, type WebhookServer } from './tls.js';

/** The SHA-256 fingerprint of the certificate a new TLS connection to `port` is shown. */
function servedFingerprint(port: number, trusted: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: '127.0.0.1', port, servername: 'localhost', ca: [...trusted] },
      () => {
        const fingerprint = socket.getPeerCertificate().fingerprint256;
        socket.end();
        resolve(fingerprint);
      },
    );
    socket.on('error', reject);
  });
}

const fingerprintOf = (cert: TestCertificate): string =>
  new X509Certificate(cert.cert).fingerprint256;

async function eventually(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function postJson(
  port: number,
  path: string,
  body: unknown,
  ca: string,
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        servername: 'localhost',
        ca,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('admission webhook over TLS (hooks/admission/tls.ts)', function () {
  this.timeout(20000);
  let first: TestCertificate;
  let second: TestCertificate;
  let server: WebhookServer | undefined;
  const logs = captureLogger();
  const app = createAdmissionApp({ lookup: fakeLookup(), logger: logs.logger });

  before(() => {
    const dir = mkdtempSync(join(tmpdir(), 'kubecell-tls-test-'));
    first = selfSignedCertificate('kubecell-first', dir, 'first');
    second = selfSignedCertificate('kubecell-second', dir, 'second');
  });

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** A server on 127.0.0.1 with the first certificate, and `options` on top. */
  const startFirst = (
    options: Partial<Parameters<typeof startWebhookServer>[0]> = {},
  ): Promise<WebhookServer> =>
    startWebhookServer({
      app,
      port: 0,
      host: '127.0.0.1',
      tls: { certFile: first.certFile, keyFile: first.keyFile },
      logger: logs.logger,
      ...options,
    });

  it('serves the admission endpoints over HTTPS with the configured certificate', async () => {
    server = await startFirst();
    expect(await servedFingerprint(server.port, [first.cert])).to.equal(fingerprintOf(first));
    const review = admissionReview('CREATE', sample('51-virtualcluster-full.yaml'));
    const res = await postJson(server.port, '/admission/validate', review, first.cert);
    expect(res.status).to.equal(200);
    expect((res.body as AdmissionReview).response).to.deep.equal({
      uid: (review.request as { uid: string }).uid,
      allowed: true,
    });
    const started = logs.entries().find((e) => e.msg === 'admission webhook listening');
    expect(started).to.include({ port: server.port, certFile: first.certFile });
    expect(started?.subject).to.equal('CN=kubecell-first');
    expect(JSON.stringify(logs.entries())).not.to.include('PRIVATE KEY');
  });

  it('reloads the certificate when the kubelet swaps the mounted Secret (symlink flip)', async () => {
    // The layout of a Secret volume: tls.crt -> ..data/tls.crt, ..data -> ..<timestamp>/.
    const mount = mkdtempSync(join(tmpdir(), 'kubecell-secret-volume-'));
    const generation = (cert: TestCertificate, name: string): string => {
      const dir = join(mount, name);
      mkdirSync(dir);
      copyFileSync(cert.certFile, join(dir, 'tls.crt'));
      copyFileSync(cert.keyFile, join(dir, 'tls.key'));
      return name;
    };
    symlinkSync(generation(first, '..2026_11_30_00_00_00.1'), join(mount, '..data'));
    symlinkSync('..data/tls.crt', join(mount, 'tls.crt'));
    symlinkSync('..data/tls.key', join(mount, 'tls.key'));

    server = await startWebhookServer({
      app,
      port: 0,
      host: '127.0.0.1',
      tls: { certFile: join(mount, 'tls.crt'), keyFile: join(mount, 'tls.key') },
      logger: logs.logger,
      pollIntervalMs: 50,
    });
    const trusted = [first.cert, second.cert];
    expect(await servedFingerprint(server.port, trusted)).to.equal(fingerprintOf(first));

    // Atomic flip, as the kubelet's AtomicWriter does it.
    const next = generation(second, '..2026_12_30_00_00_00.2');
    symlinkSync(next, join(mount, '..data_tmp'));
    renameSync(join(mount, '..data_tmp'), join(mount, '..data'));

    const port = server.port;
    await eventually(
      async () => (await servedFingerprint(port, trusted)) === fingerprintOf(second),
    );
    const reloaded = logs.entries().filter((e) => e.msg === 'webhook certificate reloaded');
    expect(reloaded.at(-1)).to.include({ subject: 'CN=kubecell-second' });
    // The server still answers reviews after the swap.
    const res = await postJson(
      port,
      '/admission/mutate',
      admissionReview('CREATE', sample('21-virtualnodeclass-full.yaml')),
      second.cert,
    );
    expect(res.status).to.equal(200);
  });

  it('keeps the previous certificate while the new files do not make a pair', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubecell-tls-files-'));
    const certFile = join(dir, 'tls.crt');
    const keyFile = join(dir, 'tls.key');
    copyFileSync(first.certFile, certFile);
    copyFileSync(first.keyFile, keyFile);
    server = await startWebhookServer({
      app,
      port: 0,
      host: '127.0.0.1',
      tls: { certFile, keyFile },
      logger: logs.logger,
      pollIntervalMs: 60_000, // driven by reload() below
    });
    const trusted = [first.cert, second.cert];

    // The certificate is replaced first, the key a moment later.
    writeFileSync(certFile, second.cert);
    expect(await server.reload()).to.equal(false);
    expect(await servedFingerprint(server.port, trusted)).to.equal(fingerprintOf(first));
    const warning = logs
      .entries()
      .filter((e) => e.msg === 'webhook certificate not reloaded; still serving the previous one')
      .at(-1);
    expect(String(warning?.error)).to.match(/cannot be used/);

    writeFileSync(keyFile, readFileSync(second.keyFile));
    expect(await server.reload()).to.equal(true);
    expect(await servedFingerprint(server.port, trusted)).to.equal(fingerprintOf(second));
    expect(await server.reload()).to.equal(false); // nothing changed since
  });

  it('refuses to start without a usable certificate, naming the file', async () => {
    const missing = join(first.dir, 'missing.crt');
    let error: unknown;
    try {
      await startWebhookServer({
        app,
        port: 0,
        tls: { certFile: missing, keyFile: first.keyFile },
        logger: logs.logger,
      });
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(TlsError);
    expect((error as Error).message).to.match(
      new RegExp(
        `^cannot read the webhook TLS certificate \\(KUBECELL_TLS_CERT_FILE\\) ${missing}: ENOENT`,
      ),
    );

    error = undefined;
    try {
      await startWebhookServer({
        app,
        port: 0,
        tls: { certFile: first.certFile, keyFile: second.keyFile },
        logger: logs.logger,
      });
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(TlsError);
    expect((error as Error).message).to.include(
      `the webhook certificate ${first.certFile} and key ${second.keyFile} cannot be used`,
    );
  });

  it('closes a connection whose TLS handshake does not finish within the headers deadline', async () => {
    server = await startFirst({
      deadlines: { headersSeconds: 1, bodySeconds: 2, requestSeconds: 3 },
    });
    // A TCP connection that never sends its ClientHello; Node's own default waits 120 s.
    const silent = netConnect(server.port, '127.0.0.1');
    silent.on('error', () => undefined);
    await new Promise((resolve) => silent.once('close', resolve));
    // The port still serves.
    expect(await servedFingerprint(server.port, [first.cert])).to.equal(fingerprintOf(first));
  });

  it('closes a connection past its cap at once', async () => {
    server = await startFirst({ maxConnections: 2 });
    const held = [netConnect(server.port, '127.0.0.1'), netConnect(server.port, '127.0.0.1')];
    await Promise.all(
      held.map((socket) => new Promise((resolve) => socket.once('connect', resolve))),
    );
    // Let the server count both before the third arrives.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const third = netConnect(server.port, '127.0.0.1');
    third.on('error', () => undefined);
    await new Promise((resolve) => third.once('close', resolve));
    expect(held.filter((socket) => socket.destroyed)).to.have.length(0);
    for (const socket of held) socket.destroy();
  });
});
