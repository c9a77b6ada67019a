// Tenants are told (issue 28, item 4), for either provisioner, through the real Metacontroller: a
// Cell of the pool's machine profile includes the pool's Nodes, a tenant's VirtualCluster resolves
// to it, and when one of those Nodes is found unhealthy the tenant sees CellNodesHealthy False
// naming the Node and the reason on `kubectl get virtualcluster`; once the pool has replaced the
// cell, True again; with remediation None, once the Node recovers, its marks are removed by
// Metacontroller and the condition is True again. While the pool is healthy and idle, nothing the
// verdict travels through (the Node's annotations, the Cell's liveness record) changes.
//
// It runs after the health scenarios (spec.health set: SysLogsXIDError unhealthy at once,
// maxUnhealthy 1, Replace), with 3 Ready cells, and leaves 3. The test plays OCM (the Cell's
// ManagedCluster and its lease), the provider baseline and k3k (harness/simulate/); the Cell, the
// VirtualCluster and the pool are Metacontroller calling KubeCell's hooks.
import { expect } from 'chai';
import { ANNOTATIONS } from '../../../hooks/kube/labels.js';
import {
  cellManifest,
  hostNamespaceManifest,
  virtualClusterManifest,
  virtualNodeClassManifest,
} from '../../../harness/manifests.js';
import { poll, sleep } from '../../../harness/poll.js';
import { startSimulation, type Simulation } from '../../../harness/simulate/index.js';
import { CELL, CELL_NAMESPACE, GPU_DEVICES, VC, VNCLASS } from './cell-fixtures.js';
import {
  holdFinalizer,
  patchHealth,
  releaseMachine,
  setNodeCondition,
} from './gpucellpool-health.js';
import { cellsOf, endPod, type CellStatus } from './gpucellpool-support.js';
import { PROFILE, type PoolWorld, type Scenario } from './gpucellpool-world.js';
import {
  apply,
  conditionOf,
  getObject,
  kubectl,
  listObjects,
  uniqueName,
  watching,
  type Condition,
  type ObjectWithStatus,
} from './support.js';

/** The VirtualCluster's CellNodesHealthy, as `kubectl get virtualcluster -o json` shows it. */
async function cellNodesHealthy(
  world: PoolWorld,
  namespace: string,
  name: string,
): Promise<Condition | undefined> {
  return conditionOf(await getObject(world.stack, VC, name, namespace), 'CellNodesHealthy');
}

/** Waits until the VirtualCluster's CellNodesHealthy matches `wanted`. */
function untilCellNodes(
  world: PoolWorld,
  at: { namespace: string; name: string },
  what: string,
  wanted: (condition: Condition) => boolean,
): Promise<Condition> {
  return poll(
    `VirtualCluster ${at.namespace}/${at.name}: ${what}`,
    async () => {
      const condition = await cellNodesHealthy(world, at.namespace, at.name);
      return condition !== undefined && wanted(condition)
        ? { value: condition }
        : { notYet: JSON.stringify(condition ?? null) };
    },
    watching(world.stack, 180_000),
  );
}

/** The profile Nodes carrying a health mark. */
async function markedNodes(world: PoolWorld): Promise<string[]> {
  const nodes = await listObjects(world.stack, 'nodes', {
    selector: `kubecell.io/machine-profile=${PROFILE}`,
  });
  return nodes
    .filter((node) => node.metadata.annotations?.[ANNOTATIONS.cellHealth] !== undefined)
    .map((node) => node.metadata.name);
}

