// What a Cell's status says, through the real Metacontroller, checked as a platform engineer does
// with kubectl: that the Lease managed-cluster-lease, not the ManagedCluster's Available
// condition, decides whether the Cell and its VirtualClusters are live (a hub whose registration
// controller is down leaves Available True on a dead cluster), and that status.nodes lists every
// profile Node with its readiness and what its pods request. The test plays OCM's agent (and
// turns the stack's simulated hub lease controller away from one cluster), the kubelets and k3k
// (harness/simulate/); every Cell and VirtualCluster status is written by Metacontroller calling the
// hooks.
import { expect } from 'chai';
import type { KubeCellStack } from '../../../harness/cluster/kubecell-stack.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getKubeCell } from '../shared-cluster.js';
import {
  AVAILABLE_CONDITION,
  K3kSimulator,
  KubeClient,
  heartbeat,
  managedClusterPath,
  renewLease,
  runPod,
  type LeaseRenewer,
  type ManagedClusterObject,
} from '../../../harness/simulate/index.js';
import {
  applyCell,
  CELL,
  CELL_NAMESPACE,
  cellWorld,
  createHostNamespace,
  ensureProviderBaseline,
  getCell,
  GPU,
  GPU_CLASS_QUOTA,
  printedColumns,
  standUpCellWorld,
  startRenewing,
  VC,
  type CellWorld,
} from './cell-fixtures.js';
import { virtualClusterManifest, virtualNodeClassManifest } from '../../../harness/manifests.js';
import { poll } from '../../../harness/poll.js';
import {
  apply,
  conditionOf,
  describeStatus,
  eventuallyGone,
  eventuallyPhase,
  kubectl,
  uniqueName,
  watching,
  type ObjectWithStatus,
} from './support.js';

interface NodeEntry {
  name: string;
  profile?: string;
  ready?: boolean;
  labelHash?: string;
  capacity?: Record<string, string>;
  allocatable?: Record<string, string>;
  activeRequested?: Record<string, string>;
  pendingRequested?: Record<string, string>;
  readinessReasons?: string[];
}

interface CellStatusView {
  managedCluster?: { available?: boolean; leaseFresh?: boolean; leaseRenewTime?: string };
  nodeCount?: { total?: number; ready?: number; omitted?: number };
  nodes?: NodeEntry[];
  notReadyNodes?: { name: string; reasons?: string[] }[];
  inventory?: Record<string, { allocatable?: string; requested?: string }>;
}

const statusOf = (cell: ObjectWithStatus | undefined): CellStatusView =>
  (cell?.status ?? {}) as CellStatusView;
const nodeOf = (cell: ObjectWithStatus | undefined, name: string): NodeEntry | undefined =>
  statusOf(cell).nodes?.find((node) => node.name === name);

