// Properties of the Cell and VirtualClusterPlan sync hooks over random observations:
//   1. the status is deterministic: equal inputs (also with every map's keys in another order)
//      and a fixed clock give byte-identical answers;
//   2. feeding the status back as the parent's status changes nothing (one step, no churn); for a
//      Cell later but within its heartbeat (300 s) nothing changes either, and past it only
//      status.observedAt moves (to the time of the sync).
import { expect } from 'chai';
import fc from 'fast-check';
import {
  cell,
  hostNamespace,
  managedCluster,
  node,
  NOW as CELL_NOW,
  pod,
  readyProvider,
  relatedOf,
  resolvedVirtualCluster,
  type AvailableFixture,
} from '../../hooks/cell/testing.js';
import { readyCell, smallClass, virtualCluster } from '../../hooks/feasibility/testing.js';
import type {
  Cell,
  CellStatus,
  VirtualClusterPlan,
  VirtualClusterPlanStatus,
} from '../../hooks/generated/types/index.js';
import { TYPE_KEYS } from '../../hooks/kube/objects.js';
import { formatTime } from '../../hooks/status/conditions.js';
import {
  toObjectMap,
  type CompositeSyncRequest,
  type CompositeSyncResponse,
  type KubernetesObject,
} from '../../hooks/metacontroller/protocol.js';
import { NOW as PLAN_NOW, plan } from '../../hooks/plan/testing.js';
import { callHook, permutation, productRegistry, reorderKeys, wire } from './support.js';

const RUNS = Number(process.env['KUBECELL_ROBUSTNESS_RUNS'] ?? 150);

const cpu = fc.constantFrom('4', '3500m', '64', '0.5', '1e3', '250m');
const memory = fc.constantFrom('256Gi', '1000Mi', '512M', '1Ti', '4Gi');
const gpu = fc.constantFrom('8', '0', '2', '1');
const requests = fc.record(
  { cpu, memory, 'nvidia.com/gpu': gpu },
  { requiredKeys: [] },
) as fc.Arbitrary<Record<string, string>>;

const cellWorld = fc.record({
  nodes: fc.array(
    fc.record({
      ready: fc.boolean(),
      allocatable: fc.record({ cpu, memory, 'nvidia.com/gpu': gpu }, { requiredKeys: ['cpu'] }),
      topolvm: fc.option(fc.constantFrom('1099511627776', '500Gi', '0')),
      profile: fc.constantFrom('a100', 'a100', 'h100'),
    }),
    { maxLength: 6 },
  ),
  pods: fc.array(
    fc.record({
      node: fc.option(fc.nat(7)),
      namespace: fc.constantFrom('tenant-a', 'tenant-b', 'kube-system'),
      phase: fc.constantFrom('Running', 'Pending', 'Succeeded', 'Failed'),
      containers: fc.array(requests, { minLength: 1, maxLength: 2 }),
      init: fc.option(requests),
      overhead: fc.option(fc.record({ cpu, memory }, { requiredKeys: [] })),
    }),
    { maxLength: 20 },
  ),
  managedCluster: fc.option(
    fc.record({
      uid: fc.constantFrom('mc-uid-1', 'mc-uid-2'),
      available: fc.constantFrom<AvailableFixture>(true, false, 'leaseStale', 'unreported'),
    }),
  ),
  virtualClusters: fc.array(
    fc.record({ namespace: fc.constantFrom('tenant-a', 'tenant-b'), cpu, gpu }),
    { maxLength: 3 },
  ),
  nodePorts: fc.array(fc.option(fc.integer({ min: 30000, max: 32767 })), { maxLength: 4 }),
  volumes: fc.array(fc.record({ node: fc.nat(7), size: fc.constantFrom('100Gi', '1Ti') }), {
    maxLength: 4,
  }),
  provider: fc.boolean(),
  notObserved: fc.subarray([
    TYPE_KEYS.node,
    TYPE_KEYS.pod,
    TYPE_KEYS.namespace,
    TYPE_KEYS.virtualCluster,
    TYPE_KEYS.service,
    TYPE_KEYS.persistentVolume,
    TYPE_KEYS.managedCluster,
  ]),
  deleting: fc.constantFrom(false, false, false, true),
});

