// The cell health scenarios of a GPUCellPool (issue 28, item 6), for either provisioner, through
// the real Metacontroller: the test plays a Node condition (the kubelet's Ready, NVIDIA
// NVSentinel's GPU conditions), a machine that runs but never boots, and a machine that fails for
// good; everything the pool does is Metacontroller calling the hooks (hooks/gpucellpool/health.ts,
// remediation.ts). They run after the scale-down scenario, with 2 Ready cells, and leave 3.
//
// The pool gets a short spec.health (Ready False for 5 s, SysLogsXIDError at once, a 5 s node
// startup timeout, maxUnhealthy 1) so that each wait is seconds, not minutes. Detection and
// replacement times are printed as `[measured]` lines. Then the join Secret is rotated (KubeVirt:
// running cells keep their user-data, a new cell renders the new content) and cells are replaced
// on request (kubecell.io/replace=true on their machine), never evicted.
import { expect } from 'chai';
import { poll, sleep } from '../../../harness/poll.js';
import { runPod } from '../../../harness/simulate/index.js';
import {
  METACONTROLLER_USER,
  auditedPodRequests,
  cellsOf,
  conditionsLine,
  consumerPod,
  endPod,
  isRetiring,
  type CellStatus,
} from './gpucellpool-support.js';
import type { PoolWorld, Scenario } from './gpucellpool-world.js';
import {
  apply,
  conditionOf,
  eventuallyGone,
  getObject,
  kubectl,
  listObjects,
  watching,
  type ObjectWithStatus,
} from './support.js';

/** How long the cell's Node must be NotReady before the cell is Unhealthy. */
const NOT_READY_SECONDS = 5;
const STARTUP_TIMEOUT_SECONDS = 5;

/** spec.health of the scenarios: short durations, so that the test is fast. */
export const HEALTH = {
  unhealthyConditions: [
    { type: 'Ready', status: 'False', durationSeconds: NOT_READY_SECONDS },
    { type: 'SysLogsXIDError', status: 'True', durationSeconds: 0 },
  ],
  nodeStartupTimeoutSeconds: STARTUP_TIMEOUT_SECONDS,
  maxUnhealthy: 1,
  remediation: 'Replace',
};

/** A cell as status.cells[] lists it, with its health. */
interface HealthOfCell extends CellStatus {
  health?: string;
  healthReason?: string;
  healthSince?: string;
}

const healthOf = (pool: ObjectWithStatus): HealthOfCell[] => cellsOf(pool) as HealthOfCell[];

/**
 * Sets a Node condition on the status subresource, as its publisher (the kubelet, NVSentinel)
 * does: a strategic merge keyed by type, `lastTransitionTime` given.
 */
export async function setNodeCondition(
  world: PoolWorld,
  node: string,
  condition: { type: string; status: string; at: Date; reason: string },
): Promise<void> {
  const time = condition.at.toISOString().replace(/\.\d+Z$/, 'Z');
  await kubectl(world.stack, [
    'patch',
    'node',
    node,
    '--subresource=status',
    '--type=strategic',
    '--field-manager=simulated-node-health',
    '-p',
    JSON.stringify({
      status: {
        conditions: [
          {
            type: condition.type,
            status: condition.status,
            reason: condition.reason,
            message: `set by the test: ${condition.reason}`,
            lastHeartbeatTime: time,
            lastTransitionTime: time,
          },
        ],
      },
    }),
  ]);
}

/** Waits until `probe` finds the pool as wanted; the pool's cells and conditions otherwise. */
function untilPool<T>(
  world: PoolWorld,
  what: string,
  probe: (pool: ObjectWithStatus) => T | undefined,
  timeoutMs = 120_000,
): Promise<T> {
  return poll(
    what,
    async () => {
      const pool = await world.pool();
      const found = probe(pool);
      return found !== undefined
        ? { value: found }
        : { notYet: `cells ${JSON.stringify(healthOf(pool))}; ${conditionsLine(pool)}` };
    },
    watching(world.stack, timeoutMs),
  );
}

/** `<cell> (<machine> → <node>)`, for the measured lines. */
const describeCell = (cell: CellStatus | undefined) =>
  `${cell?.name ?? '?'} (${cell?.vm ?? '?'} → ${cell?.node ?? 'no Node'})`;

const seconds = (from: number, to: number) => ((to - from) / 1000).toFixed(1);

/** `[measured]` line: what was measured on which provisioner. */
function measured(world: PoolWorld, what: string): void {
  console.log(`[measured] ${world.provisioner.title}: ${what}`);
}

