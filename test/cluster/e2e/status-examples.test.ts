// The status examples of docs/concepts.md (a Ready Cell, an Accepted VirtualClusterPlan, a Ready
// VirtualCluster) are what this run through the real Metacontroller shows, not text written by
// hand. The test builds the world of the samples (samples/11-cell-full.yaml,
// 21-virtualnodeclass-full.yaml, a host namespace, 41-virtualclusterplan-full.yaml,
// 51-virtualcluster-full.yaml) on simulated OCM, kubelets and k3k (harness/simulate/), reads each
// status with kubectl, normalises what differs between runs (status-examples.ts says what) and
// compares it with the blocks of docs/concepts.md. It builds that world twice, under other
// names, and requires both to normalise alike: what the normalisation misses shows up in every
// run, not as a flaky drift later. To rewrite the blocks from a run:
//
//   KUBECELL_UPDATE_STATUS_EXAMPLES=1 npx mocha --no-config --node-option import=tsx \
//     --timeout 300000 test/cluster/e2e/status-examples.test.ts
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeCellStack } from '../../../harness/cluster/kubecell-stack.js';
import { repoRoot } from '../../../harness/cluster/paths.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getKubeCell } from '../shared-cluster.js';
import { startSimulation, type Simulation } from '../../../harness/simulate/index.js';
import {
  CONCEPTS_FILE,
  UPDATE_COMMAND,
  canonicalYaml,
  documentedStatus,
  exampleBlock,
  lineDiff,
  normaliseStatus,
  readConcepts,
  updatingExamples,
  withExample,
  writeConcepts,
  type Normalisation,
} from './status-examples.js';
import { poll } from '../../../harness/poll.js';
import {
  apply,
  conditionOf,
  describeStatus,
  eventuallyConcluded,
  eventuallyGone,
  eventuallyPhase,
  getObject,
  listObjects,
  type ObjectWithStatus,
  uniqueName,
  watching,
} from './support.js';

const CELL_NAMESPACE = 'kubecell-system';
const CELLS = 'cells.kubecell.io';
const CLASSES = 'virtualnodeclasses.kubecell.io';
const PLANS = 'virtualclusterplans.kubecell.io';
const VCS = 'virtualclusters.kubecell.io';
const MANAGED_CLUSTERS = 'managedclusters.cluster.open-cluster-management.io';

/** The samples' names, which the examples show. */
const SAMPLE = {
  cell: 'cell1',
  profile: 'a100',
  namespace: 'tenant-a',
  planNamespace: 'tenant-c',
  class: 'small',
};
const PLAN = 'small-on-cell1';
const VIRTUAL_CLUSTER = 'team-a';

/** The UIDs the examples show, one per object. */
const EXAMPLE_UIDS = {
  cell: '0b6f3c2e-8d41-4a97-b5e0-6c1d2f7a9e43',
  managedCluster: '4e8a1f5c-2b7d-4c39-9a06-d3f1e8b2c754',
  class: '7d21a9e4-5c0b-4f38-8e15-2c9b4d7a1f60',
  plan: '2b9e6d14-7f5a-4c08-93d1-8a4e0c6b5f27',
  virtualCluster: '5f0c8a2e-9d3b-4b71-a6e4-1e8c7d2f9b03',
};

/** The examples: name in the doc → what it shows of a captured world. */
const EXAMPLES = ['cell', 'virtualclusterplan', 'virtualcluster-resolved', 'virtualcluster'];
type Captured = Record<string, unknown>;

interface World {
  /** The run's names → the samples'. */
  names: Record<string, string>;
  cell: string;
  profile: string;
  namespace: string;
  /** Where the plan asks (samples/41-virtualclusterplan-full.yaml: tenant-c). */
  planNamespace: string;
  klass: string;
}

type Json = Record<string, unknown>;