type CellWorld = typeof cellWorld extends fc.Arbitrary<infer T> ? T : never;

function cellRequest(world: CellWorld): CompositeSyncRequest<Cell> {
  const objects: KubernetesObject[] = [hostNamespace('tenant-a'), hostNamespace('tenant-b')];
  world.nodes.forEach((n, i) =>
    objects.push(
      node(`node-${i}`, n.allocatable, {
        ready: n.ready,
        profile: n.profile,
        ...(n.topolvm === null ? {} : { annotations: { 'capacity.topolvm.io/ssd': n.topolvm } }),
      }),
    ),
  );
  world.pods.forEach((p, i) =>
    objects.push(
      pod(`pod-${i}`, p.namespace, p.node === null ? undefined : `node-${p.node}`, p.containers, {
        phase: p.phase,
        ...(p.init === null ? {} : { init: [p.init] }),
        ...(p.overhead === null ? {} : { overhead: p.overhead }),
      }),
    ),
  );
  if (world.managedCluster !== null) {
    objects.push(managedCluster(world.managedCluster.uid, world.managedCluster.available));
  }
  world.virtualClusters.forEach((vc, i) =>
    objects.push(
      resolvedVirtualCluster(`vc-${i}`, vc.namespace, {
        'requests.cpu': vc.cpu,
        'requests.nvidia.com/gpu': vc.gpu,
      }),
    ),
  );
  world.nodePorts.forEach((port, i) =>
    objects.push({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: `svc-${i}`, namespace: 'tenant-a' },
      spec: { ports: [port === null ? { port: 443 } : { port: 443, nodePort: port }] },
    } as KubernetesObject),
  );
  world.volumes.forEach((v, i) =>
    objects.push({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: `pv-${i}` },
      spec: {
        capacity: { storage: v.size },
        csi: { driver: 'topolvm.io', volumeHandle: `lv-${i}` },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              {
                matchExpressions: [
                  { key: 'topology.topolvm.io/node', operator: 'In', values: [`node-${v.node}`] },
                ],
              },
            ],
          },
        },
      },
    } as KubernetesObject),
  );
  if (world.provider) objects.push(...readyProvider());
  const parent = cell(world.deleting ? { deletionTimestamp: '2026-11-30T11:00:00Z' } : {});
  return {
    parent,
    children: {},
    related: relatedOf(objects, world.notObserved),
    finalizing: world.deleting,
  };
}

/** Status without its heartbeat, status.observedAt. */
/** The status without its observedAt times: the status's own and those stamped with it. */
function withoutObservedAt(status: CellStatus): CellStatus {
  const copy = structuredClone(status);
  delete copy.observedAt;
  for (const node of copy.nodes ?? []) delete node.observedAt;
  if (copy.storageInventory) delete copy.storageInventory.observedAt;
  if (copy.nodePorts) delete copy.nodePorts.observedAt;
  return copy;
}

const planWorld = fc.record({
  cell: fc.constantFrom(
    'ready',
    'absent',
    'stale',
    'degraded',
    'noStatus',
    'noDevices',
    'outdated',
    'noObservedAt',
  ),
  cpuAvailable: fc.constantFrom('23500m', '2', '0', '-1'),
  gpuAvailable: fc.constantFrom('4', '1', '0'),
  storageKnown: fc.boolean(),
  klass: fc.constantFrom('small', 'absent', 'huge', 'unofferedDevice'),
  namespace: fc.constantFrom('host', 'notHost', 'absent'),
  neighbours: fc.array(
    fc.record({
      namespace: fc.constantFrom('tenant-a', 'tenant-b', 'tenant-c'),
      resolved: fc.boolean(),
    }),
    { maxLength: 3 },
  ),
  generation: fc.integer({ min: 1, max: 3 }),
});