/** Every current cell Ready and Healthy, `count` of them, CellsHealthy True. */
function untilAllHealthy(world: PoolWorld, count: number): Promise<HealthOfCell[]> {
  return untilPool(world, `${count} cells Ready and Healthy, CellsHealthy True`, (pool) => {
    const cells = healthOf(pool);
    return cells.length === count &&
      cells.every((c) => c.phase === 'Ready' && c.health === 'Healthy') &&
      conditionOf(pool, 'CellsHealthy')?.status === 'True'
      ? cells
      : undefined;
  });
}

/**
 * Adds a finalizer to a machine, as KubeVirt's and Cluster API's controllers hold theirs: once the
 * pool deletes it, it stays (deletionTimestamp set) until `releaseMachine`, so the test sees the
 * status of the cell being remediated.
 */
const FINALIZER = 'e2e.kubecell.io/provisioner';
export async function holdFinalizer(world: PoolWorld, machine: string): Promise<void> {
  await setFinalizers(world, machine, [FINALIZER]);
}
export async function releaseMachine(world: PoolWorld, machine: string): Promise<void> {
  await setFinalizers(world, machine, null);
}
async function setFinalizers(
  world: PoolWorld,
  machine: string,
  finalizers: string[] | null,
): Promise<void> {
  await kubectl(world.stack, [
    'patch',
    world.provisioner.machine.resource,
    machine,
    '-n',
    world.namespace,
    '--type=merge',
    '-p',
    JSON.stringify({ metadata: { finalizers } }),
  ]);
}

/** The machine was deleted by the pool (a finalizer holds it): deletionTimestamp set. */
function untilDeleting(world: PoolWorld, machine: string): Promise<ObjectWithStatus> {
  return poll(
    `${world.provisioner.machine.word} ${machine} deleted by the pool`,
    async () => {
      const object = await world.readMachine(machine);
      return object?.metadata.deletionTimestamp
        ? { value: object }
        : { notYet: object ? 'no deletionTimestamp' : 'absent' };
    },
    watching(world.stack, 120_000),
  );
}

/** A Ready cell added since `before` (cell names), as a replacement. */
function untilReplacement(world: PoolWorld, before: readonly string[]): Promise<HealthOfCell> {
  return untilPool(world, 'a replacement cell Ready', (pool) =>
    healthOf(pool).find(
      (c) => !before.includes(c.name) && c.phase === 'Ready' && c.health === 'Healthy',
    ),
  );
}

/**
 * A cell whose machine the pool is deleting: Remediating for `reason` (in its entry and in
 * CellsHealthy's message), its Node cordoned and tainted; once its machine is released, the
 * replacement added since `before`.
 */
async function remediatedAndReplaced(
  world: PoolWorld,
  cell: { name: string; machine: string; node: string },
  reason: string,
  before: readonly HealthOfCell[],
): Promise<HealthOfCell> {
  const pool = await world.pool();
  expect(healthOf(pool).find((c) => c.name === cell.name)).to.include({
    health: 'Remediating',
    healthReason: reason,
  });
  expect(conditionOf(pool, 'CellsHealthy')?.message).to.contain(
    `${cell.name} Remediating (${reason})`,
  );
  expect(isRetiring(await world.node(cell.node))).to.equal(true);
  await releaseMachine(world, cell.machine);
  return untilReplacement(
    world,
    before.map((c) => c.name),
  );
}

/**
 * Merges `health` into the pool's spec.health, as a platform engineer does: with another field
 * manager than the pool's author, so that scaling the pool later keeps spec.health.
 */
export async function patchHealth(
  world: PoolWorld,
  health: Record<string, unknown>,
): Promise<void> {
  await kubectl(world.stack, [
    'patch',
    'gpucellpool',
    world.poolName,
    '--type=merge',
    '--field-manager=e2e-platform',
    '-p',
    JSON.stringify({ spec: { health } }),
  ]);
}

/** spec.health as the platform engineer sets it; a Node condition cleared before its duration. */
export const healthRecovers: Scenario = (world) => {
  it(`with spec.health set, a Node NotReady for less than ${NOT_READY_SECONDS}s leaves its cell Healthy: CellsHealthy True`, async function () {
    await patchHealth(world, HEALTH);
    await untilPool(world, 'RemediationAllowed with maxUnhealthy 1', (pool) =>
      conditionOf(pool, 'RemediationAllowed')?.message?.includes('maxUnhealthy 1') &&
      conditionOf(pool, 'CellsHealthy')?.status === 'True'
        ? pool
        : undefined,
    );
    const [cell] = healthOf(await world.pool());
    const node = cell?.node ?? '';
    const machines = await world.machineNames();
    await setNodeCondition(world, node, {
      type: 'Ready',
      status: 'False',
      at: new Date(),
      reason: 'KubeletNotReady',
    });
    await sleep(2000);
    await setNodeCondition(world, node, {
      type: 'Ready',
      status: 'True',
      at: new Date(),
      reason: 'KubeletReady',
    });
    // Past the duration and a resync: nothing happened.
    await sleep((NOT_READY_SECONDS + 3) * 1000);
    const pool = await world.pool();
    const after = healthOf(pool).find((c) => c.name === cell?.name);
    expect(after).to.include({ health: 'Healthy', healthReason: 'NodeHealthy', phase: 'Ready' });
    expect(conditionOf(pool, 'CellsHealthy')).to.include({
      status: 'True',
      reason: 'AllCellsHealthy',
    });
    expect(isRetiring(await world.node(node))).to.equal(false);
    expect(await world.machineNames()).to.deep.equal(machines);
  });
};

