/**
 * The admission webhook sheds load like the hook server (hooks/server/load-shedding.ts): past
 * KUBECELL_WEBHOOK_MAX_INFLIGHT reviews in progress, a new one is answered 429 with Retry-After,
 * counted and logged. A uid the answer could not carry back bounded is refused.
 */
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { captureLogger } from '../server/testing.js';
import { createAdmissionApp } from './app.js';
import type { ClusterLookup } from './lookup.js';
import { createAdmissionMetrics } from './metrics.js';
import { admissionReview, fakeLookup, sample } from './testing.js';

describe('admission webhook load shedding and bounds (hooks/admission/app.ts)', () => {
  let server: Server | undefined;
  let release: () => void = () => undefined;

  afterEach(async () => {
    release();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  async function start(lookup: ClusterLookup, maxInflight: number) {
    const logs = captureLogger();
    const registry = new Registry();
    const app = createAdmissionApp({
      lookup,
      logger: logs.logger,
      metrics: createAdmissionMetrics(registry),
      registry,
      maxInflight,
      retryAfterSeconds: 2,
      lookupTimeoutMs: 60_000,
    });
    server = createServer(app);
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const post = (path: string, body: unknown): Promise<Response> =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    return { logs, registry, post };
  }

  it('answers 429 with Retry-After past KUBECELL_WEBHOOK_MAX_INFLIGHT reviews, and counts them', async () => {
    let entered = 0;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const base = fakeLookup();
    const lookup: ClusterLookup = {
      ...base,
      namespaceLabels: async (name) => {
        entered++;
        await gate;
        return base.namespaceLabels(name);
      },
    };
    const { logs, registry, post } = await start(lookup, 1);
    const vc = sample('51-virtualcluster-full.yaml');
    const first = post('/admission/validate', admissionReview('CREATE', vc));
    while (entered === 0) await new Promise((resolve) => setTimeout(resolve, 5));

    const shed = await post('/admission/mutate', admissionReview('CREATE', vc));
    expect(shed.status).to.equal(429);
    expect(shed.headers.get('retry-after')).to.equal('2');
    expect(((await shed.json()) as { error: string }).error).to.equal(
      'the KubeCell admission webhook is busy: 1 reviews are in flight ' +
        '(KUBECELL_WEBHOOK_MAX_INFLIGHT); retry after 2 s',
    );
    const metrics = await registry.metrics();
    expect(metrics).to.include('kubecell_admission_shed_total{webhook="mutate"} 1');
    expect(metrics).to.include('kubecell_admission_inflight 1');

    release();
    expect((await first).status).to.equal(200);
    expect((await post('/admission/mutate', admissionReview('CREATE', vc))).status).to.equal(200);
    await logs.waitForLines(3);
    const shedLine = logs.entries().find((entry) => entry.status === 429);
    expect(shedLine).to.deep.include({ level: 'warn', webhook: 'mutate', result: 'shed' });
    // A shed review is not counted as a review the rules answered.
    expect(await registry.metrics()).to.not.include('result="bad_request"');
  });

  it('refuses a request.uid longer than any the apiserver sends, without echoing it', async () => {
    const { post } = await start(fakeLookup(), 64);
    const review = admissionReview('CREATE', sample('51-virtualcluster-full.yaml'));
    (review.request as { uid: string }).uid = 'u'.repeat(1024 * 1024);
    const res = await post('/admission/validate', review);
    expect(res.status).to.equal(400);
    const text = await res.text();
    expect(text.length).to.be.below(400);
    expect(JSON.parse(text)).to.deep.equal({
      error:
        'AdmissionReview request.uid is 1048576 characters long; the apiserver sends a UUID, ' +
        'and at most 128 characters are accepted',
    });
  });

  it('bounds the name a denial quotes, and lists at most 20 field errors', async () => {
    const { post } = await start(fakeLookup(), 64);
    const cell = sample('11-cell-full.yaml');
    (cell.metadata as { name: string }).name = 'c'.repeat(1024 * 1024);
    const spec = cell.spec as Record<string, unknown>;
    for (let i = 0; i < 30; i++) spec[`unknown${i}`] = i;
    const res = await post('/admission/validate', admissionReview('CREATE', cell));
    const answer = (await res.json()) as {
      response: { status: { message: string; details: { name: string; causes: unknown[] } } };
    };
    const { message, details } = answer.response.status;
    expect(message).to.match(new RegExp(`^Cell\\.kubecell\\.io "c{320}…" is invalid: \\[`));
    expect(message).to.match(/, and \d+ more errors\]$/);
    expect(details.name).to.equal(`${'c'.repeat(320)}…`);
    expect(details.causes).to.have.length(20);
  });
});