type PlanWorld = typeof planWorld extends fc.Arbitrary<infer T> ? T : never;

function planRequest(world: PlanWorld): CompositeSyncRequest<VirtualClusterPlan> {
  const objects: KubernetesObject[] = [];
  if (world.cell !== 'absent') {
    const c = readyCell();
    const status = c.status as CellStatus;
    if (world.cell === 'stale') status.managedCluster!.leaseFresh = false;
    if (world.cell === 'degraded') status.phase = 'Degraded';
    if (world.cell === 'noDevices') delete c.spec.machineProfile.devices;
    if (world.cell === 'outdated') status.observedAt = '2026-11-29T23:49:59Z';
    if (world.cell === 'noObservedAt') delete status.observedAt;
    status.inventory!['cpu']!.availableEstimate = world.cpuAvailable;
    status.inventory!['nvidia.com/gpu']!.availableEstimate = world.gpuAvailable;
    if (!world.storageKnown) {
      status.storageInventory = { ...status.storageInventory!, freeCapacityKnown: false };
      delete status.storageInventory.freeCapacity;
    }
    if (world.cell === 'noStatus') delete c.status;
    objects.push(c);
  }
  if (world.klass !== 'absent') {
    const k = smallClass();
    if (world.klass === 'huge') k.spec.entitlement.workloadHard['requests.cpu'] = '1000';
    if (world.klass === 'unofferedDevice') {
      k.spec.entitlement.workloadHard['requests.huawei.com/Ascend910B3'] = '1';
    }
    objects.push(k);
  }
  if (world.namespace !== 'absent') {
    objects.push({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: 'tenant-a',
        labels: world.namespace === 'host' ? { 'kubecell.io/host-namespace': 'true' } : {},
      },
    });
  }
  world.neighbours.forEach((n, i) =>
    objects.push(
      virtualCluster(
        `vc-${i}`,
        n.namespace,
        n.resolved ? { cellName: 'cell1', workloadHard: { 'requests.cpu': '4' } } : undefined,
      ),
    ),
  );
  return {
    parent: plan(world.generation),
    children: {},
    related: toObjectMap(objects),
    finalizing: false,
  };
}

