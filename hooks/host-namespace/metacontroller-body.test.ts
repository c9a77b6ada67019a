// The kubecell-host-namespace hooks over HTTP with the body Metacontroller v4.17.2 posts to a v2
// DecoratorController, taken verbatim from hooks/metacontroller/__fixtures__/decorator-sync-v2.json:
// `{controller, object, attachments, related, finalizing}` for sync and finalize
// (pkg/controller/decorator/api/v2/hooks.go). http.test.ts has the hooks' behaviour over HTTP.
import { expect } from 'chai';
import request from 'supertest';
import { productApp } from '../controllers/testing.js';
import type { Namespace } from '../kube/objects.js';
import { RESPONSE_FIELDS, type KubernetesObject } from '../metacontroller/protocol.js';
import { loadFixture, type DecoratorHookBody } from '../metacontroller/testing.js';
import { FINALIZE_RESYNC_SECONDS } from './sync.js';
import { applyResponse, NOW, type HookResponse } from './testing.js';

describe('host-namespace hooks over HTTP, with the body Metacontroller posts', () => {
  // The first productApp() loads every controller module; under `mocha --no-config` (2 s
  // default timeout) that alone can outlast a test.
  before(async function () {
    this.timeout(60_000);
    await productApp(NOW);
  });

  const fixture = () => loadFixture<DecoratorHookBody<Namespace>>('decorator-sync-v2');

  it('sync moves a namespace with the v1 baseline to v2, and answers only fields Metacontroller reads', async () => {
    const { app } = await productApp(NOW);
    const body = fixture();
    expect(body.object.metadata.annotations?.['kubecell.io/baseline']).to.equal('v1');
    const response = await request(app).post('/hooks/host-namespace/sync').send(body).expect(200);
    const answer = response.body as HookResponse;
    expect(RESPONSE_FIELDS.decoratorSync).to.include.members(Object.keys(answer));
    expect(answer).to.not.have.property('status');
    expect(answer).to.not.have.property('finalized');
    // Applying the answer changes no label, and of the annotations only the baseline version.
    expect(applyResponse(body.object, answer).metadata.labels).to.deep.equal(
      body.object.metadata.labels,
    );
    expect(applyResponse(body.object, answer).metadata.annotations).to.deep.equal({
      ...body.object.metadata.annotations,
      'kubecell.io/baseline': 'v2',
    });
    // The desired policies are the observed ones, without what the server and Metacontroller
    // add, except what v2 changed: the API policy's pods and sources, and every version label.
    const observedPolicies = Object.values(
      body.attachments['NetworkPolicy.networking.k8s.io/v1'] ?? {},
    );
    expect(answer.attachments.map((policy) => policy.metadata.name).sort()).to.deep.equal(
      observedPolicies.map((policy) => policy.metadata.name).sort(),
    );
    for (const policy of answer.attachments) {
      expect(policy.metadata.labels).to.deep.equal({
        'app.kubernetes.io/part-of': 'kubecell',
        'kubecell.io/baseline': 'v2',
      });
      const seen = observedPolicies.find((p) => p.metadata.name === policy.metadata.name) as
        (KubernetesObject & { spec: unknown }) | undefined;
      const spec = (policy as KubernetesObject & { spec: unknown }).spec;
      if (policy.metadata.name === 'kubecell-allow-api-server') {
        expect(spec).to.not.deep.equal(seen?.spec);
        expect(JSON.stringify(spec)).to.contain('k3k.io/clusterName');
      } else {
        expect(spec).to.deep.equal(seen?.spec);
      }
    }
  });

  it('finalize after the label was removed: deletes the policies, then removes the finalizer', async () => {
    const { app } = await productApp(NOW);
    const body = fixture();
    delete body.object.metadata.labels?.['kubecell.io/host-namespace'];
    body.finalizing = true;
    const first = await request(app).post('/hooks/host-namespace/finalize').send(body).expect(200);
    // The policies are still observed: all of them go, and the finalizer stays until they are
    // gone (Metacontroller would drop it before deleting them).
    expect(first.body).to.deep.equal({
      labels: {
        'pod-security.kubernetes.io/audit': null,
        'pod-security.kubernetes.io/enforce': null,
        'pod-security.kubernetes.io/warn': null,
      },
      annotations: {
        'kubecell.io/baseline': null,
        'kubecell.io/pod-security-applied': null,
        'kubecell.io/pod-security-kept': null,
        'kubecell.io/pod-security-weaker': null,
      },
      attachments: [],
      resyncAfterSeconds: FINALIZE_RESYNC_SECONDS,
    });

    // Next call: labels and annotations applied, the policies deleted (their group stays, empty).
    const after = { ...body, object: applyResponse(body.object, first.body as HookResponse) };
    after.attachments = { 'NetworkPolicy.networking.k8s.io/v1': {} };
    const second = await request(app)
      .post('/hooks/host-namespace/finalize')
      .send(after)
      .expect(200);
    expect(second.body).to.deep.equal({
      labels: {},
      annotations: {
        'kubecell.io/baseline': null,
        'kubecell.io/pod-security-applied': null,
        'kubecell.io/pod-security-kept': null,
        'kubecell.io/pod-security-weaker': null,
      },
      attachments: [],
      finalized: true,
    });
  });

  it('finalize of a namespace being deleted waits for its policies the same way', async () => {
    const { app } = await productApp(NOW);
    const body = fixture();
    body.object.metadata.deletionTimestamp = '2026-11-30T00:00:00Z';
    body.finalizing = true;
    const waiting = await request(app)
      .post('/hooks/host-namespace/finalize')
      .send(body)
      .expect(200);
    expect(waiting.body.finalized).to.equal(undefined);
    expect(waiting.body.attachments).to.deep.equal([]);
    body.attachments = { 'NetworkPolicy.networking.k8s.io/v1': {} };
    const done = await request(app).post('/hooks/host-namespace/finalize').send(body).expect(200);
    expect(done.body.finalized).to.equal(true);
  });

  it('answers 400 naming object and attachments for a body in the composite shape', async () => {
    const { app } = await productApp(NOW);
    const { controller, object, attachments, related, finalizing } = fixture();
    const response = await request(app)
      .post('/hooks/host-namespace/sync')
      .send({ controller, parent: object, children: attachments, related, finalizing })
      .expect(400);
    expect(response.body.error).to.match(
      /^invalid sync request: request\.object: required \(the body has "parent"/,
    );
    expect(response.body.error).to.contain('request.attachments: required');
  });
});