function newWorld(): World {
  const world = {
    cell: uniqueName('sx-cell'),
    profile: uniqueName('sx-a100'),
    namespace: uniqueName('sx-tenant'),
    planNamespace: uniqueName('sx-plans'),
    klass: uniqueName('sx-small'),
  };
  return {
    ...world,
    names: {
      [world.cell]: SAMPLE.cell,
      [world.profile]: SAMPLE.profile,
      [world.namespace]: SAMPLE.namespace,
      [world.planNamespace]: SAMPLE.planNamespace,
      [world.klass]: SAMPLE.class,
    },
  };
}

/** Every string equal to a sample name replaced by the world's. */
function intoWorld(value: unknown, world: World): unknown {
  const names: Record<string, string> = {
    [SAMPLE.cell]: world.cell,
    [SAMPLE.profile]: world.profile,
    [SAMPLE.namespace]: world.namespace,
    [SAMPLE.planNamespace]: world.planNamespace,
    [SAMPLE.class]: world.klass,
  };
  if (typeof value === 'string') return names[value] ?? value;
  if (Array.isArray(value)) return value.map((item) => intoWorld(item, world));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, intoWorld(item, world)]),
    );
  }
  return value;
}

/** The `kind` of samples/<file> (the first, or the one named `name`), in the world's names. */
function sample(file: string, kind: string, world: World, name?: string): Json {
  const found = parseAllDocuments(readFileSync(path.join(repoRoot, 'samples', file), 'utf8'))
    .map((document) => document.toJS() as Json | null)
    .find(
      (object) =>
        object?.['kind'] === kind &&
        (name === undefined || (object['metadata'] as Json | undefined)?.['name'] === name),
    );
  if (!found) throw new Error(`samples/${file} has no ${kind} ${name ?? ''}`);
  return intoWorld(found, world) as Json;
}

const statusOf = (object: ObjectWithStatus | undefined): Json => object?.status ?? {};

async function required(
  stack: KubeCellStack,
  resource: string,
  name: string,
  namespace?: string,
): Promise<ObjectWithStatus> {
  const object = await getObject(stack, resource, name, namespace);
  if (!object) throw new Error(`${resource} ${namespace ?? ''}/${name} is gone`);
  return object;
}

/** The Cell's inventory carries no demand of pods that other scenarios left behind. */
function noPendingDemand(cell: ObjectWithStatus | undefined): boolean {
  const inventory = (statusOf(cell)['inventory'] ?? {}) as Record<string, { pending?: string }>;
  return Object.values(inventory).every((entry) => entry.pending === '0');
}

/**
 * Builds the world of the samples and waits until each object shows what the examples show:
 * the Cell Ready (no pending pods in host namespaces), the plan Accepted, then the
 * VirtualCluster Ready and the Cell counting it.
 */
async function buildWorld(stack: KubeCellStack, simulation: Simulation, world: World) {
  await apply(
    stack,
    [
      sample('00-host-namespace.yaml', 'Namespace', world, SAMPLE.namespace),
      sample('00-host-namespace.yaml', 'Namespace', world, SAMPLE.planNamespace),
      sample('21-virtualnodeclass-full.yaml', 'VirtualNodeClass', world),
      sample('11-cell-full.yaml', 'Cell', world),
    ],
    'e2e-platform',
  );
  await simulation.syncCells();
  await eventuallyPhase(stack, CELLS, world.cell, CELL_NAMESPACE, 'Ready', 120_000);
  await poll(
    `Cell ${world.cell} with no pending demand`,
    async () => {
      const cell = await getObject(stack, CELLS, world.cell, CELL_NAMESPACE);
      return noPendingDemand(cell)
        ? { value: true }
        : { notYet: JSON.stringify(statusOf(cell)['inventory']) };
    },
    watching(stack, 180_000),
  );

  await apply(stack, sample('41-virtualclusterplan-full.yaml', 'VirtualClusterPlan', world));
  const plan = await eventuallyConcluded(stack, PLAN, world.planNamespace);
  expect(statusOf(plan)['decision'], JSON.stringify(statusOf(plan)['checks'])).to.equal('Accepted');

  await apply(stack, sample('51-virtualcluster-full.yaml', 'VirtualCluster', world));
  await eventuallyPhase(stack, VCS, VIRTUAL_CLUSTER, world.namespace, 'Ready', 120_000);
  await poll(
    `Cell ${world.cell} counting ${world.namespace}/${VIRTUAL_CLUSTER}`,
    async () => {
      const cell = await getObject(stack, CELLS, world.cell, CELL_NAMESPACE);
      return statusOf(cell)['resolvedBy'] === 1 &&
        conditionOf(cell, 'InUse')?.status === 'True' &&
        noPendingDemand(cell)
        ? { value: true }
        : { notYet: describeStatus(cell) };
    },
    watching(stack, 120_000),
  );
}

