// A quiet cluster costs (almost) nothing: once every sample has converged and nothing outside
// changes, no object is synced more often than its resync period and the changes KubeCell makes
// itself explain. A hot loop (a status that differs on every sync, a child that never matches)
// shows up here as hundreds of calls a minute and fails the test.
//
// The counts are the hook server's own (`kubecell_hook_requests_total` on /metrics), i.e. the
// sync calls Metacontroller really made.
import { expect } from 'chai';
import path from 'node:path';
import { LEASE_WATCH_MIN_SECONDS } from '../../../hooks/cell/liveness.js';
import { startSimulation, type Simulation } from '../../../harness/simulate/index.js';
import { startKubeCellStack, type KubeCellStack } from '../../../harness/cluster/kubecell-stack.js';
import { repoRoot } from '../../../harness/cluster/paths.js';
import { CLUSTER_SETUP_TIMEOUT_MS } from '../shared-cluster.js';
import { poll } from '../../../harness/poll.js';
import { hookCalls, kubectl, listObjects, watching, type HookCalls } from './support.js';

/** The quiet window; long against the shortest timer (a Cell's lease watch, at least 60 s apart). */
const WINDOW_SECONDS = 90;

/** resyncPeriodSeconds of each controller in metacontroller/ (none: only changes and resyncAfter). */
const RESYNC_PERIOD_SECONDS: Record<string, number | undefined> = {
  cell: 1800,
  'class-usage': 300,
  'host-namespace': 600,
};

/** How often an unchanged Cell status is rewritten anyway: status.observedAt's heartbeat. */
const CELL_HEARTBEAT_SECONDS = 300;

function syncsIn(before: HookCalls, after: HookCalls, controller: string): number {
  const key = `${controller}/sync`;
  return (after.ok.get(key) ?? 0) - (before.ok.get(key) ?? 0);
}

function failuresIn(before: HookCalls, after: HookCalls): string[] {
  return [...after.failed.entries()]
    .filter(([key, count]) => count > (before.failed.get(key) ?? 0))
    .map(([key, count]) => `${key}: ${count - (before.failed.get(key) ?? 0)}`);
}

