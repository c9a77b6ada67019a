// The structure of an idle cluster (issue 14), not its timing: three VirtualClusters, each in a
// host namespace of its own, Ready and idle on one Cell. For about a minute the world changes
// only in ways a VirtualCluster does not depend on: OCM's agent renews the Cell's lease every
// 10 s (the Cell reads OCM's judgement on the ManagedCluster, never the Lease), the kubelet of a
// profile Node posts heartbeats and the Node gets an annotation (the Cell publishes counts and
// addresses, not heartbeats), and a tenant annotates one of the VirtualClusters (its siblings on
// the Cell are not related to it). Then:
// - the VirtualClusters nobody touched were not synced at all (the hook server's own log of the
//   calls Metacontroller made, per parent);
// - the Cell's status was not rewritten (its resourceVersion did not move), although the Cell was
//   synced for the Node changes and the annotated VirtualCluster (which proves the changes
//   reached Metacontroller and the hooks chose to write nothing).
// Before issue 14 every one of these changes re-synced every VirtualCluster on the Cell.
import { expect } from 'chai';
import type { KubeCellStack } from '../kubecell-stack.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getKubeCell } from '../shared-cluster.js';
import { loadVirtualClusterConfig } from '../../../hooks/virtualcluster/config.js';
import { heartbeat, nodePath, renewLease } from '../../simulate/index.js';
import {
  CELL_NAMESPACE,
  VC,
  VNCLASS,
  createHostNamespace,
  getCell,
  hookCallsFor,
  startReadyCell,
  virtualCluster,
  virtualNodeClass,
  type ReadyCell,
} from './cell-fixtures.js';
import {
  apply,
  describeStatus,
  eventually,
  eventuallyGone,
  eventuallyPhase,
  kubectl,
  uniqueName,
} from './support.js';

/** About a minute of changes, one round every 10 s (as often as Kubernetes' node leases). */
const ROUNDS = 6;
const ROUND_MS = 10_000;
/** After the last round: time for what it started to reach the hooks. */
const SETTLE_MS = 5_000;
/** The Cell rewrites an unchanged status at most this often (status.observedAt). */
const CELL_HEARTBEAT_SECONDS = 300;
/**
 * A VirtualCluster not yet settled asks for a resync this many seconds later
 * (KUBECELL_VIRTUALCLUSTER_RESYNC_SECONDS, the default here); Metacontroller keeps such a
 * delayed resync even when a later sync, Ready, asks for none. Idle means past the last of them.
 */
const UNSETTLED_RESYNC_SECONDS = loadVirtualClusterConfig({}).resyncSeconds;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
    await apply(stack, virtualNodeClass(klass), 'e2e-platform');
    for (const vc of Object.values(vcs)) {
      await createHostNamespace(stack, vc.namespace);
      await apply(stack, virtualCluster(vc.namespace, vc.name, cell.name, klass));
    }
    for (const vc of Object.values(vcs)) {
      await eventuallyPhase(stack, VC, vc.name, vc.namespace, 'Ready', 180_000);
    }
    const live = cell;
    await eventually(stack, `Cell ${live.name} counting the 3 VirtualClusters`, async () => {
      const current = await getCell(stack, live.name);
      return current?.status?.['resolvedBy'] === 3
        ? { value: true }
        : { notYet: `resolvedBy ${String(current?.status?.['resolvedBy'])}` };
    });
    // Idle: neither the Cell's status nor the untouched VirtualClusters' syncs move for longer
    // than the resync a VirtualCluster asked for while it was not Ready yet.
    let previous = '';
    let stableSince = Date.now();
    await eventually(
      stack,
      'the Cell and its VirtualClusters to settle',
      async () => {
        const current = await getCell(stack, live.name);
        const state = JSON.stringify([
          current?.metadata.resourceVersion,
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
      180_000,
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

  it('renewals, Node heartbeats and a sibling edit sync neither the untouched VirtualClusters nor rewrite the Cell', async function () {
    const live = cell as ReadyCell;
    const client = live.simulation.client;
    const node = live.simulation.profileNodes.get(live.profile)?.[0];
    expect(node, `a profile Node of ${live.profile}`).to.be.a('string');

    const cellBefore = await getCell(stack, live.name);
    const observedAt = Date.parse(String(cellBefore?.status?.['observedAt']));
    const windowSeconds = (ROUNDS * ROUND_MS + SETTLE_MS) / 1000;
    // The heartbeat would rewrite the Cell in the window: not what this test is about.
    expect(
      (Date.now() - observedAt) / 1000 + windowSeconds,
      `age of the Cell's observedAt (${String(cellBefore?.status?.['observedAt'])}) at the end of the window`,
    ).to.be.below(CELL_HEARTBEAT_SECONDS);
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
    expect(cellAfter?.metadata.resourceVersion, describeStatus(cellAfter)).to.equal(
      cellBefore?.metadata.resourceVersion,
    );
    expect(cellAfter?.status).to.deep.equal(cellBefore?.status);
    expect(cellAfter?.status?.phase).to.equal('Ready');
  });
});
