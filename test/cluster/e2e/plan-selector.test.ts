// VirtualClusterPlans that choose among Cells by label (spec.cellSelector, D48), through the real
// Metacontroller: three Cells on simulated OCM clusters and Nodes, of different sizes, one of them
// closed to the tenant's namespace. Each policy chooses as docs/concepts.md says, a Cell that is
// too small or closed is left out with its reason, and `kubectl get vcp` shows the choice.
import { expect } from 'chai';
import type { KubeCellStack } from '../../../harness/cluster/kubecell-stack.js';
import { cellManifest, virtualNodeClassManifest } from '../../../harness/manifests.js';
import { KubeClient, type LeaseRenewer } from '../../../harness/simulate/index.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getKubeCell } from '../shared-cluster.js';
import {
  CELL_NAMESPACE,
  GPU,
  GPU_DEVICES,
  cellWorld,
  createHostNamespace,
  deleteCellNow,
  ensureProviderBaseline,
  printedColumns,
  standUpCellWorld,
  startRenewing,
  type CellWorld,
} from './cell-fixtures.js';
import {
  apply,
  eventuallyConcluded,
  eventuallyPhase,
  type ObjectWithStatus,
  uniqueName,
} from './support.js';

const PLANS = 'virtualclusterplans.kubecell.io';

interface Ranked {
  name: string;
  score?: string;
  scoreResource?: string;
  left?: string;
  domain?: string;
}

interface Placement {
  policy: { type: string; spreadKey?: string };
  candidates: number;
  chosen?: Ranked;
  runnerUp?: Ranked;
  filtered: { result: string; reason: string; count: number; cells: string[] }[];
}

const placementOf = (plan: ObjectWithStatus): Placement | undefined =>
  (plan.status as { placement?: Placement } | undefined)?.placement;

describe('e2e: VirtualClusterPlan choosing among Cells (spec.cellSelector)', function () {
  this.timeout(180_000);
  let stack: KubeCellStack;
  let client: KubeClient;
  const renewers: LeaseRenewer[] = [];
  const tier = uniqueName('e2e-tier');
  const tenant = uniqueName('e2e-sel-tenant');
  const klass = uniqueName('e2e-sel-2gpu');
  const bigClass = uniqueName('e2e-sel-10gpu');
  // 16 GPUs in zone a, 8 in zone b, and 16 in zone b that the tenant may not use.
  const big = cellWorld('e2e-sel-big');
  const small = cellWorld('e2e-sel-small');
  const closed = cellWorld('e2e-sel-closed');
  const cells: [CellWorld, number, string, boolean][] = [
    [big, 2, 'a', false],
    [small, 1, 'b', false],
    [closed, 2, 'b', true],
  ];

  const planManifest = (name: string, policy?: Record<string, string>, className = klass) => ({
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'VirtualClusterPlan',
    metadata: { name, namespace: tenant },
    spec: {
      cellSelector: { matchLabels: { 'example.com/tier': tier } },
      ...(policy === undefined ? {} : { placementPolicy: policy }),
      classRef: { name: className },
    },
  });

  /** Applies a plan over the test's Cells and waits for its conclusion. */
  const decided = async (name: string, policy?: Record<string, string>, className = klass) => {
    await apply(stack, planManifest(name, policy, className), 'e2e-tenant');
    return eventuallyConcluded(stack, name, tenant);
  };

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    stack = await getKubeCell();
    client = new KubeClient(stack.cluster.kubeconfigPath);
    await ensureProviderBaseline(client);
    await createHostNamespace(stack, tenant);
    for (const [world, nodes, zone, restricted] of cells) {
      await standUpCellWorld(client, world, { nodes: { perProfile: nodes } });
      renewers.push(startRenewing(client, world.managedCluster, 60, 20_000));
      const manifest = cellManifest(world.cell, {
        managedCluster: world.managedCluster,
        profile: world.profile,
        devices: GPU_DEVICES,
      });
      manifest.metadata.labels = {
        'example.com/tier': tier,
        'example.com/zone': zone,
      };
      if (restricted) {
        (manifest.spec as Record<string, unknown>).namespaceSelector = {
          matchLabels: { 'kubernetes.io/metadata.name': 'someone-else' },
        };
      }
      await apply(stack, manifest, 'e2e-platform');
    }
    for (const [world] of cells) {
      await eventuallyPhase(stack, 'cells.kubecell.io', world.cell, CELL_NAMESPACE, 'Ready');
    }
    await apply(
      stack,
      [
        virtualNodeClassManifest(klass, { 'requests.cpu': '4', [`requests.${GPU}`]: '2' }),
        virtualNodeClassManifest(bigClass, { 'requests.cpu': '4', [`requests.${GPU}`]: '10' }),
      ],
      'e2e-platform',
    );
  });

  after(async function () {
    for (const renewer of renewers) await renewer.stop();
    if (stack) for (const [world] of cells) await deleteCellNow(stack, world.cell);
    client?.close();
  });

  it('MostAvailable (the default) chooses the Cell with the most room; kubectl shows it', async () => {
    const name = uniqueName('most');
    const plan = await decided(name);
    expect((plan.status as { decision?: string }).decision).to.equal('Accepted');
    expect(placementOf(plan)).to.deep.equal({
      policy: { type: 'MostAvailable' },
      candidates: 3,
      // 16 GPUs, 2 for this one, room for 7 more; 8 GPUs: room for 3 more.
      chosen: { name: big.cell, score: '7', scoreResource: GPU, left: '14' },
      runnerUp: { name: small.cell, score: '3', scoreResource: GPU, left: '6' },
      filtered: [{ result: 'Fail', reason: 'NamespaceNotAllowed', count: 1, cells: [closed.cell] }],
    });
    const columns = await printedColumns(stack, PLANS, name, tenant);
    expect(columns).to.include({ DECISION: 'Accepted', CHOSEN: big.cell, SCORE: '7' });
    // No Cell is named in the spec, so no kubecell.io/cell label.
    expect(plan.metadata.labels).to.not.have.property('kubecell.io/cell');
  });

  it('Pack chooses the fullest Cell that still fits', async () => {
    const name = uniqueName('pack');
    const placement = placementOf(await decided(name, { type: 'Pack' }));
    expect(placement?.chosen).to.deep.equal({
      name: small.cell,
      score: '3',
      scoreResource: GPU,
      left: '6',
    });
    expect(placement?.runnerUp?.name).to.equal(big.cell);
  });

  it('Spread chooses by zone and reports each Cell’s zone', async () => {
    const name = uniqueName('spread');
    const placement = placementOf(
      await decided(name, { type: 'Spread', spreadKey: 'example.com/zone' }),
    );
    // No VirtualCluster on either zone yet: the most room decides, zone a.
    expect(placement?.chosen).to.deep.include({ name: big.cell, domain: 'a' });
    expect(placement?.runnerUp).to.deep.include({ name: small.cell, domain: 'b' });
  });

  it('a Cell too small for the class is left out with its reason; the one that fits is chosen', async () => {
    const name = uniqueName('ten');
    const placement = placementOf(await decided(name, undefined, bigClass));
    expect(placement?.chosen).to.deep.equal({
      name: big.cell,
      score: '0.6',
      scoreResource: GPU,
      left: '6',
    });
    expect(placement?.filtered).to.deep.equal([
      { result: 'Fail', reason: 'InsufficientCapacity', count: 1, cells: [small.cell] },
      { result: 'Fail', reason: 'NamespaceNotAllowed', count: 1, cells: [closed.cell] },
    ]);
  });
});
