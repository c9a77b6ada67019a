// The cell health scenarios of a GPUCellPool (issue 28, item 6), for either provisioner, through
// the real Metacontroller: the test plays a Node condition (the kubelet's Ready, NVIDIA
// NVSentinel's GPU conditions), a machine that runs but never boots, and a machine that fails for
// good; everything the pool does is Metacontroller calling the hooks (hooks/gpucellpool/health.ts,
// remediation.ts). They run after the scale-down scenario, with 2 Ready cells, and leave 3.
//
// The pool gets a short spec.health (Ready False for 5 s, SysLogsXIDError at once, a 5 s node
// startup timeout, maxUnhealthy 1) so that each wait is seconds, not minutes. Detection and
// replacement times are printed as `[measured]` lines.
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
      const set = Date.now();
      await setNodeCondition(world, node, {
        type: 'Ready',
        status: 'False',
        at: new Date(set),
        reason: 'KubeletNotReady',
      });
      const found = await untilPool(world, `${name} Unhealthy`, (pool) =>
        healthOf(pool).find((c) => c.name === name && c.health !== 'Healthy'),
      );
      const detected = Date.now();
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

    it('nothing was evicted: no eviction, and no pod deletion by Metacontroller', function () {
      const { evictions, deletions } = auditedPodRequests(world.audited.auditLog);
      expect(evictions).to.deep.equal([]);
      expect(deletions.map((deletion) => deletion.user)).to.not.include(METACONTROLLER_USER);
      expect(deletions.map((deletion) => deletion.pod)).to.include.members(
        pods.map((pod) => `${world.tenants}/${pod}`),
      );
    });
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
    const pool = await world.pool();
    const detected = Date.now();
    expect(healthOf(pool).find((c) => c.vm === machine)).to.include({
      health: 'Remediating',
      healthReason: 'MachineFailed',
    });
    expect(conditionOf(pool, 'CellsHealthy')?.message).to.contain(
      `${cell?.name ?? ''} Remediating (MachineFailed)`,
    );
    expect(isRetiring(await world.node(cell?.node ?? ''))).to.equal(true);
    await releaseMachine(world, machine);
    const replacement = await untilReplacement(
      world,
      cells.map((c) => c.name),
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
    ];
    for (const [title, scenario] of scenarios) {
      describe(title, function () {
        scenario(world);
      });
    }
  });
};