describe('robustness: Cell and plan status are deterministic and settle at once', function () {
  this.timeout(120_000);
  let clock = CELL_NOW;
  const registry = productRegistry(() => clock);
  const call = (controller: string, hook: string, req: unknown, at: Date) => {
    clock = at;
    return callHook(registry, controller, hook, req);
  };
  const cellHook = (world: CellWorld) => (world.deleting ? 'finalize' : 'sync');

  it('Cell: equal requests at the same time give byte-identical answers, whatever the key order', async () => {
    await fc.assert(
      fc.asyncProperty(cellWorld, fc.nat(), async (world, seed) => {
        const req = cellRequest(world);
        const hook = cellHook(world);
        const first = JSON.stringify(await call('cell', hook, req, CELL_NOW));
        const again = JSON.stringify(await call('cell', hook, structuredClone(req), CELL_NOW));
        const shuffled = JSON.stringify(
          await call('cell', hook, reorderKeys(req, permutation(seed)), CELL_NOW),
        );
        expect(again).to.equal(first);
        expect(shuffled, 'another key order').to.equal(first);
      }),
      { numRuns: RUNS },
    );
  });

  it('Cell: its status fed back changes nothing, within the heartbeat; past it only the observedAt times move', async () => {
    const seconds = fc.integer({ min: 1, max: 299 });
    const overdue = fc.integer({ min: 300, max: 3600 });
    await fc.assert(
      fc.asyncProperty(cellWorld, seconds, overdue, async (world, within, past) => {
        const req = cellRequest(world);
        const hook = cellHook(world);
        const first = await call('cell', hook, req, CELL_NOW);
        const fedBack = { ...req, parent: { ...req.parent, status: wire(first.status) } };
        const second = await call('cell', hook, fedBack, CELL_NOW);
        expect(JSON.stringify(second), 'fed back at the same time').to.equal(JSON.stringify(first));

        const at = (s: number) => new Date(CELL_NOW.getTime() + s * 1000);
        const later = await call('cell', hook, fedBack, at(within));
        expect(JSON.stringify(later.status), `${within} s later`).to.equal(
          JSON.stringify(first.status),
        );
        const before = first.status as CellStatus;
        const after = (await call('cell', hook, fedBack, at(past))).status as CellStatus;
        expect(withoutObservedAt(after), `${past} s later`).to.deep.equal(
          withoutObservedAt(before),
        );
        if (before.observedAt !== undefined) {
          expect(after.observedAt, `${past} s later`).to.equal(formatTime(at(past)));
          // The parts observed with the status carry its time (hooks/cell/publication.ts).
          expect(after.storageInventory?.observedAt, 'storage').to.equal(after.observedAt);
          expect(after.nodePorts?.observedAt, 'NodePorts').to.equal(after.observedAt);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('plan: equal requests at the same time give byte-identical answers, whatever the key order', async () => {
    await fc.assert(
      fc.asyncProperty(planWorld, fc.nat(), async (world, seed) => {
        const req = planRequest(world);
        const first = JSON.stringify(await call('plan', 'sync', req, PLAN_NOW));
        const again = JSON.stringify(await call('plan', 'sync', structuredClone(req), PLAN_NOW));
        const shuffled = JSON.stringify(
          await call('plan', 'sync', reorderKeys(req, permutation(seed)), PLAN_NOW),
        );
        expect(again).to.equal(first);
        expect(shuffled, 'another key order').to.equal(first);
      }),
      { numRuns: RUNS },
    );
  });

  it('plan: its status fed back changes nothing, at once or later before it expires', async () => {
    await fc.assert(
      fc.asyncProperty(
        planWorld,
        planWorld,
        fc.integer({ min: 1, max: 600 }),
        async (world, changed, seconds) => {
          const req = planRequest(world);
          const first: CompositeSyncResponse = await call('plan', 'sync', req, PLAN_NOW);
          const status = wire(first.status) as VirtualClusterPlanStatus;
          const fedBack = { ...req, parent: { ...req.parent, status } };
          const second = await call('plan', 'sync', fedBack, PLAN_NOW);
          expect(JSON.stringify(second), 'fed back at the same time').to.equal(
            JSON.stringify(first),
          );
          // Later, with the Cell, class and neighbours changed but the same generation: a
          // conclusion stands (Accepted and Rejected are made once per generation) and the status
          // does not move before expiresAt. An Unknown plan is evaluated again (D40): its status
          // is then the fresh evaluation of the changed world at that moment, exactly.
          const later = new Date(PLAN_NOW.getTime() + seconds * 1000);
          if (later.getTime() < Date.parse(status.expiresAt ?? '')) {
            const otherWorld = planRequest({ ...changed, generation: world.generation });
            const third = await call(
              'plan',
              'sync',
              { ...otherWorld, parent: fedBack.parent },
              later,
            );
            if (status.decision !== 'Unknown') {
              expect(third.status).to.deep.equal(first.status);
            } else {
              const fresh: CompositeSyncResponse = await call('plan', 'sync', otherWorld, later);
              const expected = (fresh.status as VirtualClusterPlanStatus).checks;
              const same =
                (fresh.status as VirtualClusterPlanStatus).decision === 'Unknown' &&
                JSON.stringify(wire(expected)) === JSON.stringify(wire(status.checks));
              const thirdStatus = third.status as VirtualClusterPlanStatus;
              if (same) expect(thirdStatus.evaluatedAt).to.equal(status.evaluatedAt);
              else expect(thirdStatus.checks).to.deep.equal(expected);
            }
          }
        },
      ),
      { numRuns: RUNS },
    );
  });
});