/** What varies in this world, read with kubectl. */
async function normalisationOf(stack: KubeCellStack, world: World): Promise<Normalisation> {
  const [cell, managedCluster, klass, plan, vc] = await Promise.all([
    required(stack, CELLS, world.cell, CELL_NAMESPACE),
    required(stack, MANAGED_CLUSTERS, world.cell),
    required(stack, CLASSES, world.klass),
    required(stack, PLANS, PLAN, world.planNamespace),
    required(stack, VCS, VIRTUAL_CLUSTER, world.namespace),
  ]);
  const nodes = await listObjects(stack, 'nodes', {
    selector: `kubecell.io/machine-profile=${world.profile}`,
  });
  const endpoint = statusOf(vc)['endpoint'] as { port?: number } | undefined;
  return {
    names: world.names,
    uids: {
      [cell.metadata.uid]: EXAMPLE_UIDS.cell,
      [managedCluster.metadata.uid]: EXAMPLE_UIDS.managedCluster,
      [klass.metadata.uid]: EXAMPLE_UIDS.class,
      [plan.metadata.uid]: EXAMPLE_UIDS.plan,
      [vc.metadata.uid]: EXAMPLE_UIDS.virtualCluster,
    },
    addresses: nodes.flatMap((node) =>
      ((node.status?.['addresses'] ?? []) as { type: string; address: string }[])
        .filter((address) => address.type === 'InternalIP')
        .map((address) => address.address),
    ),
    ...(endpoint?.port === undefined ? {} : { nodePort: endpoint.port }),
    nodeLabels: Object.fromEntries(
      nodes.map((node) => [node.metadata.name, node.metadata.labels ?? {}]),
    ),
    nodePortsAllocated: 1,
  };
}

/** The examples of one world, normalised; read until two reads a second apart agree. */
async function capture(stack: KubeCellStack, world: World): Promise<Captured> {
  const n = await normalisationOf(stack, world);
  let previous: string | undefined;
  return poll<Captured>(
    `a stable capture of ${world.namespace}`,
    async () => {
      const [cell, plan, vc] = await Promise.all([
        required(stack, CELLS, world.cell, CELL_NAMESPACE),
        required(stack, PLANS, PLAN, world.planNamespace),
        required(stack, VCS, VIRTUAL_CLUSTER, world.namespace),
      ]);
      const vcStatus = normaliseStatus(statusOf(vc), n) as Json;
      const captured: Captured = {
        cell: normaliseStatus(statusOf(cell), n),
        virtualclusterplan: normaliseStatus(statusOf(plan), n),
        'virtualcluster-resolved': { resolved: vcStatus['resolved'] },
        virtualcluster: vcStatus,
      };
      const text = EXAMPLES.map((name) => canonicalYaml(captured[name])).join('---\n');
      const stable = text === previous;
      previous = text;
      if (stable) return { value: captured };
      await new Promise((resolve) => setTimeout(resolve, 1000));
      return { notYet: 'the statuses changed between two reads' };
    },
    watching(stack),
  );
}

