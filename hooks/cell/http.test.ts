import { expect } from 'chai';
import request from 'supertest';
import { productApp } from '../controllers/testing.js';
import { clusterReport } from './cluster-report.js';
import { DEFAULT_CELL_CONFIG } from './config.js';
import { observeCluster } from './observe.js';
import type { CellStatus } from '../generated/types/index.js';
import { HOSTILE_BYTES, PROXY_INJECTION } from '../kube/testing.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { serializeCellReport } from '../remote/report.js';
import {
  NOW,
  agentWork,
  cell,
  lease,
  managedCluster,
  node,
  readyProvider,
  relatedOf,
  remoteCell,
  remoteRelatedOf,
} from './testing.js';

describe('Cell hooks over HTTP', () => {
  it('customize asks for the ManagedCluster, its Lease and the profile Nodes', async () => {
    const { app } = await productApp(NOW);
    const response = await request(app)
      .post('/hooks/cell/customize')
      .send({ parent: cell() })
      .expect(200);
    const rules = response.body.relatedResources as {
      resource: string;
      names?: string[];
      namespace?: string;
      labelSelector?: unknown;
    }[];
    expect(rules.find((rule) => rule.resource === 'managedclusters')).to.deep.include({
      names: ['cluster1'],
    });
    expect(rules.find((rule) => rule.resource === 'leases')).to.deep.equal({
      apiVersion: 'coordination.k8s.io/v1',
      resource: 'leases',
      namespace: 'cluster1',
      names: ['managed-cluster-lease'],
    });
    expect(rules.find((rule) => rule.resource === 'nodes')).to.deep.include({
      labelSelector: { matchLabels: { 'kubecell.io/machine-profile': 'a100' } },
    });
  });

  it('sync answers the status Metacontroller writes, the liveness record and the status marker', async () => {
    const { app, logs } = await productApp(NOW);
    const related = relatedOf([
      managedCluster(),
      lease(10),
      node('n1', { 'nvidia.com/gpu': '4' }),
      ...readyProvider(),
    ]);
    const response = await request(app)
      .post('/hooks/cell/sync')
      .send({ parent: cell(), children: {}, related, finalizing: false })
      .expect(200);
    expect(response.body.children).to.deep.equal([
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'kubecell-cell-cell1',
          namespace: 'kubecell-system',
          labels: { 'app.kubernetes.io/part-of': 'kubecell', 'kubecell.io/cell-liveness': 'true' },
        },
        data: {
          cellUID: 'cell-uid-1',
          phase: 'Ready',
          leaseFresh: 'True',
          inventoryFresh: 'True',
          managedClusterReplaced: 'false',
          unhealthyNodes: '',
        },
      },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'kubecell-cell-cell1.status',
          namespace: 'kubecell-system',
          labels: {
            'app.kubernetes.io/part-of': 'kubecell',
            'kubecell.io/cell-status-marker': 'true',
          },
        },
        data: { observedAt: response.body.status.observedAt },
      },
    ]);
    expect(response.body.status.phase).to.equal('Ready');
    expect(response.body.status.inventory['nvidia.com/gpu'].allocatable).to.equal('4');
    await logs.waitForLines(1);
    expect(logs.entries()[0]).to.deep.include({ controller: 'cell', hook: 'sync' });
  });

  it('sync judges a Lease whose renewTime is not a time as LeaseMissing, never writing its bytes', async () => {
    const { app } = await productApp(NOW);
    const hostile = { ...lease(0), spec: { renewTime: `2026-11-30T11:59:50Z${PROXY_INJECTION}` } };
    const related = relatedOf([managedCluster(), hostile, node('n1', {}), ...readyProvider()]);
    const response = await request(app)
      .post('/hooks/cell/sync')
      .send({ parent: cell(), children: {}, related, finalizing: false })
      .expect(200);
    const status = response.body.status as CellStatus;
    expect(status.managedCluster).to.include({ leaseFresh: false });
    expect(status.managedCluster).not.to.have.property('leaseRenewTime');
    expect(status.conditions?.find((c) => c.type === 'LeaseFresh')?.reason).to.equal(
      'LeaseMissing',
    );
    expect(response.text).not.to.match(HOSTILE_BYTES);
  });

  it('answers 400 naming the field when a Lease’s renewTime is not a string', async () => {
    const { app } = await productApp(NOW);
    const related = relatedOf([
      managedCluster(),
      { ...lease(0), spec: { renewTime: 42 } } as KubernetesObject,
    ]);
    const response = await request(app)
      .post('/hooks/cell/sync')
      .send({ parent: cell(), children: {}, related, finalizing: false })
      .expect(400);
    expect(JSON.stringify(response.body)).to.contain('renewTime');
  });

  it('answers 400, not 500, when an observed quantity is a number no quantity can be', async () => {
    const { app } = await productApp(NOW);
    const related = relatedOf([
      managedCluster(),
      lease(10),
      node('n1', { 'nvidia.com/gpu': '4' }),
      ...readyProvider(),
    ]);
    // A key JSON.parse keeps as an own property ("__proto__"), holding a non-integer number: a
    // hostile-bodies run found it reaching the quantity parser as a 500.
    const body = JSON.stringify({
      parent: cell(),
      children: {},
      related,
      finalizing: false,
    }).replace('"nvidia.com/gpu":"4"', '"nvidia.com/gpu":"4","__proto__":5e-324');
    expect(body).to.contain('__proto__');
    const response = await request(app)
      .post('/hooks/cell/sync')
      .set('Content-Type', 'application/json')
      .send(body);
    expect(response.status, JSON.stringify(response.body)).to.equal(400);
    expect(JSON.stringify(response.body)).to.contain('invalid quantity 5e-324');
  });

  it('sync of a ManifestWork Cell passes the validation layer with its agent work related', async () => {
    const { app } = await productApp(NOW);
    const remote = [node('n1', { 'nvidia.com/gpu': '4' }), ...readyProvider()];
    const observation = observeCluster(relatedOf(remote), 'a100', DEFAULT_CELL_CONFIG);
    const report = serializeCellReport(clusterReport('a100', observation, NOW));
    const related = remoteRelatedOf([managedCluster(), lease(10), agentWork(report)]);
    const response = await request(app)
      .post('/hooks/cell/sync')
      .send({ parent: remoteCell(), children: {}, related, finalizing: false })
      .expect(200);
    expect(response.body.status.phase).to.equal('Ready');
    expect(response.body.status.inventory['nvidia.com/gpu'].allocatable).to.equal('4');
  });

  it('answers 400 naming the field for a request without a parent', async () => {
    const { app } = await productApp(NOW);
    const response = await request(app).post('/hooks/cell/sync').send({ children: {} }).expect(400);
    expect(JSON.stringify(response.body)).to.contain('parent');
  });

  it('answers 400 naming the field when the Cell spec breaks its schema, and changes nothing', async () => {
    const { app } = await productApp(NOW);
    const broken = cell();
    delete (broken.spec as Partial<typeof broken.spec>).managedClusterRef;
    const response = await request(app)
      .post('/hooks/cell/sync')
      .send({ parent: broken, children: {}, related: {}, finalizing: false })
      .expect(400);
    expect(response.body.error).to.equal(
      'Cell kubecell-system/cell1 is invalid: spec.managedClusterRef: Required value',
    );
  });
});
