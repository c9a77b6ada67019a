// VirtualClusterPlans and VirtualClusters that choose among Cells by label (spec.cellSelector,
// D48, D49), through the real Metacontroller: three Cells on simulated OCM clusters and Nodes, of
// different sizes, one of them closed to the tenant's namespace. Each policy chooses as
// docs/concepts.md says, a Cell that is too small or closed is left out with its reason, and
// `kubectl get vcp` shows the choice; a VirtualCluster resolves once, is labelled with its Cell by
// the kubecell-cell-label decorator, is counted by that Cell and never moves.
import { expect } from 'chai';
import { gunzipSync } from 'node:zlib';
import type { KubeCellStack } from '../../../harness/cluster/kubecell-stack.js';
import { virtualNodeClassManifest } from '../../../harness/manifests.js';
import { KubeClient, type LeaseRenewer } from '../../../harness/simulate/index.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getKubeCell } from '../shared-cluster.js';
import {
  CELL_NAMESPACE,
  GPU,
  applyCell,
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
  describeStatus,
  eventually,
  eventuallyConcluded,
  eventuallyGone,
  eventuallyPhase,
  getObject,
  kubectl,
  type ObjectWithStatus,
  uniqueName,
} from './support.js';

const PLANS = 'virtualclusterplans.kubecell.io';

interface IndexEntry {
  name: string;
  labels?: Record<string, string>;
  status?: { phase?: string; inventory?: Record<string, unknown[]> } & Record<string, unknown>;
}
const VCS = 'virtualclusters.kubecell.io';