export const tenantsAreTold: Scenario = (world) => {
  describe('tenants are told: a VirtualCluster on a Cell with a pool Node sees its health', function () {
    const cell = uniqueName('e2e-pool-cell');
    const klass = uniqueName('e2e-pool-class');
    const vc = { namespace: uniqueName('e2e-pool-vc'), name: 'team-gpu' };
    let simulation: Simulation | undefined;
    let sick: CellStatus | undefined;

    before(async function () {
      this.timeout(240_000);
      // OCM, the provider baseline and k3k for the Cell; the pool's Nodes are its profile Nodes.
      simulation = await startSimulation(world.stack.cluster.kubeconfigPath, {
        ocm: {},
        k3k: { intervalMs: 200 },
        profileNodes: false,
        kubevirt: false,
        clusterAPI: false,
      });
      await apply(
        world.stack,
        cellManifest(cell, { profile: PROFILE, devices: GPU_DEVICES }),
        'e2e-platform',
      );
      await apply(world.stack, hostNamespaceManifest(vc.namespace), 'e2e-platform');
      // No GPU and no storage in the entitlement: the pool's Nodes offer CPUs and memory.
      await apply(
        world.stack,
        virtualNodeClassManifest(klass, { 'requests.cpu': '2', 'requests.memory': '4Gi' }),
        'e2e-platform',
      );
      await simulation.syncCells();
      await poll(
        `Cell ${cell} Ready`,
        async () => {
          const object = await getObject(world.stack, CELL, cell, CELL_NAMESPACE);
          return object?.status?.phase === 'Ready'
            ? { value: object }
            : { notYet: JSON.stringify(object?.status?.conditions ?? null) };
        },
        watching(world.stack, 120_000),
      );
      await apply(world.stack, virtualClusterManifest(vc.namespace, vc.name, { cell, klass }));
    });

    after(async function () {
      this.timeout(120_000);
      await kubectl(world.stack, ['delete', VC, vc.name, '-n', vc.namespace, '--wait=false']);
      await kubectl(world.stack, ['delete', CELL, cell, '-n', CELL_NAMESPACE, '--wait=false']);
      await kubectl(world.stack, ['delete', VNCLASS, klass, '--wait=false']);
      await simulation?.stop();
    });

    it('while every Node is healthy: CellNodesHealthy True, no Node marked, and at idle nothing is written', async function () {
      const healthy = await untilCellNodes(
        world,
        vc,
        'CellNodesHealthy True',
        (c) => c.status === 'True',
      );
      expect(healthy).to.include({ reason: 'CellNodesHealthy' });
      expect(healthy.message).to.equal(
        `Every Node of Cell ${cell} is healthy (none is marked unhealthy by its GPUCellPool).`,
      );
      const object = await getObject(world.stack, VC, vc.name, vc.namespace);
      expect(object?.status?.['resolved'], 'read from the liveness record').to.not.equal(undefined);
      expect(await markedNodes(world)).to.deep.equal([]);
      expect(
        conditionOf(await getObject(world.stack, CELL, cell, CELL_NAMESPACE), 'NodesHealthy'),
      ).to.include({ status: 'True', reason: 'NodesHealthy' });
      // Idle: the record and the VirtualCluster are not written again.
      const record = `kubecell-cell-${cell}`;
      const before = await Promise.all([
        getObject(world.stack, 'configmap', record, CELL_NAMESPACE),
        poll(
          'the VirtualCluster settled',
          async () => {
            const first = await getObject(world.stack, VC, vc.name, vc.namespace);
            await sleep(2000);
            const second = await getObject(world.stack, VC, vc.name, vc.namespace);
            return first?.metadata.resourceVersion === second?.metadata.resourceVersion
              ? { value: second }
              : { notYet: 'still written' };
          },
          watching(world.stack, 60_000),
        ),
      ]);
      expect(before[0]?.data?.['unhealthyNodes']).to.equal('');
      await sleep(5000);
      const recordAfter = await getObject(world.stack, 'configmap', record, CELL_NAMESPACE);
      const vcAfter = await getObject(world.stack, VC, vc.name, vc.namespace);
      expect(recordAfter?.metadata.resourceVersion, 'record').to.equal(
        before[0]?.metadata.resourceVersion,
      );
      expect(vcAfter?.metadata.resourceVersion, 'VirtualCluster').to.equal(
        before[1]?.metadata.resourceVersion,
      );
    });

    it('a pool Node found unhealthy: the Node is marked, and the VirtualCluster names it with the reason; Ready stays', async function () {
      const phase = (await getObject(world.stack, VC, vc.name, vc.namespace))?.status?.phase;
      // A cell whose Node no tenant pod holds; its machine held by a finalizer once the pool
      // deletes it, so that the cell stays Remediating while the test looks.
      const cells = cellsOf(await world.pool());
      sick = cells[cells.length - 1];
      const node = sick?.node ?? '';
      for (const pod of await listObjects(world.stack, 'pod', { namespace: world.tenants })) {
        if ((pod.spec as { nodeName?: string } | undefined)?.nodeName === node) {
          await endPod(world.stack, world.tenants, pod.metadata.name);
        }
      }
      await holdFinalizer(world, sick?.vm ?? '');
      await setNodeCondition(world, node, {
        type: 'SysLogsXIDError',
        status: 'True',
        at: new Date(),
        reason: 'XID79',
      });
      const unhealthy = await untilCellNodes(
        world,
        vc,
        `CellNodesHealthy False naming ${node} being replaced`,
        (c) =>
          c.status === 'False' &&
          (c.message ?? '').includes(`${node} (UnhealthyNode, being replaced)`),
      );
      expect(unhealthy.reason).to.equal('CellNodesUnhealthy');
      expect(unhealthy.message).to.equal(
        `1 Node(s) of Cell ${cell} are unhealthy or being replaced: ${node} (UnhealthyNode, being replaced). ` +
          'Their GPUCellPool replaces a cell it remediates without evicting pods: the Node is ' +
          'cordoned and goes once no pod holds its GPU, so pods on it keep running until they ' +
          'finish or are moved. The VirtualCluster keeps serving (informational).',
      );
      const marked = await getObject(world.stack, 'node', node);
      expect(marked?.metadata.annotations).to.include({
        [ANNOTATIONS.cellHealth]: 'Remediating',
        [ANNOTATIONS.cellHealthReason]: 'UnhealthyNode',
      });
      expect(await markedNodes(world)).to.deep.equal([node]);
      const cellObject = await getObject(world.stack, CELL, cell, CELL_NAMESPACE);
      expect(conditionOf(cellObject, 'NodesHealthy')).to.include({
        status: 'False',
        reason: 'NodesUnhealthy',
      });
      // Informational: CellLive and the phase are as they were.
      const object = await getObject(world.stack, VC, vc.name, vc.namespace);
      expect(conditionOf(object, 'CellLive')).to.include({ status: 'True' });
      expect(object?.status?.phase).to.equal(phase);
    });

    it('once the pool has replaced the cell: CellNodesHealthy True again, no Node marked', async function () {
      const node = sick?.node ?? '';
      await releaseMachine(world, sick?.vm ?? '');
      const healthy = await untilCellNodes(
        world,
        vc,
        'CellNodesHealthy True again',
        (c) => c.status === 'True',
      );
      expect(healthy.reason).to.equal('CellNodesHealthy');
      await poll(
        '3 cells Ready and Healthy again',
        async () => {
          const cells = cellsOf(await world.pool()) as (CellStatus & { health?: string })[];
          return cells.length === 3 &&
            cells.every((c) => c.phase === 'Ready' && c.health === 'Healthy')
            ? { value: cells }
            : { notYet: JSON.stringify(cells) };
        },
        watching(world.stack, 120_000),
      );
      expect(await getObject(world.stack, 'node', node)).to.equal(undefined);
      expect(await markedNodes(world)).to.deep.equal([]);
      const object: ObjectWithStatus | undefined = await getObject(
        world.stack,
        VC,
        vc.name,
        vc.namespace,
      );
      expect(conditionOf(object, 'CellLive')).to.include({ status: 'True' });
    });

    it('with remediation None, a Node that recovers loses its marks (Metacontroller removes them): True again', async function () {
      const setRemediation = (remediation: string) => patchHealth(world, { remediation });
      await setRemediation('None');
      try {
        const cells = cellsOf(await world.pool());
        const node = cells[0]?.node ?? '';
        await setNodeCondition(world, node, {
          type: 'SysLogsXIDError',
          status: 'True',
          at: new Date(),
          reason: 'XID79',
        });
        const unhealthy = await untilCellNodes(world, vc, `${node} Unhealthy, not replaced`, (c) =>
          (c.message ?? '').includes(`${node} (UnhealthyNode)`),
        );
        expect(unhealthy).to.include({ status: 'False', reason: 'CellNodesUnhealthy' });
        expect((await getObject(world.stack, 'node', node))?.metadata.annotations).to.include({
          [ANNOTATIONS.cellHealth]: 'Unhealthy',
          [ANNOTATIONS.cellHealthReason]: 'UnhealthyNode',
        });
        await setNodeCondition(world, node, {
          type: 'SysLogsXIDError',
          status: 'False',
          at: new Date(),
          reason: 'NoXID',
        });
        await untilCellNodes(world, vc, 'CellNodesHealthy True again', (c) => c.status === 'True');
        const recovered = await getObject(world.stack, 'node', node);
        expect(recovered, `${node} kept`).to.not.equal(undefined);
        expect(recovered?.metadata.annotations ?? {}).to.not.have.any.keys(
          ANNOTATIONS.cellHealth,
          ANNOTATIONS.cellHealthReason,
        );
        expect(await markedNodes(world)).to.deep.equal([]);
      } finally {
        await setRemediation('Replace');
      }
    });
  });
};
