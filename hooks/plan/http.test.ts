import { expect } from 'chai';
import request from 'supertest';
import { readyCell, smallClass } from '../feasibility/testing.js';
import { toObjectMap } from '../metacontroller/protocol.js';
import { productApp } from '../controllers/testing.js';
import { acceptedRelated, hostNamespace, NOW, plan } from './testing.js';

function body(parent: object, related = acceptedRelated()) {
  return {
    controller: { apiVersion: 'metacontroller.k8s.io/v1alpha1', kind: 'CompositeController' },
    parent,
    children: {},
    related,
    finalizing: false,
  };
}

describe('VirtualClusterPlan hooks over HTTP', () => {
  it('customize asks for the Cell in the configured namespace', async () => {
    const { app } = await productApp(NOW, { KUBECELL_CONTROLLER_NAMESPACE: 'platform' });
    const response = await request(app)
      .post('/hooks/plan/customize')
      .send({ parent: plan() })
      .expect(200);
    expect(response.body.relatedResources[0]).to.deep.equal({
      apiVersion: 'kubecell.io/v1alpha1',
      resource: 'cells',
      namespace: 'platform',
      names: ['cell1'],
    });
  });

  it('sync evaluates, returns no children and asks to be called back at expiresAt', async () => {
    const { app, logs } = await productApp(NOW, { KUBECELL_PLAN_TTL_SECONDS: '600' });
    const response = await request(app).post('/hooks/plan/sync').send(body(plan())).expect(200);
    expect(response.body.children).to.deep.equal([]);
    expect(response.body.resyncAfterSeconds).to.equal(600);
    expect(response.body.status).to.deep.include({
      observedGeneration: 1,
      decision: 'Accepted',
      evaluatedAt: '2026-11-30T00:00:00Z',
      expiresAt: '2026-11-30T00:10:00Z',
    });
    await logs.waitForLines(1);
    expect(logs.entries()[0]).to.deep.include({ controller: 'plan', hook: 'sync' });
  });

  it('answers byte-identical bodies for the same request at the same time', async () => {
    const { app } = await productApp(NOW);
    const a = await request(app).post('/hooks/plan/sync').send(body(plan())).expect(200);
    const b = await request(app).post('/hooks/plan/sync').send(body(plan())).expect(200);
    expect(b.text).to.equal(a.text);
  });

  it('keeps the decision on a later resync of the same generation, then expires it', async () => {
    const first = await request((await productApp(NOW)).app)
      .post('/hooks/plan/sync')
      .send(body(plan()))
      .expect(200);
    const parent = { ...plan(), status: first.body.status };
    const gone = toObjectMap([hostNamespace()]);

    const { app: later } = await productApp(new Date('2026-11-30T00:14:59Z'));
    const resync = await request(later)
      .post('/hooks/plan/sync')
      .send(body(parent, gone))
      .expect(200);
    expect(JSON.stringify(resync.body.status)).to.equal(JSON.stringify(first.body.status));
    expect(resync.body.resyncAfterSeconds).to.equal(1);

    const { app: atExpiry } = await productApp(new Date('2026-11-30T00:15:00Z'));
    const expired = await request(atExpiry)
      .post('/hooks/plan/sync')
      .send(body(parent, gone))
      .expect(200);
    expect(expired.body.status.decision).to.equal('Accepted');
    expect(expired.body.status.checks).to.deep.equal(first.body.status.checks);
    expect(expired.body.status.conditions[1]).to.deep.include({
      type: 'Expired',
      status: 'True',
      lastTransitionTime: '2026-11-30T00:15:00Z',
    });
    expect(expired.body).not.to.have.property('resyncAfterSeconds');
  });

  it('re-evaluates over HTTP when the generation changes', async () => {
    const { app } = await productApp(NOW);
    const first = await request(app).post('/hooks/plan/sync').send(body(plan())).expect(200);
    const full = readyCell();
    if (full.status?.inventory?.['nvidia.com/gpu']) {
      full.status.inventory['nvidia.com/gpu'].availableEstimate = '1';
    }
    const related = toObjectMap([full, smallClass(), hostNamespace()]);
    const second = await request(app)
      .post('/hooks/plan/sync')
      .send(body({ ...plan(2), status: first.body.status }, related))
      .expect(200);
    expect(second.body.status.observedGeneration).to.equal(2);
    expect(second.body.status.decision).to.equal('Rejected');
    const gpu = (second.body.status.checks as Array<Record<string, string>>).find(
      (c) => c.name === 'Capacity' && c.resource === 'nvidia.com/gpu',
    );
    expect(gpu).to.include({ required: '2', available: '1', result: 'Fail' });
  });

  it('answers 400 naming the field for a request without a parent', async () => {
    const { app } = await productApp(NOW);
    const response = await request(app).post('/hooks/plan/sync').send({ children: {} }).expect(400);
    expect(JSON.stringify(response.body)).to.contain('parent');
  });
});
