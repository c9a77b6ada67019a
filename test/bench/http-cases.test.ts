/**
 * The HTTP benchmark measures what it claims: every case's body, as the benchmark builds it, is
 * answered 200 with the steady state's answer by the product (the hook server's app with every
 * controller; for the admission webhook its app, reading the benchmark's stand-in apiserver
 * over HTTPS with the product's lookup), never a refusal; the webhook's watch cache syncs from
 * the stand-in and then answers the review without reading it; and the cases too big for the
 * machine are run with fewer connections and by count, as bench/http.ts says.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import request from 'supertest';
import { createAdmissionApp } from '../../hooks/admission/app.js';
import { startWatchCache } from '../../hooks/admission/cached-lookup.js';
import { createKubernetesLookup } from '../../hooks/admission/lookup.js';
import { selfSignedCertificate, type TestCertificate } from '../../hooks/admission/testing.js';
import { productApp } from '../../hooks/controllers/testing.js';
import { captureLogger } from '../../hooks/server/testing.js';
import { apiserverStub, writeStubKubeconfig } from '../../bench/apiserver-stub.js';
import { virtualClusterCreateReview, webhookLookups } from '../../bench/bodies-admission.js';
import { loadPlan } from '../../bench/http.js';
import { httpCases, type HttpCase } from '../../bench/http-cases.js';

const NOW = new Date();
/** The Cell's generator at its smallest size; 100 to 5,000 Nodes only repeat it. */
const CASES = httpCases([10]);

describe('HTTP benchmark cases (bench/http-cases.ts)', function () {
  // Loading every controller and building the bodies takes a few seconds on a slow machine.
  this.timeout(120_000);
  let cert: TestCertificate;
  let stub: https.Server;
  let admission: ReturnType<typeof createAdmissionApp>;
  let kubeConfig: KubeConfig;
  /** What the stand-in apiserver was asked, path and query. */
  const stubRequests: string[] = [];

  before(async () => {
    cert = selfSignedCertificate('kubecell-hooks.kubecell-system.svc');
    const key = readFileSync(cert.keyFile, 'utf8');
    const answer = apiserverStub(webhookLookups(NOW));
    stub = https.createServer({ cert: cert.cert, key }, (req, res) => {
      stubRequests.push(decodeURIComponent(req.url ?? ''));
      answer(req, res);
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    kubeConfig = new KubeConfig();
    const file = path.join(cert.dir, 'kubeconfig');
    kubeConfig.loadFromFile(
      writeStubKubeconfig(file, (stub.address() as AddressInfo).port, cert.cert),
    );
    admission = createAdmissionApp({
      lookup: createKubernetesLookup(kubeConfig),
      logger: captureLogger().logger,
    });
  });

  after(async () => {
    stub.closeAllConnections();
    await new Promise((resolve) => stub.close(resolve));
    rmSync(cert.dir, { recursive: true, force: true });
  });

  async function post(httpCase: HttpCase, body: object) {
    const app = httpCase.listener === 'webhook' ? admission : (await productApp(NOW)).app;
    return request(app).post(httpCase.path).send(body);
  }

  it('covers every hook issue 25 names, the Cell at 10, 100, 1,000 and 5,000 Nodes', () => {
    expect(httpCases().map((c) => c.hook)).to.deep.equal([
      'virtualcluster/sync',
      'plan/sync',
      'cell/sync (10 Nodes × 20 pods)',
      'cell/sync (100 Nodes × 20 pods)',
      'cell/sync (1,000 Nodes × 20 pods)',
      'cell/sync (5,000 Nodes × 20 pods)',
      'gpucellpool/sync (KubeVirt)',
      'gpucellpool/sync (Cluster API)',
      'host-namespace/sync',
      'class-usage/sync',
      'delivery/sync',
      'admission/validate (VirtualCluster CREATE)',
      'admission/mutate (VirtualCluster CREATE)',
    ]);
  });

  for (const httpCase of CASES) {
    it(`${httpCase.hook}: 200 and the steady state's answer`, async () => {
      const body = httpCase.body(NOW);
      const response = await post(httpCase, body);
      expect(response.status, JSON.stringify(response.body).slice(0, 500)).to.equal(200);
      expect(response.body).to.not.have.property('error');
      expect(httpCase.check(response.body as Record<string, unknown>, body)).to.equal(undefined);
      process.stdout.write(
        `      ${httpCase.hook}: ${(Buffer.byteLength(JSON.stringify(body)) / 1000).toFixed(1)} KB\n`,
      );
    });
  }

  it('admission/validate: the watch cache syncs from the stand-in apiserver, then the review reads nothing', async () => {
    const cache = startWatchCache({
      kubeConfig,
      logger: captureLogger().logger,
      controllerNamespace: 'kubecell-system',
    });
    try {
      const deadline = Date.now() + 10_000;
      while (!cache.synced()) {
        if (Date.now() > deadline) throw new Error('the watch cache never synced from the stub');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      stubRequests.length = 0;
      const cached = createAdmissionApp({
        lookup: createKubernetesLookup(kubeConfig),
        cache: cache.lookup,
        logger: captureLogger().logger,
      });
      const response = await request(cached)
        .post('/admission/validate')
        .send(virtualClusterCreateReview('validate'));
      expect(response.body.response?.allowed, JSON.stringify(response.body)).to.equal(true);
      expect(stubRequests, 'requests to the stand-in apiserver').to.deep.equal([]);
    } finally {
      cache.stop();
    }
  });

  it('each check refuses an answer that is not the steady state', () => {
    for (const httpCase of CASES) {
      const body = httpCase.body(NOW);
      expect(httpCase.check({ error: 'refused' }, body), httpCase.hook).to.be.a('string');
    }
  });

  it('the VirtualCluster request is the size the idle benchmark measured (32.9 KB) within 15 %', () => {
    const vc = CASES.find((c) => c.hook === 'virtualcluster/sync') as HttpCase;
    const bytes = Buffer.byteLength(JSON.stringify(vc.body(NOW)));
    expect(bytes).to.be.within(32_900 * 0.85, 32_900 * 1.15);
  });

  it('a 5,000-Node Cell runs with the connections that fit in memory, by count', () => {
    const options = { durationSeconds: 10, warmupSeconds: 3, maxBodyBytesInFlight: 2 * 1024 ** 3 };
    const huge = loadPlan(64, 146e6, 2.5, options);
    expect(huge.connections).to.equal(14);
    expect(huge.measure).to.deep.equal({ amount: 28 });
    expect(huge.warmup).to.deep.equal({ amount: 2, connections: 1 });
    expect(huge.timeout).to.equal(140);
    const small = loadPlan(64, 33_000, 0.002, options);
    expect(small).to.deep.include({ connections: 64, measure: { duration: 10 } });
  });
});
