// Cells through the real Metacontroller: a platform engineer applies a Cell and checks with
// kubectl that it is Ready once its ManagedCluster has joined, its lease is fresh, the provider
// baseline is ready and its profile Nodes are there; that it turns Degraded when the lease goes
// stale and Failed when the ManagedCluster is replaced; and that deleting a Cell a
// VirtualCluster resolves to waits for the VirtualCluster. The test plays only OCM (the agent
// here; the hub's lease controller runs with the shared cluster), the kubelets and k3k
// (harness/simulate/); every Cell status is written by Metacontroller calling the hooks.
import { expect } from 'chai';
import type { KubeCellStack } from '../../../harness/cluster/kubecell-stack.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getKubeCell } from '../shared-cluster.js';
import {
  K3kSimulator,
  KubeClient,
  loopbackAddressFor,
  managedClusterPath,
  renewLease,
  replaceManagedCluster,
  type LeaseRenewer,
} from '../../../harness/simulate/index.js';
import {
  CELL_FINALIZER,
  CELL_NAMESPACE,
  GPU,
  applyCell,
  cellWorld,
  createHostNamespace,
  deleteCellNow,
  ensureProviderBaseline,
  eventuallyHookCalls,
  cellWithCondition,
  getCell,
  hookCallsFor,
  printedColumns,
  standUpCellWorld,
  startRenewing,
  type CellWorld,
} from './cell-fixtures.js';
import { virtualNodeClassManifest } from '../../../harness/manifests.js';
import { poll } from '../../../harness/poll.js';
import {
  apply,
  conditionOf,
  describeStatus,
  eventuallyGone,
  eventuallyPhase,
  getObject,
  kubectl,
  uniqueName,
  watching,
  type ObjectWithStatus,
} from './support.js';

interface CellStatusView {
  phase?: string;
  resolvedBy?: number;
  managedCluster?: {
    name?: string;
    uid?: string;
    joined?: boolean;
    available?: boolean;
    leaseFresh?: boolean;
    leaseRenewTime?: string;
    leaseDurationSeconds?: number;
  };
  provider?: Record<string, unknown>;
  nodeCount?: { total?: number; ready?: number; omitted?: number };
  nodes?: {
    name: string;
    profile?: string;
    ready?: boolean;
    allocatable?: Record<string, string>;
    activeRequested?: Record<string, string>;
    readinessReasons?: string[];
    observedAt?: string;
  }[];
  notReadyNodes?: { name: string; reasons?: string[] }[];
  nodeAddresses?: { node: string; address: string }[];
  observedAt?: string;
  inventory?: Record<string, { capacity?: string; allocatable?: string; committed?: string }>;
  storageInventory?: { freeCapacity?: string; freeCapacityKnown?: boolean; fresh?: boolean };
  nodePorts?: { fresh?: boolean };
}

const statusOf = (cell: ObjectWithStatus | undefined): CellStatusView =>
  (cell?.status ?? {}) as CellStatusView;

/** type → [status, reason] of every condition, for one deep comparison. */
function conditionTable(cell: ObjectWithStatus | undefined): Record<string, [string, string]> {
  return Object.fromEntries(
    (cell?.status?.conditions ?? []).map((c) => [c.type, [c.status, c.reason ?? '']]),
  );
}