/**
 * Sets a Node condition as of now on `cell`'s Node and waits until the cell is no longer Healthy:
 * when it was set, when that was seen, and the cell then.
 */
async function untilConditionFound(
  world: PoolWorld,
  cell: { name: string; node: string },
  condition: { type: string; status: string; reason: string },
): Promise<{ set: number; detected: number; found: HealthOfCell }> {
  const set = Date.now();
  await setNodeCondition(world, cell.node, { ...condition, at: new Date(set) });
  const found = await untilPool(world, `${cell.name} Unhealthy`, (pool) =>
    healthOf(pool).find((c) => c.name === cell.name && c.health !== 'Healthy'),
  );
  return { set, detected: Date.now(), found };
}

/** The audit log saw no eviction, and the tenants' `ended()` pods were deleted by them only. */
function nothingEvicted(world: PoolWorld, ended: () => readonly string[]): void {
  it('nothing was evicted: no eviction, and no pod deletion by Metacontroller', function () {
    const { evictions, deletions } = auditedPodRequests(world.audited.auditLog);
    expect(evictions).to.deep.equal([]);
    expect(deletions.map((deletion) => deletion.user)).to.not.include(METACONTROLLER_USER);
    expect(deletions.map((deletion) => deletion.pod)).to.include.members(
      ended().map((pod) => `${world.tenants}/${pod}`),
    );
  });
}

/** A cell's Node NotReady past its duration, while a tenant's pod holds its GPU. */
export const unhealthyNodeReplaced: Scenario = (world) => {
  describe('a Node NotReady past its duration: the cell is retired and replaced, nothing evicted', function () {
    const { machine: kind } = world.provisioner;
    let cell: HealthOfCell | undefined;
    let earlier: string[] = [];
    /** The tenants' pods on the cell's Node: the scale-down scenario's and one more. */
    let pods: string[] = [];

    before(async function () {
      const cells = healthOf(await world.pool());
      cell = cells[0];
      earlier = cells.map((c) => c.name);
      const node = cell?.node ?? '';
      await apply(world.stack, consumerPod(world.tenants, `infer-${cell?.name ?? ''}`, node));
      pods = (await listObjects(world.stack, 'pod', { namespace: world.tenants }))
        .filter((pod) => (pod.spec as { nodeName?: string } | undefined)?.nodeName === node)
        .map((pod) => pod.metadata.name);
      // Their kubelet started them.
      for (const pod of pods) await runPod(world.simulation.client, world.tenants, pod);
      await untilPool(world, `${cell?.name ?? ''} seen busy`, (pool) =>
        healthOf(pool).find((c) => c.name === cell?.name && c.since === undefined),
      );
    });

    it(`found Unhealthy (UnhealthyNode) within ${NOT_READY_SECONDS}s and a resync, Remediating; its Node cordoned and tainted; a replacement joins; the pods keep running`, async function () {
      const node = cell?.node ?? '';
      const name = cell?.name ?? '';
      const { set, detected, found } = await untilConditionFound(
        world,
        { name, node },
        { type: 'Ready', status: 'False', reason: 'KubeletNotReady' },
      );
      expect(found.healthReason).to.equal('UnhealthyNode');
      expect(detected - set, 'within the duration and one resync').to.be.at.most(
        (NOT_READY_SECONDS + 5) * 1000,
      );
      const pool = await untilPool(world, `${name} Remediating, its Node retiring`, (object) =>
        healthOf(object).some((c) => c.name === name && c.health === 'Remediating')
          ? object
          : undefined,
      );
      const remediating = healthOf(pool).find((c) => c.name === name);
      expect(remediating).to.include({ phase: 'Retiring', healthReason: 'UnhealthyNode' });
      expect(conditionOf(pool, 'CellsHealthy')).to.include({
        status: 'False',
        reason: 'CellsUnhealthy',
      });
      expect(conditionOf(pool, 'CellsHealthy')?.message).to.contain(`${name} Remediating`);
      await poll(
        `Node ${node} cordoned and tainted`,
        async () =>
          isRetiring(await world.node(node)) ? { value: true } : { notYet: 'not retiring' },
        watching(world.stack, 60_000),
      );
      const replacement = await untilReplacement(world, earlier);
      const replaced = Date.now();
      measured(
        world,
        `Node condition Ready=False (duration ${NOT_READY_SECONDS}s) → cell Unhealthy ` +
          `${seconds(set, detected)}s; → replacement Node Ready ${seconds(set, replaced)}s ` +
          `(${describeCell(replacement)} replaces ${describeCell(cell)})`,
      );
      // The unhealthy machine and the tenant's pod stay while the pod holds the GPU.
      const machine = await world.readMachine(cell?.vm ?? '');
      expect(machine, `${kind.word} ${cell?.vm ?? ''}`).to.not.equal(undefined);
      expect(machine?.metadata.deletionTimestamp).to.equal(undefined);
      for (const pod of pods) {
        const running = await getObject(world.stack, 'pod', pod, world.tenants);
        expect(running?.metadata.deletionTimestamp, `${pod} is left alone`).to.equal(undefined);
        expect(running?.status?.phase, pod).to.equal('Running');
      }
    });

    it(`once the pods have ended by themselves, the unhealthy ${kind.word} is deleted: CellsHealthy True`, async function () {
      for (const pod of pods) await endPod(world.stack, world.tenants, pod);
      await eventuallyGone(world.stack, kind.resource, cell?.vm ?? '', world.namespace, 120_000);
      await eventuallyGone(world.stack, 'node', cell?.node ?? '', undefined, 120_000);
      await untilAllHealthy(world, 2);
    });

    nothingEvicted(world, () => pods);
  });
};

