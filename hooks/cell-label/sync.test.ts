// The kubecell-cell-label hook over HTTP, with the body Metacontroller v4.17.2 sends to a v2
// DecoratorController's sync (`{controller, object, attachments, related, finalizing}`,
// pkg/controller/decorator/api/v2/hooks.go; hooks/metacontroller/__fixtures__ holds one
// verbatim): a VirtualCluster that chose its Cell by selector is labelled with the Cell once
// resolved, and asked for nothing before.
import { expect } from 'chai';
import request from 'supertest';
import type { VirtualCluster } from '../generated/types/index.js';
import { productApp } from '../controllers/testing.js';
import {
  decoratorHookBody,
  loadFixture,
  type DecoratorHookBody,
} from '../metacontroller/testing.js';
import {
  cell,
  hostNamespace,
  NOW,
  runSync,
  smallClass,
  statusOf,
  virtualCluster,
  withStatus,
} from '../virtualcluster/testing.js';

function cellLabelController(): Record<string, unknown> {
  const controller = loadFixture<DecoratorHookBody>('decorator-sync-related-v2').controller;
  return { ...controller, metadata: { name: 'kubecell-cell-label' } };
}

function selecting(): VirtualCluster {
  const vc = virtualCluster();
  vc.metadata.labels = { 'kubecell.io/class': 'small' };
  vc.spec = { cellSelector: {}, classRef: { name: 'small' } };
  return vc;
}

async function labelsFor(vc: VirtualCluster): Promise<unknown> {
  const { app } = await productApp(NOW);
  const response = await request(app)
    .post('/hooks/cell-label/sync')
    .send(decoratorHookBody(cellLabelController(), vc))
    .expect(200);
  return response.body;
}

describe('cell-label hook over HTTP', () => {
  before(async function () {
    this.timeout(60_000);
    await productApp(NOW);
  });

  it('asks for nothing while the VirtualCluster is not resolved (Metacontroller writes nothing)', async () => {
    expect(await labelsFor(selecting())).to.deep.equal({ attachments: [] });
  });

  it('labels it kubecell.io/cell=<status.resolved.cell.name> once resolved, and returns no status', async () => {
    const resolvedBySync = statusOf(runSync(selecting(), [cell(), smallClass(), hostNamespace()]));
    expect(resolvedBySync.resolved?.cell.name).to.equal('cell1');
    expect(await labelsFor(withStatus(selecting(), resolvedBySync))).to.deep.equal({
      labels: { 'kubecell.io/cell': 'cell1' },
      attachments: [],
    });
  });

  it('answers 400 naming the field for a VirtualCluster that breaks its schema', async () => {
    const { app } = await productApp(NOW);
    const broken = selecting() as unknown as { spec: Record<string, unknown> };
    broken.spec = { cellSelector: {} };
    const response = await request(app)
      .post('/hooks/cell-label/sync')
      .send(decoratorHookBody(cellLabelController(), broken as unknown as VirtualCluster))
      .expect(400);
    expect(JSON.stringify(response.body)).to.match(/spec\.classRef: Required value/);
  });
});