describe('e2e: the status examples of docs/concepts.md', function () {
  this.timeout(300_000);
  let stack: KubeCellStack;
  let simulation: Simulation | undefined;
  const worlds = [newWorld(), newWorld()];

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    stack = await getKubeCell();
    simulation = await startSimulation(stack.cluster.kubeconfigPath, {
      k3k: { intervalMs: 200 },
      kubevirt: false,
      clusterAPI: false,
    });
  });

  after(async function () {
    this.timeout(300_000);
    if (!simulation) return;
    try {
      for (const world of worlds) {
        await stack.cluster.kubectl([
          'delete',
          VCS,
          '--all',
          '-n',
          world.namespace,
          '--wait=false',
        ]);
        await eventuallyGone(stack, VCS, VIRTUAL_CLUSTER, world.namespace, 120_000);
        await stack.cluster.kubectl([
          'delete',
          CELLS,
          world.cell,
          '-n',
          CELL_NAMESPACE,
          '--ignore-not-found',
          '--wait=false',
        ]);
        await eventuallyGone(stack, CELLS, world.cell, CELL_NAMESPACE, 120_000);
      }
    } finally {
      await simulation.stop();
      for (const world of worlds) {
        for (const args of [
          ['delete', CLASSES, world.klass],
          ['delete', 'namespace', world.namespace, world.planNamespace, world.cell],
          ['delete', MANAGED_CLUSTERS, world.cell],
          ['delete', 'nodes', '-l', `kubecell.io/machine-profile=${world.profile}`],
        ]) {
          await stack.cluster.kubectl([...args, '--ignore-not-found', '--wait=false']);
        }
      }
    }
  });

  it('are what a Ready Cell, an Accepted plan and a Ready VirtualCluster show', async function () {
    // Both worlds finish (or fail) before the test does: a world still being built would create
    // its VirtualCluster while the cleanup deletes, and hold its Cell InUse.
    const built = await Promise.allSettled(
      worlds.map((world) => buildWorld(stack, simulation!, world)),
    );
    for (const outcome of built) if (outcome.status === 'rejected') throw outcome.reason;
    const [first, second] = await Promise.all(worlds.map((world) => capture(stack, world)));

    // Two worlds of one run, with other names, UIDs, addresses, NodePorts and times, must
    // normalise alike; otherwise the examples would drift from run to run.
    const unlike = EXAMPLES.flatMap((name) => {
      const a = canonicalYaml(first![name]);
      const b = canonicalYaml(second![name]);
      return a === b ? [] : [`"${name}" differs between two worlds of one run:\n${lineDiff(a, b)}`];
    });
    if (unlike.length > 0) {
      expect.fail(`${unlike.join('\n\n')}\n\nstatus-examples.ts must normalise what differs.`);
    }

    if (updatingExamples()) {
      let doc = readConcepts();
      const rewritten: string[] = [];
      for (const name of EXAMPLES) {
        const documented = canonicalYaml(documentedStatus(doc, name));
        if (documented === canonicalYaml(first![name])) continue;
        doc = withExample(doc, name, await exampleBlock(first![name]));
        rewritten.push(name);
      }
      if (rewritten.length > 0) writeConcepts(doc);
      process.stderr.write(
        `      ${CONCEPTS_FILE}: ${rewritten.length > 0 ? `rewrote ${rewritten.join(', ')}` : 'every example is current'}\n`,
      );
    }

    // Compared by value, so prettier's formatting of the doc does not count.
    const doc = readConcepts();
    const drifted = EXAMPLES.flatMap((name) => {
      const captured = canonicalYaml(first![name]);
      const documented = canonicalYaml(documentedStatus(doc, name));
      return captured === documented
        ? []
        : [
            `${CONCEPTS_FILE} <!-- status-example: ${name} --> (- documented, + this run):\n` +
              lineDiff(documented, captured),
          ];
    });
    if (drifted.length > 0) {
      expect.fail(
        `the status examples differ from this run:\n\n${drifted.join('\n\n')}\n\n` +
          `If the change is intended, rewrite them from a run:\n  ${UPDATE_COMMAND}`,
      );
    }
  });
});
