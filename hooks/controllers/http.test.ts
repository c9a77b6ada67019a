import { expect } from 'chai';
import request from 'supertest';
import { NOW, cell } from '../cell/testing.js';
import { CONTROLLERS } from './register.js';
import { productApp } from './testing.js';

/** The validation layer as Metacontroller meets it: every controller of the product, over HTTP. */
describe('every controller refuses invalid input with a 400 naming the field (over HTTP)', () => {
  for (const { name, type, parent } of CONTROLLERS) {
    const path = type === 'CompositeController' ? 'parent' : 'object';

    it(`${name}: a parent of another type (a selector mistake)`, async () => {
      const { app } = await productApp(NOW);
      const kind = parent.kind === 'ConfigMap' ? 'Secret' : 'ConfigMap';
      const other = { apiVersion: 'v1', kind, metadata: { name: 'x', namespace: 'y' } };
      const res = await request(app)
        .post(`/hooks/${name}/sync`)
        .send({ [path]: other })
        .expect(400);
      expect(res.body.error).to.equal(
        `parent is v1 ${kind} x, expected a ${parent.apiVersion} ${parent.kind}: ` +
          `the kubecell-${name} ${type} must select ${parent.kind} objects only`,
      );
    });

    if (parent.apiVersion !== 'kubecell.io/v1alpha1') continue;
    it(`${name}: a ${parent.kind} whose spec breaks its schema`, async () => {
      const { app, logs } = await productApp(NOW);
      const invalid = {
        ...parent,
        metadata: { name: 'x', ...(parent.kind === 'GPUCellPool' ? {} : { namespace: 'y' }) },
        spec: { surplus: true },
      };
      const res = await request(app)
        .post(`/hooks/${name}/sync`)
        .send({ [path]: invalid })
        .expect(400);
      expect(res.body.error).to.match(new RegExp(`^${parent.kind} (y/)?x is invalid: spec`));
      await logs.waitForLines(1);
      expect(logs.entries()[0]).to.include({ level: 'warn', status: 400 });
    });
  }

  it('cell: related objects of a shape the apiserver never stores', async () => {
    const { app } = await productApp(NOW);
    const nodes = {
      'Node.v1': {
        a: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'a', labels: { x: 1 } } },
        b: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'b' }, status: { conditions: {} } },
      },
    };
    const res = await request(app)
      .post('/hooks/cell/sync')
      .send({ parent: cell(), related: nodes })
      .expect(400);
    expect(res.body.error).to.equal(
      'invalid sync request: request.related["Node.v1"]["a"].metadata.labels["x"]: must be a string, got number; ' +
        'request.related["Node.v1"]["b"].status.conditions: must be an array, got object',
    );
  });

  it('host-namespace: a Namespace whose labels are not strings', async () => {
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
