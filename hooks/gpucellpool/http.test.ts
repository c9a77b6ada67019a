import { expect } from 'chai';
import request from 'supertest';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { productApp } from '../controllers/testing.js';
import {
  NOW,
  TOKEN,
  World,
  claimTemplate,
  consumerNamespace,
  joinSecret,
  kubeVirtPool,
  namedClaim,
  withAutoscaling,
} from './testing.js';

const related = () => [joinSecret(), claimTemplate(), consumerNamespace()];

describe('GPUCellPool hooks over HTTP', function () {
  // Loading the app (every controller, the generated validators) takes a few seconds the first
  // time; mocha's default 2 s budget is too short for that on a slow machine.
  this.timeout(30_000);
  before(async () => {
    await productApp(NOW);
  });

  it('customize asks for the join Secret, the claim template, pods and consumer namespaces', async () => {
    const { app } = await productApp(NOW);
    const response = await request(app)
      .post('/hooks/gpucellpool/customize')
      .send({ parent: kubeVirtPool() })
      .expect(200);
    const rules = response.body.relatedResources as { resource: string }[];
    expect(rules.map((rule) => rule.resource)).to.deep.equal([
      'secrets',
      'resourceclaimtemplates',
      'pods',
      'namespaces',
    ]);
  });

  it('sync answers VMs and user-data Secrets, and never logs the join token', async () => {
    const { app, logs } = await productApp(NOW);
    const world = new World(kubeVirtPool(), related());
    const response = await request(app)
      .post('/hooks/gpucellpool/sync')
      .send(world.request())
      .expect(200);
    expect(
      (response.body.children as KubernetesObject[]).map((c) => `${c.kind} ${c.metadata.name}`),
    ).to.deep.equal([
      'VirtualMachine a100-0-0',
      'Secret a100-0-0-user-data',
      'VirtualMachine a100-1-0',
      'Secret a100-1-0-user-data',
    ]);
    expect(response.body.status.desiredReplicas).to.equal(2);
    await logs.waitForLines(1);
    expect(logs.entries()[0]).to.deep.include({ controller: 'gpucellpool', hook: 'sync' });
    expect(logs.lines.join('\n')).to.not.contain(TOKEN);
  });

  it('answers byte-identical bodies for the same request at the same time', async () => {
    const { app } = await productApp(NOW);
    const body = new World(kubeVirtPool(), related()).request();
    const a = await request(app).post('/hooks/gpucellpool/sync').send(body).expect(200);
    const b = await request(app).post('/hooks/gpucellpool/sync').send(body).expect(200);
    expect(a.text).to.equal(b.text);
  });

  it('answers 400 for a named claim with replicas 2 (the CEL rule), and changes nothing', async () => {
    const { app, logs } = await productApp(NOW);
    const pool = kubeVirtPool({ replicas: 2, gpu: { resourceClaimName: 'a100-0' } });
    const world = new World(pool, [joinSecret(), namedClaim(), consumerNamespace()]);
    const response = await request(app)
      .post('/hooks/gpucellpool/sync')
      .send(world.request())
      .expect(400);
    expect(response.body.error).to.contain('GPUCellPool a100 is invalid: spec.replicas');
    expect(response.body.error).to.contain('a named ResourceClaim holds one device for one cell');
    await logs.waitForLines(1);
    expect(logs.lines.join('\n')).to.not.contain(TOKEN);
  });

  it('answers 400 for a named claim with autoscaling.maxReplicas 2', async () => {
    const { app } = await productApp(NOW);
    const pool = withAutoscaling(
      kubeVirtPool({ replicas: 1, gpu: { resourceClaimName: 'a100-0' } }),
      {
        maxReplicas: 2,
      },
    );
    for (const hook of ['customize', 'sync', 'finalize']) {
      const body =
        hook === 'customize'
          ? { parent: pool }
          : new World(pool, [joinSecret(), namedClaim()]).request(hook === 'finalize');
      const response = await request(app).post(`/hooks/gpucellpool/${hook}`).send(body).expect(400);
      expect(response.body.error, hook).to.contain('spec.autoscaling.maxReplicas');
    }
  });

  it('finalize answers finalized once every cell is gone', async () => {
    const { app } = await productApp(NOW);
    const pool = kubeVirtPool({ replicas: 1 });
    pool.metadata.deletionTimestamp = NOW.toISOString();
    const response = await request(app)
      .post('/hooks/gpucellpool/finalize')
      .send(new World(pool, related()).request(true))
      .expect(200);
    expect(response.body).to.deep.include({ finalized: true, children: [] });
  });
});
