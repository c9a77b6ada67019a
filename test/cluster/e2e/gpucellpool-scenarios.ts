// The GPUCellPool end-to-end scenarios, written once and run for each provisioner through the
// real Metacontroller: `describeGpuCellPool(provisioner)` is the whole suite of one provisioner
// (gpucellpool-kubevirt.test.ts, gpucellpool-cluster-api.test.ts). A platform engineer creates a
// pool and checks with kubectl what it did; the test plays only the provisioner and the cells'
// kubelets (harness/simulate), kubelets that register stale Nodes, and the tenants' pods. Everything
// the pool does is Metacontroller calling KubeCell's hooks.
//
// A scenario for both provisioners is one function added to SCENARIOS; what it needs to do
// differently per provisioner goes into `PoolProvisioner` (gpucellpool-world.ts).
import { expect } from 'chai';
import { isNotFound, registerNode } from '../../../harness/simulate/index.js';
import {
  METACONTROLLER_USER,
  auditedPodRequests,
  cellsOf,
  conditionsLine,
  consumerPod,
  controllerRefOf,
  endPod,
  eventuallyColumns,
  isRetiring,
  poolColumns,
  poolNodeLabels,
  type CellStatus,
} from './gpucellpool-support.js';
import { cellHealth } from './gpucellpool-health.js';
import { tenantsAreTold } from './gpucellpool-tenants.js';
import { PROFILE, usePoolWorld, type PoolProvisioner, type Scenario } from './gpucellpool-world.js';
import { apply, conditionOf, eventually, eventuallyGone, getObject, hookCalls } from './support.js';

/** Created before its prerequisites, the pool creates nothing and its conditions say why. */
export const withoutPrerequisites: Scenario = (world) => {
  const { missing, machine, column } = world.provisioner;
  it(`without its ${missing.what} the pool creates no ${machine.word} and says so: DESIRED 2, CURRENT 0, READY 0`, async function () {
    await world.applyPool(2);
    const labelled = await world.pool();
    expect(labelled.metadata.labels?.['kubecell.io/provisioner'], 'set by the webhook').to.equal(
      world.provisioner.type,
    );
    const { type, status, reason } = missing.waiting;
    const waiting = await eventually(
      world.stack,
      `${type}=${status} ${reason ?? ''}`,
      async () => {
        const object = await world.pool();
        return conditionOf(object, type)?.reason === reason
          ? { value: object }
          : { notYet: conditionsLine(object) };
      },
      120_000,
    );
    expect(conditionOf(waiting, type)).to.include({ status, reason });
    expect(conditionOf(waiting, type)?.message).to.contain(missing.message(world));
    expect(conditionOf(waiting, missing.other.type)).to.include(missing.other);
    // CURRENT counts machines that exist: none does.
    expect(await poolColumns(world.stack, world.poolName)).to.include({
      PROVISIONER: column,
      DESIRED: '2',
      CURRENT: '0',
      READY: '0',
    });
    expect(await world.machineNames()).to.deep.equal([]);
  });
};

/** The cells boot from their join data; the pool adopts the Nodes they register. */
export const cellsJoin: Scenario = (world) => {
  const { joined } = world.provisioner;
  it(`the cells join from their ${joined.from}; their Nodes are adopted: READY 2`, async function () {
    await eventuallyColumns(world.stack, world.poolName, { DESIRED: 2, CURRENT: 2, READY: 2 });
    const object = await world.pool();
    const uid = object.metadata.uid;
    expect(conditionOf(object, 'Ready')).to.include({ status: 'True', reason: 'AllCellsReady' });
    expect(conditionOf(object, 'BootstrapValid')).to.include({
      status: 'True',
      reason: joined.bootstrapValidReason,
    });
    const cells = cellsOf(object);
    // A cell's Node is named as its machine.
    expect(cells.map((c) => [c.name, c.vm, c.node, c.phase])).to.deep.equal(
      [0, 1].map((ordinal) => [
        world.cell(ordinal),
        world.machine(ordinal),
        world.machine(ordinal),
        'Ready',
      ]),
    );
    for (const c of cells) {
      // The Node the cell registered: the pool's labels, the machine's systemUUID, adopted.
      const node = await world.node(c.node ?? '');
      expect(node?.metadata.labels).to.include(poolNodeLabels(object, PROFILE));
      expect(node?.status?.['nodeInfo']).to.have.property('systemUUID', c.systemUUID);
      expect(controllerRefOf(node)).to.include({ kind: 'GPUCellPool', name: world.poolName, uid });
      expect(isRetiring(node)).to.equal(false);
      await joined.expectCell?.(world, c, node);
    }
    // The simulated kubelets took the Nodes' names and labels from the join data, not the pool.
    expect(joined.labelSources(world.simulation)).to.deep.equal(['join-data', 'join-data']);
  });
};