/** Two cells unhealthy at once with maxUnhealthy 1; then their conditions clear. */
export const maxUnhealthyShortCircuits: Scenario = (world) => {
  describe('maxUnhealthy 1 and two cells unhealthy: nothing is remediated until one recovers', function () {
    it('RemediationAllowed False (TooManyUnhealthy); both cells Unhealthy, none retired or replaced', async function () {
      const cells = healthOf(await world.pool());
      const nodes = cells.map((c) => c.node ?? '');
      const machines = await world.machineNames();
      // One instant for both, so both fall due in the same sync.
      const at = new Date();
      for (const node of nodes) {
        await setNodeCondition(world, node, {
          type: 'Ready',
          status: 'False',
          at,
          reason: 'KubeletNotReady',
        });
      }
      const pool = await untilPool(world, 'RemediationAllowed False', (object) =>
        conditionOf(object, 'RemediationAllowed')?.status === 'False' ? object : undefined,
      );
      expect(conditionOf(pool, 'RemediationAllowed')).to.include({ reason: 'TooManyUnhealthy' });
      expect(conditionOf(pool, 'RemediationAllowed')?.message).to.contain('2 of 2 cells unhealthy');
      expect(conditionOf(pool, 'CellsHealthy')).to.include({ status: 'False' });
      // A few syncs later, still nothing retired.
      await sleep(3000);
      const later = healthOf(await world.pool());
      expect(later.map((c) => [c.name, c.health, c.healthReason])).to.deep.equal(
        cells.map((c) => [c.name, 'Unhealthy', 'UnhealthyNode']),
      );
      for (const node of nodes) expect(isRetiring(await world.node(node)), node).to.equal(false);
      expect(await world.machineNames()).to.deep.equal(machines);
    });

    it('one cell recovers: the other, now within maxUnhealthy, is retired and replaced; every cell Healthy, RemediationAllowed True', async function () {
      const [recovered, other] = healthOf(await world.pool());
      // Its kubelet posts Ready again; the other cell's Node stays NotReady.
      await setNodeCondition(world, recovered?.node ?? '', {
        type: 'Ready',
        status: 'True',
        at: new Date(),
        reason: 'KubeletReady',
      });
      // 1 of 2 unhealthy is within maxUnhealthy 1: the other is remediated (no pod holds its GPU,
      // so its machine goes once its Node is cordoned).
      await eventuallyGone(
        world.stack,
        world.provisioner.machine.resource,
        other?.vm ?? '',
        world.namespace,
        120_000,
      );
      await untilReplacement(world, [recovered?.name ?? '', other?.name ?? '']);
      const cells = await untilAllHealthy(world, 2);
      expect(cells.find((c) => c.name === recovered?.name)).to.include({
        vm: recovered?.vm,
        healthReason: 'NodeHealthy',
      });
      const pool = await world.pool();
      expect(conditionOf(pool, 'RemediationAllowed')).to.include({
        status: 'True',
        reason: 'RemediationAllowed',
      });
    });
  });
};

