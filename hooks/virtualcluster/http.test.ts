import { expect } from 'chai';
import request from 'supertest';
import type { VirtualCluster } from '../generated/types/index.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { productApp } from '../controllers/testing.js';
import {
  acceptedRelated,
  asObserved,
  k3kKubeconfigSecret,
  NOW,
  syncRequest,
  virtualCluster,
  withStatus,
} from './testing.js';

describe('VirtualCluster hooks over HTTP', function () {
  // The first productApp() loads every controller and the webhook validators; on a busy machine
  // that alone can exceed mocha's default 2 s (the runs use --no-config).
  this.timeout(30_000);
  before(async () => {
    await productApp(NOW);
  });

  it('customize answers the related rules', async () => {
    const { app } = await productApp(NOW);
    const response = await request(app)
      .post('/hooks/virtualcluster/customize')
      .send({ parent: virtualCluster() })
      .expect(200);
    const rules = response.body.relatedResources as { resource: string; namespace?: string }[];
    expect(rules.map((rule) => `${rule.resource} ${rule.namespace ?? ''}`.trim())).to.deep.equal([
      'cells kubecell-system',
      'virtualnodeclasses',
      'virtualclusters tenant-a',
      'secrets tenant-a',
      'namespaces',
      'manifestworks',
    ]);
  });

  it('sync honours KUBECELL_CONTROLLER_NAMESPACE', async () => {
    const { app } = await productApp(NOW, { KUBECELL_CONTROLLER_NAMESPACE: 'platform' });
    const response = await request(app)
      .post('/hooks/virtualcluster/sync')
      .send(syncRequest(virtualCluster()))
      .expect(200);
    expect(response.body.status.phase).to.equal('Pending');
    expect(response.body.status.feasibilityChecks[0].reason).to.equal('CellNotFound');
  });

  it('sync resolves and answers the children and the whole status', async () => {
    const { app, logs } = await productApp(NOW);
    const response = await request(app)
      .post('/hooks/virtualcluster/sync')
      .send(syncRequest(virtualCluster()))
      .expect(200);
    expect(Object.keys(response.body).sort()).to.deep.equal([
      'children',
      'resyncAfterSeconds',
      'status',
    ]);
    expect(response.body.status.phase).to.equal('Provisioning');
    expect(response.body.status.resolved.cell.uid).to.equal('cell1-uid');
    expect(
      (response.body.children as KubernetesObject[]).map((c) => `${c.apiVersion} ${c.kind}`),
    ).to.deep.equal(['k3k.io/v1beta1 Cluster', 'v1 ResourceQuota', 'v1 LimitRange', 'v1 Service']);
    await logs.waitForLines(1);
    expect(logs.entries()[0]).to.deep.include({ controller: 'virtualcluster', hook: 'sync' });
  });

  it('answers byte-identical bodies for the same request at the same time', async () => {
    const { app } = await productApp(NOW);
    const body = syncRequest(virtualCluster());
    const a = await request(app).post('/hooks/virtualcluster/sync').send(body).expect(200);
    const b = await request(app).post('/hooks/virtualcluster/sync').send(body).expect(200);
    expect(a.text).to.equal(b.text);
  });

  it('publishes the kubeconfig Secret at the NodePort endpoint', async () => {
    const { app } = await productApp(NOW);
    const first = await request(app)
      .post('/hooks/virtualcluster/sync')
      .send(syncRequest(virtualCluster()))
      .expect(200);
    const children = (first.body.children as KubernetesObject[]).map((child) =>
      asObserved(child, child.kind === 'Service' ? { nodePort: 30777 } : {}),
    );
    const second = await request(app)
      .post('/hooks/virtualcluster/sync')
      .send(
        syncRequest(
          withStatus(virtualCluster(), first.body.status),
          [...acceptedRelated(), k3kKubeconfigSecret()],
          children,
        ),
      )
      .expect(200);
    const secret = (second.body.children as (KubernetesObject & { data: Record<string, string> })[])
      .filter((child) => child.kind === 'Secret')
      .at(0);
    const text = Buffer.from(secret?.data['kubeconfig.yaml'] ?? '', 'base64').toString('utf8');
    expect(text).to.contain(
      `server: "https://${first.body.status.resolved.endpointAddress}:30777"\n`,
    );
    expect(second.body.status.endpoint.port).to.equal(30777);
  });

  it('finalize answers finalized only once the children are gone', async () => {
    const { app } = await productApp(NOW);
    const first = await request(app)
      .post('/hooks/virtualcluster/sync')
      .send(syncRequest(virtualCluster()))
      .expect(200);
    const deleting = withStatus(virtualCluster(), first.body.status);
    deleting.metadata.deletionTimestamp = '2026-11-30T00:10:00Z';
    const children = (first.body.children as KubernetesObject[]).map((child) => asObserved(child));
    const waiting = await request(app)
      .post('/hooks/virtualcluster/finalize')
      .send(syncRequest(deleting, [], children, true))
      .expect(200);
    expect(waiting.body.finalized).to.equal(false);
    expect(waiting.body.children).to.deep.equal([]);
    expect(waiting.body.status.cleanup).to.have.length(4);
    const done = await request(app)
      .post('/hooks/virtualcluster/finalize')
      .send(syncRequest(deleting, [], [], true))
      .expect(200);
    expect(done.body.finalized).to.equal(true);
  });

  it('answers 429 with Retry-After for a stale copy (children exist, no snapshot yet), changing nothing', async () => {
    const { app } = await productApp(NOW);
    const first = await request(app)
      .post('/hooks/virtualcluster/sync')
      .send(syncRequest(virtualCluster()))
      .expect(200);
    const children = (first.body.children as KubernetesObject[]).map((child) => asObserved(child));
    const stale = await request(app)
      .post('/hooks/virtualcluster/sync')
      .send(syncRequest(virtualCluster(), acceptedRelated(), children))
      .expect(429);
    expect(stale.headers['retry-after']).to.equal('1');
    expect(stale.body.error).to.match(/no status\.resolved, but its .* was created at/);
  });

  it('answers 400 naming the field for a VirtualCluster whose spec breaks its schema; skip-cleanup still lets it go', async () => {
    const { app } = await productApp(NOW);
    const broken = virtualCluster() as unknown as { spec: Record<string, unknown> };
    delete broken.spec['classRef'];
    const sync = await request(app)
      .post('/hooks/virtualcluster/sync')
      .send(syncRequest(broken as unknown as VirtualCluster))
      .expect(400);
    expect(JSON.stringify(sync.body)).to.contain('classRef');
    const deleting = structuredClone(broken) as unknown as VirtualCluster;
    deleting.metadata.deletionTimestamp = '2026-11-30T00:10:00Z';
    const held = await request(app)
      .post('/hooks/virtualcluster/finalize')
      .send(syncRequest(deleting, [], [], true))
      .expect(400);
    expect(held.body.error).to.contain('classRef').and.contain('kubecell.io/skip-cleanup=true');
    deleting.metadata.annotations = { 'kubecell.io/skip-cleanup': 'true' };
    const finalize = await request(app)
      .post('/hooks/virtualcluster/finalize')
      .send(syncRequest(deleting, [], [], true))
      .expect(200);
    expect(finalize.body.finalized).to.equal(true);
  });

  it('answers 400 naming the field for a request without a parent', async () => {
    const { app } = await productApp(NOW);
    const response = await request(app)
      .post('/hooks/virtualcluster/sync')
      .send({ children: {} })
      .expect(400);
    expect(JSON.stringify(response.body)).to.contain('parent');
  });
});
