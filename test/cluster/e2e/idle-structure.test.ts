// The structure of an idle cluster (issues 14 and 24), not its timing: three VirtualClusters,
// each in a host namespace of its own, Ready and idle on one Cell. For about a minute the world
// changes only in ways a resolved VirtualCluster does not depend on: OCM's agent renews the Cell's
// lease every 10 s (the Cell reads the Lease and writes its renewTime: a Cell write, which no
// resolved VirtualCluster relates, since it reads the Cell's liveness record), the kubelet of a
// profile Node posts heartbeats and the Node gets an annotation (the Cell publishes neither), and a
// tenant annotates one of the VirtualClusters (its siblings on the Cell are not related to it).
// Steady state means Metacontroller asks each VirtualCluster for its related-object rules after it
// resolved; it caches them 20 minutes, so the test restarts it once the VirtualClusters are Ready.
// Then:
// - the VirtualClusters nobody touched were not synced at all (the hook server's own log of the
//   calls Metacontroller made, per parent);
// - the Cell's status changed only in the lease's renewal time and its observedAt times, although
//   the Cell was synced for the Node changes and the annotated VirtualCluster (which proves the
//   changes reached Metacontroller and the hooks chose to write nothing else).
// Before issue 14 every one of these changes re-synced every VirtualCluster on the Cell.
import { expect } from 'chai';
import type { KubeCellStack } from '../../../harness/cluster/kubecell-stack.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getKubeCell } from '../shared-cluster.js';
import { loadVirtualClusterConfig } from '../../../hooks/virtualcluster/config.js';
import { heartbeat, nodePath, renewLease } from '../../../harness/simulate/index.js';
import {
  CELL_NAMESPACE,
  createHostNamespace,
  getCell,
  GPU_CLASS_QUOTA,
  hookCallsFor,
  startReadyCell,
  VC,
  VNCLASS,
  type ReadyCell,
} from './cell-fixtures.js';
import { virtualClusterManifest, virtualNodeClassManifest } from '../../../harness/manifests.js';
import { poll } from '../../../harness/poll.js';
import {
  apply,
  describeStatus,
  eventuallyGone,
  eventuallyPhase,
  kubectl,
  uniqueName,
  watching,
} from './support.js';

/** About a minute of changes, one round every 10 s (as often as Kubernetes' node leases). */
const ROUNDS = 6;
const ROUND_MS = 10_000;
/** After the last round: time for what it started to reach the hooks. */
const SETTLE_MS = 5_000;
/**
 * A VirtualCluster not yet settled asks for a resync this many seconds later
 * (KUBECELL_VIRTUALCLUSTER_RESYNC_SECONDS, the default here); Metacontroller keeps such a
 * delayed resync even when a later sync, Ready, asks for none. Idle means past the last of them.
 */
const UNSETTLED_RESYNC_SECONDS = loadVirtualClusterConfig({}).resyncSeconds;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A Cell's status without what each lease renewal moves: its renewTime and the observedAt times. */
function withoutRenewals(status: Record<string, unknown> | undefined): unknown {
  return JSON.parse(
    JSON.stringify(status ?? {}, (key, value: unknown) =>
      key === 'leaseRenewTime' || key === 'observedAt' ? undefined : value,
    ),
  );
}