/** Scaled to 3, the new cell's machine runs but no Node ever joins (the boot hang). */
export const nodeStartupTimeout: Scenario = (world) => {
  it(`a ${world.provisioner.machine.word} that runs and never boots: NodeStartupTimeout after ${STARTUP_TIMEOUT_SECONDS}s, deleted at once and replaced`, async function () {
    const cells = healthOf(await world.pool());
    const existing = await world.machineNames();
    // Whatever machine the pool creates next is held: the simulator never brings it up.
    for (let ordinal = 0; ordinal < 4; ordinal++) {
      for (let incarnation = 0; incarnation < 4; incarnation++) {
        const name = world.machine(ordinal, incarnation);
        if (!existing.includes(name)) world.held.add(name);
      }
    }
    await world.applyPool(3);
    const stuck = await poll(
      `a new ${world.provisioner.machine.word}`,
      async () => {
        const added = (await world.machineNames()).filter((name) => !existing.includes(name));
        return added[0] ? { value: added[0] } : { notYet: 'none yet' };
      },
      watching(world.stack, 60_000),
    );
    await holdFinalizer(world, stuck);
    const running = Date.now();
    await world.provisioner.health.runsWithoutNode(world, stuck);
    await untilDeleting(world, stuck);
    const pool = await world.pool();
    const deleted = Date.now();
    const timedOut = healthOf(pool).find((c) => c.vm === stuck);
    expect(timedOut).to.include({ health: 'Remediating', healthReason: 'NodeStartupTimeout' });
    expect(deleted - running, 'the timeout and a resync').to.be.at.least(
      (STARTUP_TIMEOUT_SECONDS - 1) * 1000,
    );
    // The replacement (held too, until now) joins.
    world.held.clear();
    await releaseMachine(world, stuck);
    await eventuallyGone(world.stack, world.provisioner.machine.resource, stuck, world.namespace);
    const replacement = await untilReplacement(world, [
      ...cells.map((c) => c.name),
      timedOut?.name ?? '',
    ]);
    measured(
      world,
      `${world.provisioner.machine.word} running without a Node (nodeStartupTimeoutSeconds ` +
        `${STARTUP_TIMEOUT_SECONDS}) → NodeStartupTimeout, deleted ${seconds(running, deleted)}s; ` +
        `→ replacement Node Ready ${seconds(running, Date.now())}s (${describeCell(replacement)} replaces ${describeCell(timedOut)})`,
    );
    await untilAllHealthy(world, 3);
  });
};

/** A joined cell's machine fails for good. */
export const machineFailed: Scenario = (world) => {
  const { failed } = world.provisioner.health;
  it(`${failed.title}: MachineFailed, retired and replaced`, async function () {
    const cells = healthOf(await world.pool());
    const cell = cells[cells.length - 1];
    const machine = cell?.vm ?? '';
    await holdFinalizer(world, machine);
    const set = Date.now();
    await failed.fail(world, machine);
    await untilDeleting(world, machine);
    const detected = Date.now();
    const replacement = await remediatedAndReplaced(
      world,
      { name: cell?.name ?? '', machine, node: cell?.node ?? '' },
      'MachineFailed',
      cells,
    );
    measured(
      world,
      `${failed.title} → deleted ${seconds(set, detected)}s; → replacement Node Ready ` +
        `${seconds(set, Date.now())}s (${describeCell(replacement)} replaces ${describeCell(cell)})`,
    );
    await eventuallyGone(world.stack, 'node', cell?.node ?? '', undefined, 120_000);
    await untilAllHealthy(world, 3);
  });
};

/**
 * The cell whose machine is the newest: one a health scenario created, so that the machines an
 * earlier scenario handed to Cluster API stay for the checks made afterwards.
 */
async function newestCell<T extends CellStatus>(world: PoolWorld, cells: readonly T[]): Promise<T> {
  const created = async (cell: T) => {
    const machine = await world.readMachine(cell.vm ?? '');
    return (
      (machine?.metadata as { creationTimestamp?: string } | undefined)?.creationTimestamp ?? ''
    );
  };
  const stamped = await Promise.all(cells.map(async (cell) => ({ cell, at: await created(cell) })));
  const newest = stamped.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))[0];
  if (newest === undefined) throw new Error('no cell');
  return newest.cell;
}

