// The kubecell-class-usage hooks over HTTP, with the JSON Metacontroller v4.17.2 sends to a v2
// DecoratorController: `{controller, parent}` for customize, `{controller, object, attachments,
// related, finalizing}` for sync (pkg/controller/common/customize/api/v2/hooks.go,
// pkg/controller/decorator/api/v2/hooks.go); hooks/metacontroller/__fixtures__ holds one of each
// verbatim.
import { expect } from 'chai';
import request from 'supertest';
import type { VirtualNodeClass } from '../generated/types/index.js';
import { RESPONSE_FIELDS, toObjectMap, type ObjectMap } from '../metacontroller/protocol.js';
import {
  decoratorHookBody,
  loadFixture,
  type DecoratorHookBody,
} from '../metacontroller/testing.js';
import { productApp } from '../controllers/testing.js';
import { virtualCluster, virtualNodeClass, NOW } from './testing.js';
import { MAX_LISTED_VIRTUALCLUSTERS, computeClassUsage } from './usage.js';

const SMALL = { name: 'small', uid: 'uid-class-small' };
const VC_KEY = 'VirtualCluster.kubecell.io/v1alpha1';

/** The kubecell-class-usage DecoratorController, as Metacontroller sends it in `controller`. */
function classUsageController(): Record<string, unknown> {
  return loadFixture<DecoratorHookBody>('decorator-sync-related-v2').controller;
}

/**
 * A sync body as Metacontroller builds it: no attachment rule, so `attachments` is `{}`; the
 * customize rule makes `related` carry the VirtualCluster group, empty when none matches.
 */
function syncBody(klass: VirtualNodeClass, related: ObjectMap = { [VC_KEY]: {} }) {
  return decoratorHookBody(classUsageController(), klass, { related });
}

