import { expect } from 'chai';
import request from 'supertest';
import { toObjectMap } from '../metacontroller/protocol.js';
import { productApp } from '../server/test-support.js';
import { virtualCluster, virtualNodeClass, NOW } from './testing.js';
import { MAX_LISTED_VIRTUALCLUSTERS, computeClassUsage } from './usage.js';

const SMALL = { name: 'small', uid: 'uid-class-small' };

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
      .send({ parent: virtualNodeClass() })
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
      .send({ parent: virtualNodeClass('x'.repeat(64)) })
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
      .send({ parent: virtualNodeClass(), children: {}, related, finalizing: false })
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

  it('an unused class reports zero', async () => {
    const { app } = await productApp(NOW);
    const response = await request(app)
      .post('/hooks/class-usage/sync')
      .send({ parent: virtualNodeClass(), children: {}, related: null, finalizing: false })
      .expect(200);
    expect(response.body.status).to.deep.equal({ usedBy: { count: 0, virtualClusters: [] } });
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
        .send({
          parent: virtualNodeClass(),
          children: {},
          related: toObjectMap(list),
          finalizing: false,
        })
        .expect(200);
      texts.push(response.text);
    }
    expect(texts[1]).to.equal(texts[0]);
    expect(texts[2]).to.equal(texts[0]);
  });

  it('answers 400 for a parent that is not a VirtualNodeClass', async () => {
    const { app } = await productApp(NOW);
    const response = await request(app)
      .post('/hooks/class-usage/sync')
      .send({
        parent: { ...virtualNodeClass(), kind: 'Cell' },
        children: {},
        related: {},
        finalizing: false,
      })
      .expect(400);
    expect(JSON.stringify(response.body)).to.contain(
      'expected a kubecell.io/v1alpha1 VirtualNodeClass',
    );
  });

  it('has no finalize hook (status only, nothing to clean up)', async () => {
    const { app } = await productApp(NOW);
    await request(app)
      .post('/hooks/class-usage/finalize')
      .send({ parent: virtualNodeClass(), children: {}, related: {}, finalizing: true })
      .expect(404);
  });
});

describe('class usage', () => {
  it('lists at most 1000 VirtualClusters but counts them all', () => {
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