/** A GPU condition with duration 0 (NVIDIA NVSentinel's SysLogsXIDError): found at once. */
export const gpuConditionAtOnce: Scenario = (world) => {
  it('a GPU condition with duration 0 (SysLogsXIDError=True): Unhealthy within one resync, retired and replaced, nothing evicted', async function () {
    const cells = healthOf(await world.pool());
    const cell = await newestCell(world, cells);
    const name = cell.name;
    const machine = cell.vm ?? '';
    const node = cell.node ?? '';
    await holdFinalizer(world, machine);
    const { set, detected, found } = await untilConditionFound(
      world,
      { name, node },
      { type: 'SysLogsXIDError', status: 'True', reason: 'XIDError' },
    );
    expect(found.healthReason).to.equal('UnhealthyNode');
    expect(detected - set, 'one resync: the Node change wakes the pool').to.be.at.most(5000);
    await untilDeleting(world, machine);
    const deleted = Date.now();
    const replacement = await remediatedAndReplaced(
      world,
      { name, machine, node },
      'UnhealthyNode',
      cells,
    );
    measured(
      world,
      `Node condition SysLogsXIDError=True (duration 0) → cell Unhealthy ` +
        `${seconds(set, detected)}s; → machine deleted ${seconds(set, deleted)}s; → replacement ` +
        `Node Ready ${seconds(set, Date.now())}s (${describeCell(replacement)} replaces ${describeCell(cell)})`,
    );
    await eventuallyGone(world.stack, 'node', node, undefined, 120_000);
    await untilAllHealthy(world, 3);
    const { evictions, deletions } = auditedPodRequests(world.audited.auditLog);
    expect(evictions).to.deep.equal([]);
    expect(deletions.map((deletion) => deletion.user)).to.not.include(METACONTROLLER_USER);
  });
};

/** The join Secret's new token, a content the cells did not boot from. */
const ROTATED_TOKEN = 'ghijkl.0123456789ghijkl';
const REPLACE = 'kubecell.io/replace';

interface JoinCell extends HealthOfCell {
  joinContentHash?: string;
}
const joinCells = (pool: ObjectWithStatus): JoinCell[] => healthOf(pool) as JoinCell[];
const currentJoinContent = (pool: ObjectWithStatus): string | undefined =>
  (pool.status as { joinContentHash?: string } | undefined)?.joinContentHash;

/** A cell's rendered user-data Secret (KubeVirt: `<vm>-user-data`). */
const userDataSecret = (world: PoolWorld, vm: string | undefined) =>
  getObject(world.stack, 'secret', `${vm ?? ''}-user-data`, world.namespace);

/**
 * The join Secret rotated (a new bootstrap token): running cells keep the user-data they booted
 * with, and say so; a new cell renders the new content. A pool whose Cluster API bootstrap
 * provider supplies the join data has no join Secret: no hash, no JoinContentCurrent.
 */
export const joinSecretRotated: Scenario = (world) => {
  if (world.provisioner.type !== 'kubevirt') {
    it('with a Cluster API bootstrap provider there is no join Secret: no joinContentHash, no JoinContentCurrent', async function () {
      const pool = await world.pool();
      expect(currentJoinContent(pool)).to.equal(undefined);
      expect(conditionOf(pool, 'JoinContentCurrent')).to.equal(undefined);
      for (const c of joinCells(pool)) expect(c, c.name).to.not.have.property('joinContentHash');
    });
    return;
  }
  let before: JoinCell[] = [];
  let rotated = '';

  it('running cells keep their user-data and its hash, their Nodes keep running; JoinContentCurrent False names them, Ready stays True', async function () {
    const pool = await untilPool(world, 'JoinContentCurrent True', (object) =>
      conditionOf(object, 'JoinContentCurrent')?.status === 'True' ? object : undefined,
    );
    const old = currentJoinContent(pool) ?? '';
    expect(old).to.match(/^[0-9a-f]{16}$/);
    before = joinCells(pool);
    const secrets = new Map<string, string>();
    for (const c of before) {
      expect(c.joinContentHash, c.name).to.equal(old);
      secrets.set(c.name, JSON.stringify((await userDataSecret(world, c.vm))?.data));
    }
    await kubectl(world.stack, [
      'patch',
      'secret',
      'cell-join',
      '-n',
      world.namespace,
      '--type=merge',
      '-p',
      JSON.stringify({ stringData: { token: ROTATED_TOKEN } }),
    ]);
    const set = Date.now();
    const after = await untilPool(
      world,
      'a new joinContentHash, JoinContentCurrent False',
      (object) =>
        currentJoinContent(object) !== old &&
        conditionOf(object, 'JoinContentCurrent')?.status === 'False'
          ? object
          : undefined,
    );
    measured(world, `join Secret rotated → JoinContentCurrent False ${seconds(set, Date.now())}s`);
    rotated = currentJoinContent(after) ?? '';
    const condition = conditionOf(after, 'JoinContentCurrent');
    expect(condition).to.include({ reason: 'CellsOnOlderJoinContent' });
    for (const c of before) {
      expect(condition?.message).to.contain(`${c.name} (${c.vm ?? ''}, ${old})`);
    }
    expect(condition?.message).to.contain(`${REPLACE}=true`);
    expect(condition?.message).to.not.contain(ROTATED_TOKEN);
    expect(conditionOf(after, 'Ready')).to.include({ status: 'True' });
    // A few syncs later: the same Secrets, the same Nodes, the old hash.
    await sleep(2000);
    const later = joinCells(await world.pool());
    for (const c of before) {
      const now = later.find((cell) => cell.name === c.name);
      expect(now, c.name).to.include({
        vm: c.vm,
        node: c.node,
        phase: 'Ready',
        joinContentHash: old,
      });
      expect(JSON.stringify((await userDataSecret(world, c.vm))?.data), c.name).to.equal(
        secrets.get(c.name),
      );
      expect(isRetiring(await world.node(c.node ?? '')), c.name).to.equal(false);
    }
  });

  it('a new cell (scale-up to 4) renders the new content and shows the new hash', async function () {
    await world.applyPool(4);
    const added = await untilPool(world, 'a fourth cell Ready', (pool) =>
      joinCells(pool).find((c) => !before.some((b) => b.name === c.name) && c.phase === 'Ready'),
    );
    expect(added.joinContentHash).to.equal(rotated);
    const secret = await userDataSecret(world, added.vm);
    expect(secret?.metadata.annotations).to.include({ 'kubecell.io/join-content-hash': rotated });
    const userData = Buffer.from(secret?.data?.['userdata'] ?? '', 'base64').toString('utf8');
    expect(userData).to.contain(`token: "${ROTATED_TOKEN}"`);
    const pool = await world.pool();
    expect(conditionOf(pool, 'JoinContentCurrent')?.message).to.match(/^3 of 4 cells /);
  });
};