/** A second Node with a current cell's systemUUID (the machine registered again) is reaped. */
export const reapsNodeWithCurrentUuid: Scenario = (world) => {
  it(`reaps a Node that reports a current cell’s systemUUID but is not its ${world.provisioner.machine.word}’s`, async function () {
    const first = cellsOf(await world.pool())[0];
    const stale = `earlier-${world.cell(0)}`;
    await registerNode(world.simulation.client, {
      name: stale,
      labels: poolNodeLabels(await world.pool(), PROFILE),
      ...(first?.systemUUID ? { systemUUID: first.systemUUID } : {}),
    }).catch((error: unknown) => {
      // A Cluster API pool reaps a pool-labelled Node that no Machine names as soon as it is
      // created, sometimes before the kubelet's first status write: that write then finds no Node.
      if (!isNotFound(error)) throw error;
    });
    await eventuallyGone(world.stack, 'node', stale, undefined, 120_000);
    expect(await world.cellNamed(world.cell(0))).to.include({ node: first?.node, phase: 'Ready' });
    await eventuallyColumns(world.stack, world.poolName, { DESIRED: 2, CURRENT: 2, READY: 2 });
  });
};

/**
 * Scale-up to 3 while the new cell's machine is held and a Node registers early; once the
 * machine boots, its own Node is current and the early one is reaped.
 */
export const scaleUpReapsEarlyNode: Scenario = (world) => {
  const { earlyNode, machine: kind } = world.provisioner;
  it(earlyNode.title, async function () {
    const machine = world.machine(2);
    world.held.add(machine);
    await world.applyPool(3);
    await eventually(world.stack, `${kind.word} ${machine}`, async () => {
      const names = await world.machineNames();
      return names.includes(machine) ? { value: true } : { notYet: names.join() };
    });
    const early = `earlier-${world.cell(2)}`;
    await earlyNode.whileHeld(world, early, machine);
    world.held.delete(machine);
    const third = await eventually<CellStatus>(
      world.stack,
      `${world.cell(2)}'s own Node ${machine} current`,
      async () => {
        const c = await world.cellNamed(world.cell(2));
        return c?.node === machine && c.phase === 'Ready'
          ? { value: c }
          : { notYet: JSON.stringify(c ?? null) };
      },
    );
    expect(third.systemUUID).to.be.a('string');
    await eventuallyGone(world.stack, 'node', early, undefined, 120_000);
    await eventuallyColumns(world.stack, world.poolName, { DESIRED: 3, CURRENT: 3, READY: 3 });
    expect(controllerRefOf(await world.node(machine))).to.include({
      kind: 'GPUCellPool',
      name: world.poolName,
    });
  });
};