interface Resolved {
  cell: { name: string };
  placement?: Placement;
  plan?: { name: string; cell?: string; result: string };
}

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
      await applyCell(stack, world, {
        labels: { 'example.com/tier': tier, 'example.com/zone': zone },
        closed: restricted,
      });
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
  /** The placement index's entries (D50), as the kubecell-placement-index controller wrote them. */
  const indexEntries = async () => {
    const index = await getObject(stack, 'configmap', 'kubecell-placement-index', CELL_NAMESPACE);
    const encoded = (index as { binaryData?: Record<string, string> } | undefined)?.binaryData?.[
      'cells.json.gz'
    ];
    if (encoded === undefined) return undefined;
    const text = gunzipSync(Buffer.from(encoded, 'base64')).toString('utf8');
    return (JSON.parse(text) as { cells: IndexEntry[] }).cells;
  };

  const entryOf = (entries: IndexEntry[] | undefined, cell: string) =>
    entries?.find((entry) => entry.name === cell);

  it('a selector plan reads its Cells from the placement index, which follows every Cell change', async () => {
    const entries = await eventually(stack, 'the test Cells in the placement index', async () => {
      const found = await indexEntries();
      return cells.every(([world]) => entryOf(found, world.cell)?.status?.phase === 'Ready')
        ? { value: found }
        : { notYet: JSON.stringify(found?.map((entry) => entry.name)) };
    });
    const smallEntry = entryOf(entries, small.cell);
    expect(smallEntry?.labels).to.deep.equal({ 'example.com/tier': tier, 'example.com/zone': 'b' });
    // What a placement reads, not the per-Node lists.
    expect(Object.keys(smallEntry?.status ?? {})).to.not.include.members([
      'nodes',
      'nodeAddresses',
    ]);
    expect(smallEntry?.status?.inventory?.[GPU]).to.have.length(5);

    // A label added to a Cell reaches the index, and a plan selecting by it.
    const marker = uniqueName('picked');
    const labelSmall = (label: string) =>
      kubectl(stack, ['-n', CELL_NAMESPACE, 'label', 'cell', small.cell, label]);
    await labelSmall(`example.com/pick=${marker}`);
    try {
      await eventually(stack, 'the new label in the index', async () => {
        const labels = entryOf(await indexEntries(), small.cell)?.labels ?? {};
        return labels['example.com/pick'] === marker
          ? { value: true }
          : { notYet: JSON.stringify(labels) };
      });
      const name = uniqueName('picked');
      await apply(
        stack,
        {
          ...planManifest(name),
          spec: {
            cellSelector: { matchLabels: { 'example.com/pick': marker } },
            classRef: { name: klass },
          },
        },
        'e2e-tenant',
      );
      const placement = placementOf(await eventuallyConcluded(stack, name, tenant));
      expect(placement?.candidates).to.equal(1);
      expect(placement?.chosen?.name).to.equal(small.cell);

      // Deleted, the index is written again by Metacontroller (its source still exists).
      await kubectl(stack, [
        '-n',
        CELL_NAMESPACE,
        'delete',
        'configmap',
        'kubecell-placement-index',
      ]);
      await eventually(stack, 'the placement index written again', async () => {
        const found = await indexEntries();
        return entryOf(found, small.cell) !== undefined
          ? { value: true }
          : { notYet: 'no index yet' };
      });
    } finally {
      await labelSmall('example.com/pick-');
    }
  });

  /**
   * Creates a VirtualCluster in `into`, a host namespace that exists, or else in a new one;
   * returns the namespace.
   */
  const createVirtualCluster = async (
    name: string,
    spec: Record<string, unknown>,
    { into, annotations }: { into?: string; annotations?: Record<string, string> } = {},
  ) => {
    const namespace = into ?? uniqueName(`e2e-sel-${name}`);
    if (into === undefined) await createHostNamespace(stack, namespace);
    await apply(
      stack,
      {
        apiVersion: 'kubecell.io/v1alpha1',
        kind: 'VirtualCluster',
        metadata: { name, namespace, ...(annotations ? { annotations } : {}) },
        spec,
      },
      'e2e-tenant',
    );
    return namespace;
  };

  /** The VirtualCluster's snapshot, once written. */
  const resolvedOf = (name: string, namespace: string) =>
    eventually(stack, `VirtualCluster ${namespace}/${name} resolved`, async () => {
      const found = await getObject(stack, VCS, name, namespace);
      const resolved = (found?.status as { resolved?: Resolved } | undefined)?.resolved;
      return resolved !== undefined ? { value: resolved } : { notYet: describeStatus(found) };
    });

  const deleteVirtualCluster = async (name: string, namespace: string) => {
    await stack.cluster.kubectl(['delete', VCS, name, '-n', namespace, '--wait=false']);
    await eventuallyGone(stack, VCS, name, namespace, 120_000);
  };

  const countedBy = (cell: string, count: number) =>
    eventually(stack, `Cell ${cell} counting ${count} VirtualCluster(s)`, async () => {
      const found = await getObject(stack, 'cells.kubecell.io', cell, CELL_NAMESPACE);
      const status = found?.status as { resolvedBy?: number } | undefined;
      return status?.resolvedBy === count ? { value: true } : { notYet: describeStatus(found) };
    });

  it('a VirtualCluster created from a plan lands on the plan’s Cell while it fits, else on the next best, saying so', async function () {
    this.timeout(300_000);
    // Two tenants each ask a plan first: both choose the big Cell (16 GPUs free, score 7).
    const plan = 'asked';
    const tenants = [uniqueName('e2e-sel-first'), uniqueName('e2e-sel-second')];
    for (const namespace of tenants) {
      await createHostNamespace(stack, namespace);
      await apply(
        stack,
        { ...planManifest(plan), metadata: { name: plan, namespace } },
        'e2e-tenant',
      );
      const asked = await eventuallyConcluded(stack, plan, namespace);
      expect(placementOf(asked)?.chosen?.name).to.equal(big.cell);
    }
    // Then 13 of the big Cell's GPUs go to another VirtualCluster: 3 left. By MostAvailable the
    // small Cell (8 free) would now win; the plan's Cell still fits the class's 2.
    const filler = uniqueName('e2e-sel-13gpu');
    await apply(
      stack,
      virtualNodeClassManifest(filler, { 'requests.cpu': '4', [`requests.${GPU}`]: '13' }),
      'e2e-platform',
    );
    const fillerNs = await createVirtualCluster('filler', {
      cellRef: { name: big.cell },
      classRef: { name: filler },
    });
    await resolvedOf('filler', fillerNs);
    await countedBy(big.cell, 1);
    const fromPlan = (into: string, name: string) =>
      createVirtualCluster(
        name,
        { cellSelector: { matchLabels: { 'example.com/tier': tier } }, classRef: { name: klass } },
        { into, annotations: { 'kubecell.io/plan': plan } },
      );
    const [firstNs, secondNs] = tenants as [string, string];
    await fromPlan(firstNs, 'first');
    const first = await resolvedOf('first', firstNs);
    expect(first.cell.name).to.equal(big.cell);
    expect(first.plan).to.deep.equal({ name: plan, cell: big.cell, result: 'Followed' });
    await countedBy(big.cell, 2);
    // 1 GPU left on the big Cell: the plan's Cell no longer fits; the next best is taken.
    await fromPlan(secondNs, 'second');
    const second = await resolvedOf('second', secondNs);
    expect(second.cell.name).to.equal(small.cell);
    expect(second.plan).to.deep.equal({ name: plan, cell: big.cell, result: 'CellNoLongerFits' });
    const vc = await getObject(stack, VCS, 'second', secondNs);
    expect(vc?.status?.conditions?.find((c) => c.type === 'PlanFollowed')).to.deep.include({
      status: 'False',
      reason: 'CellNoLongerFits',
    });

    for (const [name, namespace] of [
      ['filler', fillerNs],
      ['first', firstNs],
      ['second', secondNs],
    ] as const) {
      await deleteVirtualCluster(name, namespace);
    }
    await countedBy(big.cell, 0);
    await countedBy(small.cell, 0);
  });

  it('a VirtualCluster with a selector resolves once to the chosen Cell, is labelled with it, counted by it, and never moves', async function () {
    this.timeout(240_000);
    const namespace = await createVirtualCluster('packed', {
      cellSelector: { matchLabels: { 'example.com/tier': tier } },
      placementPolicy: { type: 'Pack' },
      classRef: { name: klass },
    });
    // Resolved, then labelled by the kubecell-cell-label decorator, then counted by the Cell.
    const vc = await eventually(stack, 'VirtualCluster packed resolved and labelled', async () => {
      const found = await getObject(stack, VCS, 'packed', namespace);
      const resolved = (found?.status as { resolved?: { cell: { name: string } } } | undefined)
        ?.resolved;
      return resolved !== undefined && found?.metadata.labels?.['kubecell.io/cell'] !== undefined
        ? { value: found! }
        : { notYet: describeStatus(found) };
    });
    const resolved = (vc.status as { resolved: { cell: { name: string }; placement: Placement } })
      .resolved;
    expect(resolved.cell.name).to.equal(small.cell);
    expect(vc.metadata.labels?.['kubecell.io/cell']).to.equal(small.cell);
    expect(resolved.placement).to.deep.equal({
      policy: { type: 'Pack' },
      candidates: 3,
      chosen: { name: small.cell, score: '3', scoreResource: GPU, left: '6' },
      runnerUp: { name: big.cell, score: '7', scoreResource: GPU, left: '14' },
      filtered: [{ result: 'Fail', reason: 'NamespaceNotAllowed', count: 1, cells: [closed.cell] }],
    });
    expect(await printedColumns(stack, VCS, 'packed', namespace)).to.include({ CELL: small.cell });
    await countedBy(small.cell, 1);

    // The Cell stops matching the selector: the VirtualCluster stays where it was placed.
    await stack.cluster.kubectl([
      'label',
      'cell',
      small.cell,
      '-n',
      CELL_NAMESPACE,
      'example.com/tier-',
    ]);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const after = await getObject(stack, VCS, 'packed', namespace);
    expect((after?.status as { resolved?: unknown } | undefined)?.resolved).to.deep.equal(resolved);
    expect(after?.metadata.labels?.['kubecell.io/cell']).to.equal(small.cell);

    await deleteVirtualCluster('packed', namespace);
  });
});