describe('e2e: an idle cluster is quiet', function () {
  this.timeout(10 * 60_000);
  let stack: KubeCellStack;
  let simulation: Simulation | undefined;

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    stack = await startKubeCellStack();
    // A lease long enough that the Cells stay Ready while nobody renews it in the window.
    // KubevirtMachine, the kind the Cluster API sample pool clones its KubevirtMachineTemplate
    // into, has no pinned upstream CRD: a permissive stand-in, as `npm run local-up --
    // --simulate` installs.
    simulation = await startSimulation(stack.cluster.kubeconfigPath, {
      ocm: { leaseDurationSeconds: 600 },
      k3k: { intervalMs: 500 },
      clusterAPIStandInCrds: true,
    });
    await kubectl(stack, ['apply', '-f', path.join(repoRoot, 'samples')]);
    await poll(
      'every sample Cell and VirtualCluster Ready, every GPUCellPool Ready',
      async () => {
        const cells = await listObjects(stack, 'cells');
        const virtualClusters = await listObjects(stack, 'virtualclusters');
        const pools = await listObjects(stack, 'gpucellpools');
        const notReady = [
          ...[...cells, ...virtualClusters]
            .filter((object) => object.status?.phase !== 'Ready')
            .map(
              (object) => `${object.kind} ${object.metadata.name}: ${object.status?.phase ?? '-'}`,
            ),
          ...pools
            .filter(
              (pool) =>
                !pool.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
            )
            .map((pool) => `GPUCellPool ${pool.metadata.name}: not Ready`),
        ];
        return notReady.length === 0 ? { value: true } : { notYet: notReady.join('; ') };
      },
      watching(stack, 180_000),
    );
    // Nothing outside KubeCell changes from here on.
    await simulation.stop();
    simulation = undefined;
    // Let what the last changes started finish (a sync answered with a changed status causes
    // one more, which must then find nothing to change).
    await new Promise((resolve) => setTimeout(resolve, 10_000));
  });

  after(async function () {
    this.timeout(60_000);
    await simulation?.stop();
    await stack?.stop({ keepLogs: this.currentTest?.state === 'failed' });
  });

  it(`makes no more syncs in ${WINDOW_SECONDS} s than resync periods and KubeCell's own changes explain`, async function () {
    const objects = {
      cell: (await listObjects(stack, 'cells')).length,
      virtualcluster: (await listObjects(stack, 'virtualclusters')).length,
      plan: (await listObjects(stack, 'virtualclusterplans')).length,
      'class-usage': (await listObjects(stack, 'virtualnodeclasses')).length,
      // Only VirtualClusters without kubecell.io/cell (a selector's, before resolution).
      'cell-label': (await listObjects(stack, 'virtualclusters', { selector: '!kubecell.io/cell' }))
        .length,
      'host-namespace': (
        await listObjects(stack, 'namespaces', { selector: 'kubecell.io/host-namespace=true' })
      ).length,
      gpucellpool: (await listObjects(stack, 'gpucellpools')).length,
    };
    const before = await hookCalls(stack);
    await new Promise((resolve) => setTimeout(resolve, WINDOW_SECONDS * 1000));
    const after = await hookCalls(stack);

    const syncs = Object.fromEntries(
      Object.keys(objects).map((controller) => [controller, syncsIn(before, after, controller)]),
    );
    console.log(
      `      syncs in ${WINDOW_SECONDS} s (objects): ` +
        Object.entries(syncs)
          .map(([c, n]) => `${c} ${n} (${objects[c as keyof typeof objects]})`)
          .join(', '),
    );
    expect(failuresIn(before, after), 'hook calls that did not answer 200').to.deep.equal([]);

    // Each object: one sync per resync period started in the window, plus one.
    const periodic = (controller: string, count: number): number => {
      const period = RESYNC_PERIOD_SECONDS[controller];
      return count * ((period === undefined ? 0 : Math.ceil(WINDOW_SECONDS / period)) + 1);
    };
    for (const controller of ['class-usage', 'cell-label', 'host-namespace', 'gpucellpool']) {
      const count = objects[controller as keyof typeof objects];
      expect(syncs[controller], `${controller} syncs for ${count} objects`).to.be.at.most(
        periodic(controller, count),
      );
    }
    // A Cell is synced by the resyncs it asks for (its lease's expiry, at least 60 s away while
    // renewals arrive on time, LEASE_WATCH_MIN_SECONDS; its heartbeat) and by its resync period
    // (a safety net), but its status is written only when something in it changes or the
    // heartbeat (5 minutes) falls due, and its own status writes do not sync it
    // (ignoreStatusChanges). Before issue 14 every sync wrote new observation times.
    const cellWrites = Math.ceil(WINDOW_SECONDS / CELL_HEARTBEAT_SECONDS);
    const cellAsked = Math.ceil(WINDOW_SECONDS / LEASE_WATCH_MIN_SECONDS);
    const cellPeriods = Math.ceil(WINDOW_SECONDS / (RESYNC_PERIOD_SECONDS.cell ?? 60));
    expect(syncs.cell, `cell syncs for ${objects.cell} Cells`).to.be.at.most(
      objects.cell * (cellAsked + cellPeriods + 1),
    );
    // VirtualClusters and plans relate to their Cell (not its Nodes, not its other
    // VirtualClusters), and a Ready VirtualCluster asks for no resync: an idle one is synced at
    // most once per Cell status write (a heartbeat), plus one; a plan also once at its expiry.
    // Before issue 14: about 15 per VirtualCluster in this window.
    expect(
      syncs.virtualcluster,
      `virtualcluster syncs for ${objects.virtualcluster} objects`,
    ).to.be.at.most(objects.virtualcluster * (cellWrites + 1));
    expect(syncs.plan, `plan syncs for ${objects.plan} objects`).to.be.at.most(
      objects.plan * (cellWrites + 2),
    );
  });
});