describe('e2e: Cell status through Metacontroller (Lease liveness, per-Node detail)', function () {
  this.timeout(240_000);
  let stack: KubeCellStack;
  let client: KubeClient;

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    stack = await getKubeCell();
    client = new KubeClient(stack.cluster.kubeconfigPath);
    await ensureProviderBaseline(client);
  });

  after(function () {
    client?.close();
  });

  /** Waits until the Cell satisfies `ok`; returns it. */
  function eventuallyCell(
    world: CellWorld,
    what: string,
    ok: (cell: ObjectWithStatus) => boolean,
    timeoutMs = 60_000,
  ): Promise<ObjectWithStatus> {
    return poll<ObjectWithStatus>(
      `${world.cell}: ${what}`,
      async () => {
        const cell = await getCell(stack, world.cell);
        return cell && ok(cell)
          ? { value: cell }
          : { notYet: `${describeStatus(cell)}; ${JSON.stringify(statusOf(cell).nodes ?? [])}` };
      },
      watching(stack, timeoutMs),
    );
  }

  /** `kubectl get cell -o jsonpath=<path>`, as a platform engineer asks. */
  const cellJsonpath = (world: CellWorld, path: string) =>
    kubectl(stack, ['get', 'cell', world.cell, '-n', CELL_NAMESPACE, '-o', `jsonpath=${path}`]);

  /** Deletes the Cell and the profile Nodes it stood on. */
  async function removeCellWorld(world: CellWorld): Promise<void> {
    const quietly = ['--ignore-not-found', '--wait=false'];
    await kubectl(stack, ['delete', 'cell', world.cell, '-n', CELL_NAMESPACE, ...quietly]);
    if (world.nodes.length > 0)
      await kubectl(stack, ['delete', 'nodes', ...world.nodes, ...quietly]);
  }

  describe('the Lease, not Available, decides liveness', function () {
    // A 2-s lease: stale 5 × 2 = 10 s after its last renewal.
    const LEASE_SECONDS = 2;
    const THRESHOLD_MS = 5 * LEASE_SECONDS * 1000;
    const world = cellWorld('e2e-cellst-lease');
    const hostNamespace = uniqueName('e2e-cellst-tenant');
    const className = uniqueName('e2e-cellst-class');
    const vcName = 'team-lease';
    const record = `kubecell-cell-${world.cell}`;
    let k3k: K3kSimulator | undefined;
    let renewer: LeaseRenewer | undefined;

    const recordLeaseFresh = () =>
      kubectl(stack, [
        'get',
        'configmap',
        record,
        '-n',
        CELL_NAMESPACE,
        '-o',
        'jsonpath={.data.leaseFresh}',
      ]);
    const eventuallyRecord = (value: string) =>
      poll(
        `${record} leaseFresh ${value}`,
        async () => {
          const seen = await recordLeaseFresh();
          return seen === value ? { value: seen } : { notYet: `leaseFresh ${seen}` };
        },
        watching(stack),
      );
    const vcCellLive = (vc: ObjectWithStatus) => conditionOf(vc, 'CellLive');

    before(async function () {
      this.timeout(300_000);
      if (!stack.ocmHub) throw new Error('the shared cluster runs no simulated OCM hub (ocmHub)');
      // The hub's registration controller is down for this cluster: nothing but the Cell judges
      // its lease, so Available stays True whatever happens to the lease.
      stack.ocmHub.ignored.add(world.managedCluster);
      k3k = new K3kSimulator(client, {
        filter: (cluster) => cluster.metadata.namespace === hostNamespace,
      });
      k3k.start();
      await standUpCellWorld(client, world, { join: { leaseDurationSeconds: LEASE_SECONDS } });
      renewer = startRenewing(client, world.managedCluster, LEASE_SECONDS, 1_000);
      await applyCell(stack, world);
      await eventuallyPhase(stack, CELL, world.cell, CELL_NAMESPACE, 'Ready', 90_000);
      await apply(stack, virtualNodeClassManifest(className, GPU_CLASS_QUOTA), 'e2e-platform');
      await createHostNamespace(stack, hostNamespace);
      await apply(
        stack,
        virtualClusterManifest(hostNamespace, vcName, { cell: world.cell, klass: className }),
        'e2e-tenant',
      );
      await eventuallyPhase(stack, VC, vcName, hostNamespace, 'Ready', 120_000);
      expect(await recordLeaseFresh()).to.equal('True');
    });

    after(async function () {
      this.timeout(180_000);
      await renewer?.stop();
      if (!stack) return;
      stack.ocmHub?.ignored.delete(world.managedCluster);
      const gone = ['-n', hostNamespace, '--ignore-not-found', '--wait=false'];
      await kubectl(stack, ['delete', VC, vcName, ...gone]);
      await eventuallyGone(stack, VC, vcName, hostNamespace, 90_000);
      await k3k?.stop();
      await removeCellWorld(world);
    });

    it('a Lease no longer renewed turns the Cell Degraded (LeaseStale) while Available stays True, and its VirtualCluster Degraded', async function () {
      await renewer?.stop();
      const lastRenewal = renewer?.renewedAt.get(world.managedCluster);
      if (!lastRenewal) throw new Error('the agent never renewed the lease');
      // No event is needed: the sync the Cell asked for (a minute after the last renewal's, at
      // this 2-s lease: LEASE_WATCH_MIN_SECONDS) finds the lease stale, or finds the renewal
      // overdue and asks for one at renewTime + 10 s.
      const degraded = await eventuallyPhase(
        stack,
        CELL,
        world.cell,
        CELL_NAMESPACE,
        'Degraded',
        Math.max(1_000, lastRenewal.getTime() + THRESHOLD_MS + 60_000 - Date.now()),
      );
      console.log(
        `      Cell ${world.cell}: Degraded seen ${Date.now() - lastRenewal.getTime()} ms after the last renewal (threshold ${THRESHOLD_MS} ms)`,
      );
      expect(conditionOf(degraded, 'LeaseFresh')).to.include({
        status: 'False',
        reason: 'LeaseStale',
      });
      expect(conditionOf(degraded, 'Ready')).to.include({ status: 'False', reason: 'LeaseStale' });
      expect(conditionOf(degraded, 'Available')).to.include({ status: 'True' });
      // The renewTime the verdict rests on: the agent's last renewal.
      expect(statusOf(degraded).managedCluster).to.include({
        available: true,
        leaseFresh: false,
        leaseRenewTime: lastRenewal.toISOString(),
      });
      expect(await printedColumns(stack, 'cell', world.cell, CELL_NAMESPACE, true)).to.include({
        PHASE: 'Degraded',
        LEASEFRESH: 'false',
      });
      // OCM itself still says the cluster is available: only the Lease tells.
      const managedCluster = await client.get<ManagedClusterObject>(
        managedClusterPath(world.managedCluster),
      );
      expect(
        managedCluster.status?.conditions?.find((c) => c.type === AVAILABLE_CONDITION),
      ).to.include({ status: 'True', reason: 'ManagedClusterAvailable' });
      expect(stack.ocmHub?.markedUnknown.has(world.managedCluster)).to.equal(false);

      await eventuallyRecord('False');
      const vc = await eventuallyPhase(stack, VC, vcName, hostNamespace, 'Degraded');
      expect(vcCellLive(vc)).to.include({ status: 'False', reason: 'LeaseStale' });
      console.log(
        `      VirtualCluster ${hostNamespace}/${vcName}: Degraded seen ${Date.now() - lastRenewal.getTime()} ms after the last renewal`,
      );
    });

    it('a renewed Lease makes the Cell and its VirtualCluster Ready again', async function () {
      const renewed = new Date();
      await renewLease(client, world.managedCluster, renewed, {
        leaseDurationSeconds: LEASE_SECONDS,
      });
      // The agent is back and keeps renewing: one renewal of a 2-s lease is stale again 10 s
      // later, sooner than a busy machine may take to bring the VirtualCluster back.
      renewer = startRenewing(client, world.managedCluster, LEASE_SECONDS, 1_000);
      const ready = await eventuallyPhase(stack, CELL, world.cell, CELL_NAMESPACE, 'Ready');
      console.log(
        `      Cell ${world.cell}: Ready ${Date.now() - renewed.getTime()} ms after the renewal`,
      );
      expect(conditionOf(ready, 'LeaseFresh')).to.include({
        status: 'True',
        reason: 'LeaseRenewed',
      });
      expect(statusOf(ready).managedCluster).to.include({ available: true, leaseFresh: true });
      await eventuallyRecord('True');
      const vc = await eventuallyPhase(stack, VC, vcName, hostNamespace, 'Ready');
      expect(vcCellLive(vc)).to.include({ status: 'True', reason: 'LeaseFresh' });
    });
  });

  describe('per-Node detail, as kubectl shows it', function () {
    const world = cellWorld('e2e-cellst-nodes');
    const podNamespace = uniqueName('e2e-cellst-pods');
    const podName = 'trainer';
    let renewer: LeaseRenewer | undefined;
    const sorted = () => [...world.nodes].sort();

    before(async function () {
      this.timeout(180_000);
      await standUpCellWorld(client, world);
      // OCM's cadence (60 s). A renewal rewrites leaseRenewTime, held pod requests with it:
      // renewing more often would hide the 60-s hold the pod scenario goes through.
      renewer = startRenewing(client, world.managedCluster, 60, 60_000);
      await applyCell(stack, world);
      await eventuallyPhase(stack, CELL, world.cell, CELL_NAMESPACE, 'Ready', 90_000);
      await kubectl(stack, ['create', 'namespace', podNamespace]);
    });

    after(async function () {
      this.timeout(120_000);
      await renewer?.stop();
      if (!stack) return;
      await kubectl(stack, [
        'delete',
        'pod',
        podName,
        '-n',
        podNamespace,
        '--ignore-not-found',
        '--grace-period=0',
        '--force',
      ]);
      await kubectl(stack, ['delete', 'namespace', podNamespace, '--wait=false']);
      await removeCellWorld(world);
    });

    it('lists both profile Nodes by name, sorted, with their figures', async function () {
      const names = await cellJsonpath(world, '{.status.nodes[*].name}');
      expect(names).to.equal(sorted().join(' '));
      const cell = await getCell(stack, world.cell);
      for (const name of sorted()) {
        const node = nodeOf(cell, name);
        expect(node, name).to.include({ profile: world.profile, ready: true });
        expect(node?.labelHash, name).to.match(/^[0-9a-f]{16}$/);
        expect(node?.capacity, name).to.include({ [GPU]: '8', cpu: '32' });
        expect(node?.allocatable, name).to.include({ [GPU]: '8', cpu: '32' });
        // Empty request maps and reason lists are left out: absent means none.
        expect(node, name).not.to.have.any.keys('activeRequested', 'readinessReasons');
      }
      expect(statusOf(cell).nodeCount).to.deep.equal({ total: 2, ready: 2, omitted: 0 });
    });

    it('shows a Node gone NotReady with its readiness reasons, counted out of the ready ones', async function () {
      const sick = sorted()[1] as string;
      // Its kubelet reports the container runtime's network is not ready.
      await heartbeat(client, sick, { ready: false });
      const cell = await eventuallyCell(
        world,
        `${sick} not ready`,
        (object) => nodeOf(object, sick)?.ready === false,
      );
      expect(nodeOf(cell, sick)?.readinessReasons).to.deep.equal(['KubeletNotReady']);
      expect(nodeOf(cell, sorted()[0] as string)).to.include({ ready: true });
      expect(statusOf(cell).nodeCount).to.deep.equal({ total: 2, ready: 1, omitted: 0 });
      expect(statusOf(cell).notReadyNodes).to.deep.equal([
        { name: sick, reasons: ['KubeletNotReady'] },
      ]);
      // The inventory counts the Ready Node alone.
      expect(statusOf(cell).inventory?.[GPU]).to.include({ allocatable: '8' });
      const notReady = await cellJsonpath(world, '{.status.nodes[?(@.ready==false)].name}');
      expect(notReady).to.equal(sick);
    });

    it("shows a Running pod in its Node's activeRequested and the inventory's requested", async function () {
      const busy = sorted()[0] as string;
      const requests = { cpu: '3', memory: '6Gi', [GPU]: '2' };
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: podName, namespace: podNamespace },
        spec: {
          nodeName: busy,
          containers: [
            {
              name: 'train',
              image: 'registry.example/cuda-train:12',
              resources: { requests, limits: { [GPU]: '2' } },
            },
          ],
        },
      };
      const created = Date.now();
      await kubectl(stack, ['create', '-f', '-'], JSON.stringify(pod));
      await runPod(client, podNamespace, podName);
      // Pod requests alone are written at most 60 s after the previous status write (or with a
      // renewal, whichever comes first).
      const cell = await eventuallyCell(
        world,
        `${podName} in ${busy}'s activeRequested`,
        (object) => nodeOf(object, busy)?.activeRequested?.[GPU] === '2',
        90_000,
      );
      console.log(
        `      Cell ${world.cell}: the Running pod seen in ${busy}'s activeRequested ${Date.now() - created} ms after it was created`,
      );
      expect(nodeOf(cell, busy)?.activeRequested).to.deep.equal(requests);
      expect(nodeOf(cell, busy)).not.to.have.property('pendingRequested');
      expect(nodeOf(cell, sorted()[1] as string)).not.to.have.property('activeRequested');
      expect(statusOf(cell).inventory?.[GPU]).to.include({ requested: '2' });
      expect(statusOf(cell).inventory?.['cpu']).to.include({ requested: '3' });
      expect(statusOf(cell).inventory?.['memory']).to.include({ requested: '6Gi' });
    });
  });
});