/**
 * kubecell.io/replace=true on machines (KubeVirt: every cell on an older join content; Cluster
 * API: one cell), the first one busy: each is retired and replaced in turn (maxUnhealthy 1),
 * never evicted. The pool ends with 3 cells.
 */
export const replacementRequested: Scenario = (world) => {
  describe('kubecell.io/replace=true on machines: replaced in turn, never evicted', function () {
    const { machine: kind } = world.provisioner;
    let targets: JoinCell[] = [];
    let earlier: string[] = [];
    let pod = '';
    /** The tenants' pods on the first target's Node: an earlier scenario's and `pod`. */
    let pods: string[] = [];
    /** The tenants' pods on the other targets' Nodes (an earlier scenario's). */
    let others: string[] = [];
    /** The uid of each target's machine: a replacement may reuse a freed machine name. */
    const uids = new Map<string, string>();

    before(async function () {
      const pool = await world.pool();
      const cells = joinCells(pool);
      const current = currentJoinContent(pool);
      earlier = cells.map((c) => c.name);
      targets =
        current === undefined
          ? [await newestCell(world, cells)]
          : cells.filter((c) => c.joinContentHash !== current);
      const first = targets[0];
      pod = `serve-${first?.name ?? ''}`;
      await apply(world.stack, consumerPod(world.tenants, pod, first?.node ?? ''));
      const tenantPods = await listObjects(world.stack, 'pod', { namespace: world.tenants });
      const on = (node: string | undefined) =>
        tenantPods
          .filter((p) => (p.spec as { nodeName?: string } | undefined)?.nodeName === node)
          .map((p) => p.metadata.name);
      pods = on(first?.node);
      others = targets.slice(1).flatMap((target) => on(target.node));
      for (const target of targets) {
        uids.set(target.vm ?? '', (await world.readMachine(target.vm ?? ''))?.metadata.uid ?? '');
      }
      for (const name of pods) await runPod(world.simulation.client, world.tenants, name);
      await untilPool(world, `${first?.name ?? ''} seen busy`, (object) =>
        healthOf(object).find((c) => c.name === first?.name && c.since === undefined),
      );
    });

    it(`the first annotated cell is Remediating (ReplacementRequested), its Node cordoned, its pods running; the others wait their turn; a replacement joins`, async function () {
      const first = targets[0];
      const set = Date.now();
      for (const target of targets) {
        await kubectl(world.stack, [
          'annotate',
          kind.resource,
          target.vm ?? '',
          '-n',
          world.namespace,
          `${REPLACE}=true`,
        ]);
      }
      const pool = await untilPool(
        world,
        `${first?.name ?? ''} Remediating, the others waiting`,
        (object) => {
          const cells = joinCells(object);
          const remediating = cells.find(
            (c) => c.name === first?.name && c.health === 'Remediating',
          );
          const waiting = targets
            .slice(1)
            .every((t) =>
              cells.some(
                (c) =>
                  c.name === t.name &&
                  c.health === 'Unhealthy' &&
                  c.healthReason === 'ReplacementRequested',
              ),
            );
          return remediating && waiting ? object : undefined;
        },
      );
      const detected = Date.now();
      expect(joinCells(pool).find((c) => c.name === first?.name)).to.include({
        phase: 'Retiring',
        healthReason: 'ReplacementRequested',
      });
      expect(conditionOf(pool, 'RemediationAllowed')).to.include({
        status: 'True',
        reason: 'RemediationAllowed',
      });
      await poll(
        `Node ${first?.node ?? ''} cordoned and tainted`,
        async () =>
          isRetiring(await world.node(first?.node ?? ''))
            ? { value: true }
            : { notYet: 'not retiring' },
        watching(world.stack, 60_000),
      );
      const replacement = await untilReplacement(world, earlier);
      measured(
        world,
        `${REPLACE}=true → cell Remediating ${seconds(set, detected)}s; → replacement Node Ready ` +
          `${seconds(set, Date.now())}s (${describeCell(replacement)} replaces ${describeCell(first)})`,
      );
      // The busy machine stays, with the user's annotation (Metacontroller's apply keeps it).
      const machine = await world.readMachine(first?.vm ?? '');
      expect(machine?.metadata.deletionTimestamp).to.equal(undefined);
      expect(machine?.metadata.annotations).to.include({ [REPLACE]: 'true' });
      for (const name of pods) {
        const running = await getObject(world.stack, 'pod', name, world.tenants);
        expect(running?.metadata.deletionTimestamp, `${name} is left alone`).to.equal(undefined);
        expect(running?.status?.phase, name).to.equal('Running');
      }
    });

    it(`once the pods have ended, the annotated ${kind.word}s go one after another; every cell Healthy (and, with a join Secret, JoinContentCurrent True); back to 3 cells`, async function () {
      const set = Date.now();
      for (const name of [...pods, ...others]) await endPod(world.stack, world.tenants, name);
      for (const target of targets) {
        const vm = target.vm ?? '';
        await poll(
          `${kind.word} ${vm} deleted (uid ${uids.get(vm) ?? ''})`,
          async () => {
            const machine = await world.readMachine(vm);
            return machine?.metadata.uid === uids.get(vm)
              ? { notYet: 'still there' }
              : { value: true };
          },
          watching(world.stack, 180_000),
        );
      }
      // Every cell Healthy; a replacement at a freed position reuses its machine and Node name
      // (docs/autoscaling.md, Known gaps), which the simulated kubelet may leave NotReady: the
      // scale-down to 3 below retires a NotReady cell first.
      await untilPool(world, `${earlier.length} cells Healthy, CellsHealthy True`, (object) => {
        const cells = healthOf(object);
        return cells.length === earlier.length &&
          cells.every((c) => c.health === 'Healthy') &&
          conditionOf(object, 'CellsHealthy')?.status === 'True'
          ? cells
          : undefined;
      });
      measured(
        world,
        `pods ended → ${targets.length} requested ${kind.word}(s) replaced, every cell Healthy ` +
          `${seconds(set, Date.now())}s`,
      );
      const current = currentJoinContent(await world.pool());
      if (current !== undefined) {
        const settled = await untilPool(world, 'JoinContentCurrent True', (object) =>
          conditionOf(object, 'JoinContentCurrent')?.status === 'True' ? object : undefined,
        );
        for (const c of joinCells(settled)) expect(c.joinContentHash, c.name).to.equal(current);
      }
      await world.applyPool(3);
      await untilAllHealthy(world, 3);
    });

    nothingEvicted(world, () => [...pods, ...others]);
  });
};

/**
 * The health scenarios in order, in one `describe` (mocha runs a suite's own `it`s before its
 * nested suites): 2 Ready cells before, 3 after.
 */
export const cellHealth: Scenario = (world) => {
  describe('cell health (spec.health): found, retired and replaced, never evicted', function () {
    const { machine, health } = world.provisioner;
    // Each in a suite of its own: mocha runs a suite's own tests before its nested suites.
    const scenarios: [string, Scenario][] = [
      ['a Node condition cleared in time', healthRecovers],
      ['a Node condition held past its duration', unhealthyNodeReplaced],
      ['more cells unhealthy than maxUnhealthy', maxUnhealthyShortCircuits],
      [`a ${machine.word} that never boots`, nodeStartupTimeout],
      [health.failed.title, machineFailed],
      ['a GPU condition with duration 0', gpuConditionAtOnce],
      ['the join Secret rotated', joinSecretRotated],
      ['a replacement requested on machines', replacementRequested],
    ];
    for (const [title, scenario] of scenarios) {
      describe(title, function () {
        scenario(world);
      });
    }
  });
};