describe('e2e: Cell through Metacontroller', function () {
  this.timeout(180_000);
  let stack: KubeCellStack;
  let client: KubeClient;
  const renewers: LeaseRenewer[] = [];
  const cells: string[] = [];

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    stack = await getKubeCell();
    client = new KubeClient(stack.cluster.kubeconfigPath);
    await ensureProviderBaseline(client);
  });

  after(async function () {
    await Promise.all(renewers.map((renewer) => renewer.stop()));
    if (stack) {
      for (const cell of cells) await deleteCellNow(stack, cell);
    }
    client?.close();
  });

  async function newCell(world: CellWorld): Promise<void> {
    cells.push(world.cell);
    await applyCell(stack, world);
  }

  /** Applies the Cell and waits until it is Ready; logs how long that took, as a user sees it. */
  async function newReadyCell(world: CellWorld): Promise<ObjectWithStatus> {
    const applied = Date.now();
    await newCell(world);
    const cell = await eventuallyPhase(
      stack,
      'cells.kubecell.io',
      world.cell,
      CELL_NAMESPACE,
      'Ready',
    );
    const seenMs = Date.now() - applied;
    const syncs = hookCallsFor(stack, 'cell', 'sync', { name: world.cell });
    const stamped = (conditionOf(cell, 'Ready') as { lastTransitionTime?: string } | undefined)
      ?.lastTransitionTime;
    console.log(
      `      Cell ${world.cell}: Ready seen ${seenMs} ms after kubectl apply (${syncs} sync calls so far; ` +
        `created ${String((cell.metadata as { creationTimestamp?: string }).creationTimestamp)}, Ready since ${String(stamped)})`,
    );
    return cell;
  }

  it('is Ready with a joined ManagedCluster, a fresh lease, the provider baseline and its profile Nodes', async function () {
    const world = cellWorld('e2e-cell-ready');
    const uid = await standUpCellWorld(client, world);
    renewers.push(startRenewing(client, world.managedCluster, 60, 20_000));

    const cell = await newReadyCell(world);

    expect(conditionTable(cell)).to.deep.equal({
      Joined: ['True', 'ManagedClusterJoined'],
      Available: ['True', 'ManagedClusterAvailable'],
      LeaseFresh: ['True', 'LeaseRenewed'],
      ProviderReady: ['True', 'ProviderBaselineReady'],
      InventoryFresh: ['True', 'InventoryObserved'],
      CapabilityMismatch: ['False', 'DevicesOffered'],
      NodeAddressesValid: ['True', 'NodeAddressesValid'],
      NodeDetailTruncated: ['False', 'NodeDetailComplete'],
      NodesHealthy: ['True', 'NodesHealthy'],
      InUse: ['False', 'NoVirtualClusters'],
      Ready: ['True', 'Ready'],
    });
    const status = statusOf(cell);
    expect(status.managedCluster).to.include({
      name: world.managedCluster,
      uid,
      joined: true,
      available: true,
      leaseFresh: true,
    });
    // The Lease's renewTime as last observed, and the duration freshness is judged with.
    expect(status.managedCluster?.leaseRenewTime).to.match(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
    );
    expect(status.managedCluster).to.include({ leaseDurationSeconds: 60 });
    expect(status.observedAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(status.provider).to.include({
      namespaceReady: true,
      k3kCRDsReady: true,
      controllerReady: true,
      cniReady: true,
      topolvmReady: true,
      k3kVersion: 'v1.1.0',
    });
    // Every profile Node, by name, with what the inventory counts on it.
    expect(status.nodes?.map((node) => node.name)).to.deep.equal([...world.nodes].sort());
    for (const node of status.nodes ?? []) {
      expect(node, node.name).to.include({ profile: world.profile, ready: true });
      expect(node.allocatable, node.name).to.include({ [GPU]: '8', cpu: '32' });
      // A Ready Node has no readiness reasons: the list is left out (absent means none).
      expect(node, node.name).not.to.have.property('readinessReasons');
      expect(node.observedAt, node.name).to.equal(status.observedAt);
    }
    expect(status.nodeCount).to.deep.equal({ total: 2, ready: 2, omitted: 0 });
    expect(status.notReadyNodes ?? []).to.deep.equal([]);
    expect(status.nodeAddresses).to.deep.equal(
      [...world.nodes].sort().map((node) => ({ node, address: loopbackAddressFor(node) })),
    );
    // Two Nodes of 32 cpu, 256Gi and 8 GPUs each, and 1 TiB of TopoLVM free space each.
    expect(status.inventory?.[GPU]).to.include({ capacity: '16', allocatable: '16' });
    expect(status.inventory?.['cpu']).to.include({ allocatable: '64' });
    expect(status.inventory?.['memory']).to.include({ allocatable: '512Gi' });
    // 2 × 1 TiB, as TopoLVM annotates it: plain bytes, so the canonical form stays decimal.
    expect(status.storageInventory).to.include({
      freeCapacity: '2199023255552',
      freeCapacityKnown: true,
      fresh: true,
    });
    expect(status.nodePorts).to.include({ fresh: true });
    expect(status.resolvedBy).to.equal(0);
    // The finalize hook is declared, so Metacontroller holds the Cell with its finalizer.
    expect(cell.metadata.finalizers).to.include(CELL_FINALIZER);

    expect(await printedColumns(stack, 'cell', world.cell, CELL_NAMESPACE, true)).to.include({
      NAME: world.cell,
      PHASE: 'Ready',
      MANAGEDCLUSTER: world.managedCluster,
      PROFILE: world.profile,
      VIRTUALCLUSTERS: '0',
      LEASEFRESH: 'true',
    });
    expect(await kubectl(stack, ['get', 'cells', '-n', CELL_NAMESPACE, '--no-headers'])).to.match(
      new RegExp(`^${world.cell}\\s+Ready\\s`, 'm'),
    );
  });

  it('is Pending while its ManagedCluster has not joined, and Ready once OCM joins it', async function () {
    const world = cellWorld('e2e-cell-join');
    await standUpCellWorld(client, world, { join: false });
    await newCell(world);
    const pending = await eventuallyPhase(
      stack,
      'cells.kubecell.io',
      world.cell,
      CELL_NAMESPACE,
      'Pending',
    );
    expect(conditionOf(pending, 'Joined')).to.include({
      status: 'False',
      reason: 'ManagedClusterNotFound',
    });
    // No ManagedCluster, so no Lease to judge.
    expect(conditionOf(pending, 'LeaseFresh')).to.include({
      status: 'False',
      reason: 'LeaseMissing',
    });
    expect(conditionOf(pending, 'Ready')).to.include({
      status: 'False',
      reason: 'ManagedClusterNotFound',
    });
    expect(statusOf(pending).managedCluster).to.not.have.property('uid');

    // OCM: the agent registers, the hub accepts, the agent joins and renews its lease. The Cell
    // relates the ManagedCluster, so Metacontroller syncs it on those events.
    const uid = await standUpCellWorld(client, world);
    renewers.push(startRenewing(client, world.managedCluster, 60, 20_000));
    const ready = await eventuallyPhase(
      stack,
      'cells.kubecell.io',
      world.cell,
      CELL_NAMESPACE,
      'Ready',
    );
    expect(conditionOf(ready, 'Joined')).to.include({
      status: 'True',
      reason: 'ManagedClusterJoined',
    });
    expect(statusOf(ready).managedCluster?.uid).to.equal(uid);
  });

  it('turns Degraded when the lease is no longer renewed, and Ready again when it is', async function () {
    // A 2 s lease duration: OCM's hub (the shared cluster runs its lease controller) finds the
    // lease stale 5 × 2 = 10 s after its last renewal. The agent renews every second until the
    // Cell is Ready.
    const world = cellWorld('e2e-cell-lease');
    await standUpCellWorld(client, world, { join: { leaseDurationSeconds: 2 } });
    const renewer = startRenewing(client, world.managedCluster, 2, 1_000);
    renewers.push(renewer);
    await newReadyCell(world);

    // The agent stops (its lease is left as it was). The Cell asked Metacontroller for a sync at
    // the instant the lease would expire (renewTime + 5 × 2 s), and judges it stale then itself;
    // OCM's hub marks the ManagedCluster Available=Unknown at about the same time, which counts too.
    await renewer.stop();
    const stoppedAt = Date.now();
    const degraded = await eventuallyPhase(
      stack,
      'cells.kubecell.io',
      world.cell,
      CELL_NAMESPACE,
      'Degraded',
      90_000,
    );
    console.log(
      `      Cell ${world.cell}: Degraded ${Date.now() - stoppedAt} ms after the last renewal`,
    );
    expect(conditionOf(degraded, 'LeaseFresh')?.status).to.equal('False');
    expect(conditionOf(degraded, 'LeaseFresh')?.reason).to.be.oneOf([
      'LeaseStale',
      'LeaseUpdateStopped',
    ]);
    expect(conditionOf(degraded, 'Ready')?.reason).to.be.oneOf([
      'LeaseStale',
      'LeaseUpdateStopped',
    ]);
    expect(statusOf(degraded).managedCluster).to.include({ leaseFresh: false });
    expect(await printedColumns(stack, 'cell', world.cell, CELL_NAMESPACE, true)).to.include({
      PHASE: 'Degraded',
      LEASEFRESH: 'false',
    });
    // OCM's hub verdict replaces the agent's Available=True; the Cell reports that too.
    const judged = await cellWithCondition(stack, world.cell, 'Available', 'False');
    const managedCluster = (await client.get(managedClusterPath(world.managedCluster))) as {
      status?: { conditions?: { type: string; status: string; reason?: string }[] };
    };
    expect(
      managedCluster.status?.conditions?.find((c) => c.type === 'ManagedClusterConditionAvailable'),
    ).to.include({ status: 'Unknown', reason: 'ManagedClusterLeaseUpdateStopped' });
    expect(conditionOf(judged, 'Available')).to.include({ reason: 'ManagedClusterUnavailable' });
    expect(conditionOf(judged, 'LeaseFresh')).to.include({
      status: 'False',
      reason: 'LeaseUpdateStopped',
    });

    // The agent comes back: one renewal, its status sync sets Available=True again, and that
    // ManagedCluster event brings the Cell back to Ready.
    await renewLease(client, world.managedCluster, new Date(), { leaseDurationSeconds: 2 });
    const back = await eventuallyPhase(
      stack,
      'cells.kubecell.io',
      world.cell,
      CELL_NAMESPACE,
      'Ready',
    );
    expect(conditionOf(back, 'LeaseFresh')).to.include({ status: 'True', reason: 'LeaseRenewed' });
    expect(statusOf(back).managedCluster).to.include({ available: true, leaseFresh: true });
  });

  it('turns Failed when its ManagedCluster is replaced, until an operator accepts the new UID', async function () {
    const world = cellWorld('e2e-cell-replaced');
    const firstUid = await standUpCellWorld(client, world);
    renewers.push(startRenewing(client, world.managedCluster, 60, 20_000));
    await newReadyCell(world);

    // The cluster is reinstalled and registers again under the same name: a new UID.
    const { newUid } = await replaceManagedCluster(client, world.managedCluster);
    expect(newUid).to.be.a('string').and.not.equal(firstUid);
    const failed = await eventuallyPhase(
      stack,
      'cells.kubecell.io',
      world.cell,
      CELL_NAMESPACE,
      'Failed',
    );
    expect(conditionOf(failed, 'Ready')).to.include({
      status: 'False',
      reason: 'ManagedClusterReplaced',
    });
    expect(conditionOf(failed, 'Ready')?.message).to.contain(
      'kubecell.io/accept-managed-cluster-uid',
    );
    // The UID recorded at first sight is kept: the new cluster is not silently adopted.
    expect(statusOf(failed).managedCluster?.uid).to.equal(firstUid);
    expect((await printedColumns(stack, 'cell', world.cell, CELL_NAMESPACE)).PHASE).to.equal(
      'Failed',
    );

    // The operator checks the VirtualClusters and accepts the new cluster.
    await kubectl(stack, [
      'annotate',
      'cell',
      world.cell,
      '-n',
      CELL_NAMESPACE,
      `kubecell.io/accept-managed-cluster-uid=${newUid}`,
    ]);
    const accepted = await eventuallyPhase(
      stack,
      'cells.kubecell.io',
      world.cell,
      CELL_NAMESPACE,
      'Ready',
    );
    expect(statusOf(accepted).managedCluster?.uid).to.equal(newUid);
  });

  /** A Ready Cell of `world`, and k3k played for the clusters of `hostNamespace`. */
  async function readyCellWithK3k(world: CellWorld, hostNamespace: string): Promise<K3kSimulator> {
    const k3k = new K3kSimulator(client, {
      filter: (cluster) => cluster.metadata.namespace === hostNamespace,
    });
    k3k.start();
    await standUpCellWorld(client, world);
    renewers.push(startRenewing(client, world.managedCluster, 60, 20_000));
    await newReadyCell(world);
    return k3k;
  }

  async function applyVirtualCluster(
    name: string,
    namespace: string,
    cell: string,
    className: string,
  ): Promise<void> {
    await apply(
      stack,
      {
        apiVersion: 'kubecell.io/v1alpha1',
        kind: 'VirtualCluster',
        metadata: { name, namespace },
        spec: { cellRef: { name: cell }, classRef: { name: className } },
      },
      'e2e-tenant',
    );
  }

  describe('deletion while a VirtualCluster resolves the Cell', function () {
    const world = cellWorld('e2e-cell-inuse');
    const hostNamespace = uniqueName('e2e-cell-tenant');
    const className = uniqueName('e2e-cell-class');
    const vcName = 'team-a';
    let k3k: K3kSimulator;

    before(async function () {
      k3k = await readyCellWithK3k(world, hostNamespace);
      await apply(
        stack,
        virtualNodeClassManifest(className, {
          'requests.cpu': '4',
          'requests.memory': '16Gi',
          [`requests.${GPU}`]: '2',
          'requests.storage': '100Gi',
        }),
        'e2e-platform',
      );
      await createHostNamespace(stack, hostNamespace);
    });

    after(async function () {
      await k3k?.stop();
    });

    it('a VirtualCluster resolved to the Cell shows in its status and columns', async function () {
      await applyVirtualCluster(vcName, hostNamespace, world.cell, className);
      const vc = await poll(
        `${hostNamespace}/${vcName} resolved`,
        async () => {
          const object = await getObject(
            stack,
            'virtualclusters.kubecell.io',
            vcName,
            hostNamespace,
          );
          const resolved = (object?.status as { resolved?: { cell?: { name?: string } } })
            ?.resolved;
          return resolved?.cell?.name === world.cell
            ? { value: object }
            : { notYet: describeStatus(object) };
        },
        watching(stack),
      );
      console.log(`      VirtualCluster ${hostNamespace}/${vcName}: ${describeStatus(vc)}`);

      const cell = await cellWithCondition(stack, world.cell, 'InUse', 'True');
      expect(conditionOf(cell, 'InUse')).to.include({
        reason: 'VirtualClustersResolved',
        message: `resolved by: ${hostNamespace}/${vcName}`,
      });
      expect(statusOf(cell).resolvedBy).to.equal(1);
      // The class's entitlement is committed on the Cell.
      expect(statusOf(cell).inventory?.[GPU]).to.include({ committed: '2' });
      expect(
        (await printedColumns(stack, 'cell', world.cell, CELL_NAMESPACE)).VIRTUALCLUSTERS,
      ).to.equal('1');
    });

    it('deleting the Cell waits (Deleting, InUse) and leaves the VirtualCluster alone', async function () {
      await kubectl(stack, ['delete', 'cell', world.cell, '-n', CELL_NAMESPACE, '--wait=false']);
      const deleting = await eventuallyPhase(
        stack,
        'cells.kubecell.io',
        world.cell,
        CELL_NAMESPACE,
        'Deleting',
      );
      expect(deleting.metadata.deletionTimestamp).to.be.a('string');
      expect(deleting.metadata.finalizers).to.include(CELL_FINALIZER);
      expect(conditionOf(deleting, 'InUse')).to.include({
        status: 'True',
        reason: 'VirtualClustersResolved',
      });
      expect(conditionOf(deleting, 'Ready')).to.include({ status: 'False', reason: 'Deleting' });

      // Something the Cell relates to changes (the tenant annotates its VirtualCluster):
      // Metacontroller calls finalize again, and the answer is still "not finalized".
      const calls = hookCallsFor(stack, 'cell', 'finalize', { name: world.cell });
      await kubectl(stack, [
        'annotate',
        'virtualcluster',
        vcName,
        '-n',
        hostNamespace,
        `e2e.kubecell.io/touched=${Date.now()}`,
      ]);
      await eventuallyHookCalls(stack, 'cell', 'finalize', { name: world.cell }, calls + 1);
      const still = await getCell(stack, world.cell);
      expect(still, 'the Cell is still there').to.not.equal(undefined);
      expect(still?.metadata.finalizers).to.include(CELL_FINALIZER);
      expect(still?.status?.phase).to.equal('Deleting');

      // The tenant keeps its cluster: the VirtualCluster and its k3k Cluster are untouched.
      const vc = await getObject(stack, 'virtualclusters.kubecell.io', vcName, hostNamespace);
      expect(vc?.metadata.deletionTimestamp).to.equal(undefined);
      expect(await getObject(stack, 'clusters.k3k.io', vcName, hostNamespace)).to.not.equal(
        undefined,
      );
      console.log(`      VirtualCluster while its Cell is Deleting: ${describeStatus(vc)}`);
    });

    it('the deletion completes once the VirtualCluster is gone', async function () {
      await kubectl(stack, [
        'delete',
        'virtualcluster',
        vcName,
        '-n',
        hostNamespace,
        '--wait=false',
      ]);
      await eventuallyGone(stack, 'virtualclusters.kubecell.io', vcName, hostNamespace, 90_000);
      await eventuallyGone(stack, 'cells.kubecell.io', world.cell, CELL_NAMESPACE, 90_000);
    });
  });
  describe('kubecell.io/skip-cleanup=true on a Cell in use', function () {
    const world = cellWorld('e2e-cell-skip');
    const hostNamespace = uniqueName('e2e-cell-skip-tenant');
    const className = uniqueName('e2e-cell-skip-class');
    const vcName = 'team-b';
    let k3k: K3kSimulator;

    before(async function () {
      k3k = await readyCellWithK3k(world, hostNamespace);
      await apply(
        stack,
        virtualNodeClassManifest(className, { 'requests.cpu': '2' }),
        'e2e-platform',
      );
      await createHostNamespace(stack, hostNamespace);
      await applyVirtualCluster(vcName, hostNamespace, world.cell, className);
      await cellWithCondition(stack, world.cell, 'InUse', 'True');
    });

    after(async function () {
      await kubectl(stack, [
        'delete',
        'virtualcluster',
        vcName,
        '-n',
        hostNamespace,
        '--wait=false',
      ]);
      await eventuallyGone(stack, 'virtualclusters.kubecell.io', vcName, hostNamespace, 90_000);
      await k3k?.stop();
    });

    it('lets the Cell go at once; the VirtualCluster keeps its cluster', async function () {
      await kubectl(stack, ['delete', 'cell', world.cell, '-n', CELL_NAMESPACE, '--wait=false']);
      await eventuallyPhase(stack, 'cells.kubecell.io', world.cell, CELL_NAMESPACE, 'Deleting');
      await kubectl(stack, [
        'annotate',
        'cell',
        world.cell,
        '-n',
        CELL_NAMESPACE,
        'kubecell.io/skip-cleanup=true',
      ]);
      await eventuallyGone(stack, 'cells.kubecell.io', world.cell, CELL_NAMESPACE, 90_000);
      const vc = await getObject(stack, 'virtualclusters.kubecell.io', vcName, hostNamespace);
      expect(vc?.metadata.deletionTimestamp).to.equal(undefined);
      expect(await getObject(stack, 'clusters.k3k.io', vcName, hostNamespace)).to.not.equal(
        undefined,
      );
      console.log(`      VirtualCluster after its Cell was let go: ${describeStatus(vc)}`);
    });
  });
});
