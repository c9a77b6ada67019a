// The kubecell-delivery hooks over HTTP, through the product app (every controller, the one
// validation layer), with the JSON Metacontroller v4.17.2 posts to a v2 DecoratorController:
// `{controller, object, attachments, related, finalizing}` for sync and `{controller, parent}`
// for customize (pkg/controller/decorator/api/v2/hooks.go,
// pkg/controller/common/customize/api/v2/hooks.go). The objects are shaped as the apiserver
// serves them: a ManagedCluster as OCM's registration leaves it, works with OCM's finalizer,
// owner reference and status feedback.
import { expect } from 'chai';
import request from 'supertest';
import { productApp } from '../controllers/testing.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { VC_UID } from '../virtualcluster/testing.js';
import {
  NOW,
  WORK_KEY,
  deliveryController,
  managedCluster,
  observedWorks,
  placedVirtualCluster,
  remoteCell,
  syncBody,
} from './testing.js';

const VC_WORK = `kubecell-vc-${VC_UID}`;

describe('kubecell-delivery over HTTP (the product app)', () => {
  it('customize: the Cells of the controller namespace and every VirtualCluster', async () => {
    const { app } = await productApp(NOW, { KUBECELL_CONTROLLER_NAMESPACE: 'platform' });
    const res = await request(app)
      .post('/hooks/delivery/customize')
      .send({ controller: deliveryController(), parent: managedCluster() })
      .expect(200);
    expect(res.body).to.deep.equal({
      relatedResources: [
        { apiVersion: 'kubecell.io/v1alpha1', resource: 'cells', namespace: 'platform' },
        { apiVersion: 'kubecell.io/v1alpha1', resource: 'virtualclusters', labelSelector: {} },
      ],
    });
  });

  it('sync: a real ManagedCluster, Cells, a placed VirtualCluster and the works OCM reports on', async () => {
    const { app } = await productApp(NOW);
    const { vc } = placedVirtualCluster();
    const related = [remoteCell(), vc];
    const first = await request(app)
      .post('/hooks/delivery/sync')
      .send(syncBody(related))
      .expect(200);
    const desired = first.body.attachments as KubernetesObject[];
    expect(desired.map((work) => work.metadata.name)).to.deep.equal([
      'kubecell-cell-agent',
      VC_WORK,
    ]);
    // Metacontroller's answer is applied as is: attachments only, nothing for OCM's object.
    expect(Object.keys(first.body)).to.deep.equal(['attachments']);

    const second = await request(app)
      .post('/hooks/delivery/sync')
      .send(syncBody(related, observedWorks(desired)))
      .expect(200);
    expect(second.body).to.deep.equal(first.body);
  });

  it('sync: a deleted VirtualCluster drops its work; the agent stays for the Cell', async () => {
    const { app } = await productApp(NOW);
    const { vc } = placedVirtualCluster();
    const first = await request(app)
      .post('/hooks/delivery/sync')
      .send(syncBody([remoteCell(), vc]))
      .expect(200);
    const observed = observedWorks(first.body.attachments as KubernetesObject[]);
    const res = await request(app)
      .post('/hooks/delivery/sync')
      .send(syncBody([remoteCell()], observed))
      .expect(200);
    expect((res.body.attachments as KubernetesObject[]).map((w) => w.metadata.name)).to.deep.equal([
      'kubecell-cell-agent',
    ]);
  });

  it('refuses a work the apiserver never serves, and keeps every work (400)', async () => {
    const { app } = await productApp(NOW);
    const [work] = observedWorks([
      {
        apiVersion: 'work.open-cluster-management.io/v1',
        kind: 'ManifestWork',
        metadata: { name: VC_WORK, namespace: 'cell-remote' },
      },
    ]);
    const broken = { ...work, status: { conditions: { Applied: 'True' } } } as KubernetesObject;
    const body = syncBody([remoteCell()]);
    body.attachments = { [WORK_KEY]: { [`cell-remote/${VC_WORK}`]: broken } };
    const res = await request(app).post('/hooks/delivery/sync').send(body).expect(400);
    expect(res.body.error).to.equal(
      `invalid sync request: request.attachments["${WORK_KEY}"]["cell-remote/${VC_WORK}"].status.conditions: must be an array, got object`,
    );
  });

  it('refuses an invalid Cell rather than drop the works of its cluster (400)', async () => {
    const { app } = await productApp(NOW);
    const cell = remoteCell();
    (cell.spec as unknown as Record<string, unknown>)['delivery'] = 'Carrier pigeon';
    const res = await request(app)
      .post('/hooks/delivery/sync')
      .send(syncBody([cell]))
      .expect(400);
    expect(res.body.error).to.match(
      /^invalid sync request: request\.related\["Cell\.kubecell\.io\/v1alpha1"\]/,
    );
    expect(res.body.error).to.include('delivery');
  });
});
