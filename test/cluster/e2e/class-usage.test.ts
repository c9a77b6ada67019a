// Class usage through the real Metacontroller: a platform has a Ready Cell and a
// VirtualNodeClass; tenants place VirtualClusters of that class in their host namespaces, and
// `kubectl get vnclass` tells which of them use it (status.usedBy, the UsedBy column). A
// VirtualCluster that is not resolved (Pending) does not count; a deleted one stops counting.
import { expect } from 'chai';
import type { KubeCellStack } from '../../../harness/cluster/kubecell-stack.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getKubeCell } from '../shared-cluster.js';
import {
  createHostNamespace,
  GPU_CLASS_QUOTA,
  startReadyCell,
  VC,
  VNCLASS,
  type ReadyCell,
} from './cell-fixtures.js';
import { virtualClusterManifest, virtualNodeClassManifest } from '../../../harness/manifests.js';
import { poll } from '../../../harness/poll.js';
import {
  apply,
  eventuallyGone,
  eventuallyPhase,
  getObject,
  kubectl,
  listObjects,
  uniqueName,
  watching,
} from './support.js';

interface UsedBy {
  count: number;
  virtualClusters: { namespace: string; name: string }[];
}

describe('e2e: class usage (status.usedBy) through Metacontroller', function () {
  this.timeout(180_000);
  let stack: KubeCellStack;
  let cell: ReadyCell;
  const klass = uniqueName('e2e-usage');
  // Sorted by namespace the way usedBy lists them: a before b.
  const suffix = Math.random().toString(36).slice(2, 7);
  const tenantA = `e2e-usage-a-${suffix}`;
  const tenantB = `e2e-usage-b-${suffix}`;
  const tenantPending = `e2e-usage-p-${suffix}`;
  const namespaces = [tenantA, tenantB, tenantPending];

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    stack = await getKubeCell();
    cell = await startReadyCell(stack, uniqueName('e2e-usage-cell'));
    for (const namespace of namespaces) await createHostNamespace(stack, namespace);
    await apply(stack, virtualNodeClassManifest(klass, GPU_CLASS_QUOTA), 'e2e-platform');
  });

  after(async function () {
    this.timeout(240_000);
    if (!cell) return;
    for (const namespace of namespaces) {
      await stack.cluster.kubectl(['delete', VC, '--all', '-n', namespace, '--wait=false']);
    }
    await poll(
      'the VirtualClusters of this file gone',
      async () => {
        const left = (await listObjects(stack, VC)).filter((vc) =>
          namespaces.includes(vc.metadata.namespace ?? ''),
        );
        return left.length === 0 ? { value: true } : { notYet: `${left.length} left` };
      },
      watching(stack),
    );
    await cell.stop();
    for (const namespace of namespaces) {
      await stack.cluster.kubectl(['delete', 'namespace', namespace, '--wait=false']);
    }
    await stack.cluster.kubectl(['delete', VNCLASS, klass, '--wait=false']);
  });

  async function usedBy(): Promise<UsedBy | undefined> {
    const object = await getObject(stack, VNCLASS, klass);
    return object?.status?.['usedBy'] as UsedBy | undefined;
  }

  function eventuallyUsedBy(expected: UsedBy): Promise<UsedBy> {
    return poll<UsedBy>(
      `usedBy of ${klass} to be ${JSON.stringify(expected)}`,
      async () => {
        const current = await usedBy();
        // Field order as the apiserver returns it is not the point: compare field by field.
        const normalized = current && {
          count: current.count,
          virtualClusters: current.virtualClusters.map(({ namespace, name }) => ({
            namespace,
            name,
          })),
        };
        return JSON.stringify(normalized) === JSON.stringify(expected)
          ? { value: current! }
          : { notYet: JSON.stringify(current) };
      },
      watching(stack),
    );
  }

  it('a class nobody uses reports count 0', async function () {
    await eventuallyUsedBy({ count: 0, virtualClusters: [] });
  });

  it('two resolved VirtualClusters in two host namespaces count; a Pending one does not', async function () {
    // Pending: its Cell does not exist, so it is never resolved. Created first, so the syncs
    // that count the two others have seen it.
    await apply(
      stack,
      virtualClusterManifest(tenantPending, 'team-p', {
        cell: uniqueName('no-such-cell'),
        klass: klass,
      }),
    );
    await eventuallyPhase(stack, VC, 'team-p', tenantPending, 'Pending');
    await apply(stack, [
      virtualClusterManifest(tenantB, 'team-b', { cell: cell.name, klass: klass }),
      virtualClusterManifest(tenantA, 'team-a', { cell: cell.name, klass: klass }),
    ]);
    // Resolved is what counts (status.resolved names the class and its UID); Ready follows.
    for (const [namespace, name] of [
      [tenantA, 'team-a'],
      [tenantB, 'team-b'],
    ] as const) {
      await poll(
        `${namespace}/${name} resolved`,
        async () => {
          const vc = await getObject(stack, VC, name, namespace);
          return vc?.status?.['resolved'] !== undefined
            ? { value: true }
            : { notYet: vc?.status?.phase ?? '(no status)' };
        },
        watching(stack),
      );
    }
    const usage = await eventuallyUsedBy({
      count: 2,
      virtualClusters: [
        { namespace: tenantA, name: 'team-a' },
        { namespace: tenantB, name: 'team-b' },
      ],
    });
    expect(usage.count).to.equal(2);
    const classUid = (await getObject(stack, VNCLASS, klass))?.metadata.uid;
    for (const [namespace, name] of [
      [tenantA, 'team-a'],
      [tenantB, 'team-b'],
    ] as const) {
      const vc = await getObject(stack, VC, name, namespace);
      expect(vc?.status?.['resolved']).to.deep.include({
        class: {
          ...(vc?.status?.['resolved'] as { class: Record<string, unknown> }).class,
          name: klass,
          uid: classUid,
        },
      });
    }
    // What a user sees: the UsedBy column of `kubectl get vnclass`.
    const table = await kubectl(stack, ['get', VNCLASS, klass]);
    expect(table.split('\n')[0]).to.match(/\bUSEDBY\b/);
    expect(table).to.match(new RegExp(`^${klass}\\s+topolvm-provisioner\\s+2\\s`, 'm'));
  });

  it('deleting one of them brings the count down to 1', async function () {
    await kubectl(stack, ['delete', VC, 'team-b', '-n', tenantB, '--wait=false']);
    await eventuallyGone(stack, VC, 'team-b', tenantB);
    await eventuallyUsedBy({ count: 1, virtualClusters: [{ namespace: tenantA, name: 'team-a' }] });
    const table = await kubectl(stack, ['get', VNCLASS, klass]);
    expect(table).to.match(new RegExp(`^${klass}\\s+topolvm-provisioner\\s+1\\s`, 'm'));
  });
});
