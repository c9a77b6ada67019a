import { expect } from 'chai';
import request from 'supertest';
import { NOW, cell } from '../cell/testing.js';
import { productApp } from './testing.js';

/** The validation layer as Metacontroller meets it: every controller of the product, over HTTP. */
describe('every controller refuses invalid input with a 400 naming the field (over HTTP)', () => {
  const nodes = {
    'Node.v1': {
      a: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'a', labels: { x: 1 } } },
      b: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'b' }, status: { conditions: {} } },
    },
  };

  for (const controller of ['cell', 'plan', 'virtualcluster', 'gpucellpool']) {
    it(`${controller}: a parent whose spec breaks its schema, and related objects of the wrong shape`, async () => {
      const { app, logs } = await productApp(NOW);
      const invalid = await request(app)
        .post(`/hooks/${controller}/sync`)
        .send({ parent: { ...cell(), spec: { machineProfile: 7 } } })
        .expect(400);
      expect(invalid.body.error).to.match(
        /^Cell kubecell-system\/cell1 is invalid: spec\.managedClusterRef: Required value/,
      );
      const shapes = await request(app)
        .post(`/hooks/${controller}/sync`)
        .send({ parent: cell(), related: nodes })
        .expect(400);
      expect(shapes.body.error).to.equal(
        'invalid sync request: request.related["Node.v1"]["a"].metadata.labels["x"]: must be a string, got number; ' +
          'request.related["Node.v1"]["b"].status.conditions: must be an array, got object',
      );
      await logs.waitForLines(2);
      expect(logs.entries().map((entry) => entry.level)).to.deep.equal(['warn', 'warn']);
    });
  }

  it('a decorator: a Namespace whose labels are not strings', async () => {
    const { app } = await productApp(NOW);
    const namespace = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 't', labels: { 'kubecell.io/host-namespace': true } },
    };
    const res = await request(app)
      .post('/hooks/host-namespace/sync')
      .send({ object: namespace, attachments: {} })
      .expect(400);
    expect(res.body.error).to.equal(
      'invalid sync request: request.object.metadata.labels["kubecell.io/host-namespace"]: must be a string, got boolean',
    );
  });
});