/** Scale-down from 3 to 2 while a tenant's pod holds every cell's GPU. */
export const scaleDownRetiresBusyCell: Scenario = (world) => {
  describe('scale-down retires a busy cell: cordoned and tainted, never evicted', function () {
    const { machine: kind, retired } = world.provisioner;
    const pods: Record<string, string> = {};
    const retiring = () => world.machine(2);
    const others = () => [world.cell(0), world.cell(1)];

    before(async function () {
      // A tenant pod holds the GPU of every cell, so the cell to retire is busy.
      for (const c of cellsOf(await world.pool())) {
        pods[c.name] = `train-${c.name}`;
        await apply(world.stack, consumerPod(world.tenants, `train-${c.name}`, c.node ?? ''));
      }
      // A Ready cell's `since` (when its GPU was last seen idle) is absent while a consumer pod
      // holds the GPU: the pool has seen every pod.
      await eventually(world.stack, 'every cell seen busy', async () => {
        const cells = cellsOf(await world.pool());
        return cells.length === 3 &&
          cells.every((c) => c.phase === 'Ready' && c.since === undefined)
          ? { value: cells }
          : { notYet: JSON.stringify(cells) };
      });
      await world.applyPool(2);
    });

    it(`the retiring cell’s Node is cordoned and tainted kubecell.io/retiring:NoSchedule; its ${kind.word} and the pod stay`, async function () {
      const node = await eventually(world.stack, `${world.cell(2)} Retiring`, async () => {
        const third = await world.cellNamed(world.cell(2));
        const current = await world.node(retiring());
        return third?.phase === 'Retiring' && isRetiring(current)
          ? { value: current }
          : {
              notYet: `${JSON.stringify(third ?? null)}; node spec ${JSON.stringify(current?.spec)}`,
            };
      });
      expect(node?.spec?.taints).to.deep.include({
        key: 'kubecell.io/retiring',
        effect: 'NoSchedule',
      });
      // A retiring cell is no longer counted Ready or desired, but its machine still exists.
      expect(await poolColumns(world.stack, world.poolName)).to.include({
        DESIRED: '2',
        CURRENT: '3',
        READY: '2',
      });
      const machine = await world.readMachine(retiring());
      expect(machine, `${kind.word} ${retiring()}`).to.not.equal(undefined);
      expect(machine?.metadata.deletionTimestamp).to.equal(undefined);
      if (machine) retired.expectKept?.(machine);
      const pod = await getObject(world.stack, 'pod', pods[world.cell(2)] ?? '', world.tenants);
      expect(pod?.metadata.deletionTimestamp, 'the pod is left alone').to.equal(undefined);
      for (const name of others()) {
        const node = await world.node((await world.cellNamed(name))?.node ?? '');
        expect(isRetiring(node), name).to.equal(false);
      }
    });

    it(`once its pod has ended, the cell’s ${retired.what} deleted, then its Node: CURRENT 2`, async function () {
      await endPod(world.stack, world.tenants, pods[world.cell(2)] ?? '');
      for (const [resource, name] of retired.objects(retiring())) {
        await eventuallyGone(world.stack, resource, name, world.namespace, 120_000);
      }
      await eventuallyGone(world.stack, 'node', retiring(), undefined, 120_000);
      await eventually(world.stack, `${world.cell(2)} gone from the status`, async () => {
        const names = cellsOf(await world.pool()).map((c) => c.name);
        return names.join() === others().join() ? { value: names } : { notYet: names.join() };
      });
      await eventuallyColumns(world.stack, world.poolName, { DESIRED: 2, CURRENT: 2, READY: 2 });
      // The other tenants' pods were never touched.
      for (const name of others()) {
        const pod = await getObject(world.stack, 'pod', pods[name] ?? '', world.tenants);
        expect(pod?.metadata.deletionTimestamp, `${pods[name] ?? ''}`).to.equal(undefined);
      }
    });

    it('nothing was evicted: the apiserver saw no eviction, and no pod deletion but the tenant’s', async function () {
      const { evictions, deletions } = auditedPodRequests(world.audited.auditLog);
      expect(evictions).to.deep.equal([]);
      expect(deletions.map((deletion) => deletion.pod)).to.deep.equal([
        `${world.tenants}/${pods[world.cell(2)] ?? ''}`,
      ]);
      expect(deletions.map((deletion) => deletion.user)).to.not.include(METACONTROLLER_USER);
      const canEvict = await world.stack.cluster.kubectl([
        'auth',
        'can-i',
        'create',
        'pods/eviction',
        `--as=${METACONTROLLER_USER}`,
        '-A',
      ]);
      expect(canEvict.stdout.trim(), 'Metacontroller may not evict').to.equal('no');
    });
  });
};

/** What holds once every scenario has run. */
export const afterwards: Scenario = (world) => {
  describe('afterwards', function () {
    world.provisioner.only.afterwards?.(world);

    it('every GPUCellPool hook call was answered 200', async function () {
      const calls = await hookCalls(world.stack);
      const failures = [...calls.failed.entries()].filter(([key]) =>
        key.startsWith('gpucellpool/'),
      );
      expect(failures).to.deep.equal([]);
      expect(calls.ok.get('gpucellpool/sync') ?? 0).to.be.greaterThan(0);
    });
  });
};

/**
 * The scenarios every provisioner runs, in this order: each leaves the pool as the next expects
 * it (no machine before createsMachines; 2 Ready cells after cellsJoin; 3 after
 * scaleUpReapsEarlyNode; 2 after the scale-down; 3 after the health scenarios and after the
 * tenants' scenario).
 */
export const SCENARIOS: readonly Scenario[] = [
  withoutPrerequisites,
  (world) => world.provisioner.only.createsMachines(world),
  cellsJoin,
  reapsNodeWithCurrentUuid,
  (world) => world.provisioner.only.withTwoCells?.(world),
  scaleUpReapsEarlyNode,
  scaleDownRetiresBusyCell,
  cellHealth,
  tenantsAreTold,
  afterwards,
];

/** The whole suite of one provisioner, on a stack of its own. */
export function describeGpuCellPool(provisioner: PoolProvisioner): void {
  describe(`e2e: GPUCellPool on ${provisioner.title} through Metacontroller`, function () {
    this.timeout(300_000);
    const world = usePoolWorld(provisioner);
    for (const scenario of SCENARIOS) scenario(world);
  });
}