describe('class-usage hooks over HTTP', () => {
  // The first productApp() loads every controller module; under `mocha --no-config` (2 s
  // default timeout) that alone can outlast a test.
  before(async function () {
    this.timeout(60_000);
    await productApp(NOW);
  });

  it('customize relates the VirtualClusters labelled with the class, in every namespace', async () => {
    const { app } = await productApp(NOW);
    const response = await request(app)
      .post('/hooks/class-usage/customize')
      .send(loadFixture('decorator-customize-v2'))
      .expect(200);
    expect(response.body).to.deep.equal({
      relatedResources: [
        {
          apiVersion: 'kubecell.io/v1alpha1',
          resource: 'virtualclusters',
          labelSelector: { matchLabels: { 'kubecell.io/class': 'small' } },
        },
      ],
    });
  });

  it('customize relates nothing to a class no VirtualCluster can name (not a label value)', async () => {
    const { app } = await productApp(NOW);
    const response = await request(app)
      .post('/hooks/class-usage/customize')
      .send({ controller: classUsageController(), parent: virtualNodeClass('x'.repeat(64)) })
      .expect(200);
    expect(response.body).to.deep.equal({ relatedResources: [] });
  });

  it('usedBy counts only the VirtualClusters resolved to this class, sorted', async () => {
    const { app } = await productApp(NOW);
    const related = toObjectMap([
      virtualCluster('tenant-b', 'team-b', 'small', SMALL),
      virtualCluster('tenant-a', 'team-a', 'small', SMALL),
      // Labelled small but resolved to another class: the label was edited by hand.
      virtualCluster('tenant-c', 'team-c', 'small', { name: 'large', uid: 'uid-class-large' }),
      // Labelled with another class (Metacontroller would not send it; the hook checks anyway).
      virtualCluster('tenant-d', 'team-d', 'large', { name: 'small', uid: 'uid-class-small' }),
      // Resolved to an earlier class of the same name (another UID).
      virtualCluster('tenant-e', 'team-e', 'small', { name: 'small', uid: 'uid-old-small' }),
      // Pending: names the class but was not accepted yet.
      virtualCluster('tenant-f', 'team-f', 'small'),
    ]);
    const response = await request(app)
      .post('/hooks/class-usage/sync')
      .send(syncBody(virtualNodeClass(), related))
      .expect(200);
    expect(response.body).to.deep.equal({
      status: {
        usedBy: {
          count: 2,
          virtualClusters: [
            { namespace: 'tenant-a', name: 'team-a' },
            { namespace: 'tenant-b', name: 'team-b' },
          ],
        },
      },
      attachments: [],
    });
  });

  it('answers the body Metacontroller posts (fixture) with fields Metacontroller reads', async () => {
    const { app } = await productApp(NOW);
    const body = loadFixture<DecoratorHookBody<VirtualNodeClass>>('decorator-sync-related-v2');
    const response = await request(app).post('/hooks/class-usage/sync').send(body).expect(200);
    expect(RESPONSE_FIELDS.decoratorSync).to.include.members(Object.keys(response.body));
    expect(response.body).to.deep.equal({
      status: {
        usedBy: { count: 1, virtualClusters: [{ namespace: 'tenant-a', name: 'team-a' }] },
      },
      attachments: [],
    });
  });

  it('an unused class reports zero', async () => {
    const { app } = await productApp(NOW);
    const response = await request(app)
      .post('/hooks/class-usage/sync')
      .send(syncBody(virtualNodeClass()))
      .expect(200);
    expect(response.body.status).to.deep.equal({ usedBy: { count: 0, virtualClusters: [] } });
  });

  it('keeps the status when the VirtualClusters were not observed (no related group)', async () => {
    const { app } = await productApp(NOW);
    const response = await request(app)
      .post('/hooks/class-usage/sync')
      .send(syncBody(virtualNodeClass(), {}))
      .expect(200);
    // No status: Metacontroller leaves .status as it is.
    expect(response.body).to.deep.equal({ attachments: [] });
  });

  it('a class no VirtualCluster can name reports zero without related objects', async () => {
    const { app } = await productApp(NOW);
    const response = await request(app)
      .post('/hooks/class-usage/sync')
      .send(syncBody(virtualNodeClass('x'.repeat(64)), {}))
      .expect(200);
    expect(response.body.status).to.deep.equal({ usedBy: { count: 0, virtualClusters: [] } });
  });

  it('answers 400 naming object for a body in the composite shape', async () => {
    const { app } = await productApp(NOW);
    const { controller, object, related } = syncBody(virtualNodeClass());
    const response = await request(app)
      .post('/hooks/class-usage/sync')
      .send({ controller, parent: object, children: {}, related, finalizing: false })
      .expect(400);
    expect(response.body.error).to.contain('request.object: required (the body has "parent"');
  });

  it('is byte-identical for identical input, whatever order the objects arrive in', async () => {
    const { app } = await productApp(NOW);
    const vcs = [
      virtualCluster('tenant-b', 'team-b', 'small', SMALL),
      virtualCluster('tenant-a', 'team-z', 'small', SMALL),
      virtualCluster('tenant-a', 'team-a', 'small', SMALL),
    ];
    const texts: string[] = [];
    for (const list of [vcs, [...vcs].reverse(), vcs]) {
      const response = await request(app)
        .post('/hooks/class-usage/sync')
        .send(syncBody(virtualNodeClass(), toObjectMap(list)))
        .expect(200);
      texts.push(response.text);
    }
    expect(texts[1]).to.equal(texts[0]);
    expect(texts[2]).to.equal(texts[0]);
  });

  it('answers 400 for a parent that is not a VirtualNodeClass', async () => {
    // A parent of another KubeCell kind is refused before the handler, by the validation layer
    // (hooks/controllers), against that kind's schema; any other object reaches the kind's check.
    const { app } = await productApp(NOW);
    const notAClass = { ...virtualNodeClass(), apiVersion: 'v1', kind: 'ConfigMap' };
    const response = await request(app)
      .post('/hooks/class-usage/sync')
      .send(syncBody(notAClass as unknown as VirtualNodeClass))
      .expect(400);
    expect(JSON.stringify(response.body)).to.contain(
      'expected a kubecell.io/v1alpha1 VirtualNodeClass',
    );
  });

  it('has no finalize hook (status only, nothing to clean up)', async () => {
    const { app } = await productApp(NOW);
    await request(app)
      .post('/hooks/class-usage/finalize')
      .send({ ...syncBody(virtualNodeClass()), finalizing: true })
      .expect(404);
  });
});

describe('class usage', () => {
  it('lists at most 10 VirtualClusters but counts them all', () => {
    const vcs = Array.from({ length: MAX_LISTED_VIRTUALCLUSTERS + 5 }, (_, i) =>
      virtualCluster(`tenant-${String(i).padStart(4, '0')}`, 'vc', 'small', SMALL),
    );
    const status = computeClassUsage(virtualNodeClass(), toObjectMap(vcs));
    expect(status.usedBy?.count).to.equal(MAX_LISTED_VIRTUALCLUSTERS + 5);
    expect(status.usedBy?.virtualClusters).to.have.length(MAX_LISTED_VIRTUALCLUSTERS);
    expect(status.usedBy?.virtualClusters?.[0]).to.deep.equal({
      namespace: 'tenant-0000',
      name: 'vc',
    });
  });

  it('without a class UID (a hand-made request) matches by name', () => {
    const klass = virtualNodeClass();
    delete klass.metadata.uid;
    const status = computeClassUsage(
      klass,
      toObjectMap([virtualCluster('tenant-a', 'team-a', 'small', { name: 'small', uid: 'any' })]),
    );
    expect(status.usedBy?.count).to.equal(1);
  });
});