describe('e2e: an idle VirtualCluster is not synced for changes it does not depend on', function () {
  this.timeout(10 * 60_000);
  let stack: KubeCellStack;
  let cell: ReadyCell | undefined;
  const klass = uniqueName('e2e-idle-class');
  /** One VirtualCluster per host namespace: `quiet` and `other` are never touched. */
  const vcs = {
    quiet: { namespace: uniqueName('e2e-idle-a'), name: 'quiet' },
    touched: { namespace: uniqueName('e2e-idle-b'), name: 'touched' },
    other: { namespace: uniqueName('e2e-idle-c'), name: 'other' },
  };

  const syncsOf = (parent: { name: string; namespace?: string }, controller = 'virtualcluster') =>
    hookCallsFor(stack, controller, 'sync', parent);

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    stack = await getKubeCell();
    cell = await startReadyCell(stack, uniqueName('e2e-idle-cell'));
    await apply(stack, virtualNodeClassManifest(klass, GPU_CLASS_QUOTA), 'e2e-platform');
    for (const vc of Object.values(vcs)) {
      await createHostNamespace(stack, vc.namespace);
      await apply(
        stack,
        virtualClusterManifest(vc.namespace, vc.name, { cell: cell.name, klass: klass }),
      );
    }
    for (const vc of Object.values(vcs)) {
      await eventuallyPhase(stack, VC, vc.name, vc.namespace, 'Ready', 180_000);
    }
    const live = cell;
    await poll(
      `Cell ${live.name} counting the 3 VirtualClusters`,
      async () => {
        const current = await getCell(stack, live.name);
        return current?.status?.['resolvedBy'] === 3
          ? { value: true }
          : { notYet: `resolvedBy ${String(current?.status?.['resolvedBy'])}` };
      },
      watching(stack),
    );
    // Steady state: the rules each VirtualCluster gives once resolved (its Cell's liveness record,
    // not the Cell), not the ones Metacontroller cached before it resolved.
    await stack.restartMetacontroller();
    // Idle: neither the Cell's status (but for the lease's renewals) nor the untouched
    // VirtualClusters' syncs move for longer than the resync a VirtualCluster asked for while it
    // was not Ready yet.
    let previous = '';
    let stableSince = Date.now();
    await poll(
      'the Cell and its VirtualClusters to settle',
      async () => {
        const current = await getCell(stack, live.name);
        const state = JSON.stringify([
          withoutRenewals(current?.status),
          syncsOf(vcs.quiet),
          syncsOf(vcs.other),
        ]);
        if (state !== previous) {
          previous = state;
          stableSince = Date.now();
        }
        return Date.now() - stableSince > (UNSETTLED_RESYNC_SECONDS + 5) * 1000
          ? { value: true }
          : { notYet: `last change ${Date.now() - stableSince} ms ago: ${state}` };
      },
      watching(stack, 180_000),
    );
  });

  after(async function () {
    this.timeout(300_000);
    if (!cell) return;
    for (const vc of Object.values(vcs)) {
      await stack.cluster.kubectl(['delete', VC, vc.name, '-n', vc.namespace, '--wait=false']);
    }
    for (const vc of Object.values(vcs)) {
      await eventuallyGone(stack, VC, vc.name, vc.namespace, 120_000);
    }
    await cell.stop();
    for (const vc of Object.values(vcs)) {
      await stack.cluster.kubectl(['delete', 'namespace', vc.namespace, '--wait=false']);
    }
    await stack.cluster.kubectl(['delete', VNCLASS, klass, '--wait=false']);
  });

  it('renewals, Node heartbeats and a sibling edit sync no untouched VirtualCluster, and change the Cell only in its renewal time', async function () {
    const live = cell as ReadyCell;
    const client = live.simulation.client;
    const node = live.simulation.profileNodes.get(live.profile)?.[0];
    expect(node, `a profile Node of ${live.profile}`).to.be.a('string');

    const cellBefore = await getCell(stack, live.name);
    const windowSeconds = (ROUNDS * ROUND_MS + SETTLE_MS) / 1000;
    const before = {
      quiet: syncsOf(vcs.quiet),
      other: syncsOf(vcs.other),
      touched: syncsOf(vcs.touched),
      cell: syncsOf({ name: live.name, namespace: CELL_NAMESPACE }, 'cell'),
    };

    for (let round = 0; round < ROUNDS; round++) {
      const started = Date.now();
      await renewLease(client, live.name);
      await heartbeat(client, node!);
      await client.patch(
        nodePath(node!),
        { metadata: { annotations: { 'e2e.kubecell.io/idle-round': String(round) } } },
        'e2e-operator',
      );
      if (round % 2 === 0) {
        await kubectl(stack, [
          'annotate',
          VC,
          vcs.touched.name,
          '-n',
          vcs.touched.namespace,
          '--overwrite',
          `e2e.kubecell.io/idle-round=${round}`,
        ]);
      }
      await sleep(Math.max(0, ROUND_MS - (Date.now() - started)));
    }
    await sleep(SETTLE_MS);

    const after = {
      quiet: syncsOf(vcs.quiet),
      other: syncsOf(vcs.other),
      touched: syncsOf(vcs.touched),
      cell: syncsOf({ name: live.name, namespace: CELL_NAMESPACE }, 'cell'),
    };
    const cellAfter = await getCell(stack, live.name);
    console.log(
      `      syncs in ${windowSeconds} s: Cell ${after.cell - before.cell}, ` +
        `touched VirtualCluster ${after.touched - before.touched}, ` +
        `untouched ${after.quiet - before.quiet} and ${after.other - before.other}; ` +
        `Cell resourceVersion ${String(cellBefore?.metadata.resourceVersion)} → ${String(cellAfter?.metadata.resourceVersion)}`,
    );

    // The changes happened and reached the hooks: the Cell (it relates its Nodes and the
    // VirtualClusters on it) and the annotated VirtualCluster were synced.
    expect(after.cell - before.cell, 'Cell syncs').to.be.at.least(1);
    expect(after.touched - before.touched, 'syncs of the annotated VirtualCluster').to.be.at.least(
      1,
    );
    // ... and nothing else moved.
    expect(after.quiet - before.quiet, `syncs of untouched ${vcs.quiet.name}`).to.equal(0);
    expect(after.other - before.other, `syncs of untouched ${vcs.other.name}`).to.equal(0);
    // The renewals reached the Cell (it reads the Lease), and changed nothing else in it.
    const renewTime = (status: Record<string, unknown> | undefined) =>
      (status?.['managedCluster'] as { leaseRenewTime?: string } | undefined)?.leaseRenewTime;
    expect(renewTime(cellAfter?.status), 'leaseRenewTime moved').to.not.equal(
      renewTime(cellBefore?.status),
    );
    expect(withoutRenewals(cellAfter?.status), describeStatus(cellAfter)).to.deep.equal(
      withoutRenewals(cellBefore?.status),
    );
    expect(cellAfter?.status?.phase).to.equal('Ready');
  });
});
