/**
 * The idle cost of Cells on clusters joined through OCM (bench/remote.ts, step 3): the
 * VirtualClusters spread over the Cells, waited for until Ready and until the VirtualCluster sync
 * rate settled, then one window counted as bench/idle.ts counts (bench/idle-metrics.ts), plus
 * what is particular to a remote Cell: the `delivery` controller's syncs per ManagedCluster, the
 * ManifestWorks' sizes, and what changed on the hub (watches), to tell what each sync followed.
 */
import { hostNamespaceManifest, virtualClusterManifest } from '../harness/manifests.js';
import { resourcePath } from '../harness/simulate/index.js';
import {
  allVirtualClustersReady,
  bytesOf,
  finishWindow,
  probeVirtualClusterSync,
  settleSyncRate,
  startWindow,
  storedCell,
  type StoredCell,
  type WindowFigures,
} from './idle-metrics.js';
import { attribute, ChangeLog, hookCallLines, type Attribution } from './idle-changes.js';
import { round } from './stats.js';
import { sleep } from '../harness/poll.js';
import type { RemoteOptions, RemoteRun } from './remote.js';

export interface RemoteIdleCluster {
  managedCluster: string;
  cell: string;
  nodes: number;
  virtualClusters: number;
  stored?: StoredCell;
  /** The ManifestWorks in its hub namespace: count and mean bytes as stored (GET, JSON). */
  works?: {
    agentWorkBytes: number;
    virtualClusterWorks: number;
    meanVirtualClusterWorkBytes: number;
  };
}

export interface RemoteIdle {
  clusters: RemoteIdleCluster[];
  virtualClusters: number;
  seconds: { virtualClustersReady: number; settle: number; window: number };
  notAllReady?: string;
  settled: boolean;
  settleSlices: number[];
  window?: WindowFigures;
  /** The delivery controller (a DecoratorController on ManagedClusters) in the window. */
  delivery?: { syncsPerManagedClusterPerMinute: number; meanBytesPerSync?: number };
  /** Changes seen on the hub's watches in the window, per minute, by kind. */
  changesPerMinute?: Record<string, number>;
  attribution?: Attribution;
  probe?: { syncs: number; meanBytes: number } | { error: string };
}

function watchedKinds(run: RemoteRun): [string, string][] {
  return [
    ['ManagedCluster', '/apis/cluster.open-cluster-management.io/v1/managedclusters'],
    ['Cell', '/apis/kubecell.io/v1alpha1/namespaces/kubecell-system/cells'],
    ['VirtualCluster', '/apis/kubecell.io/v1alpha1/virtualclusters'],
    ['ManifestWork', '/apis/work.open-cluster-management.io/v1/manifestworks'],
    ...run.clusters.map((cluster): [string, string] => [
      'Lease',
      `/apis/coordination.k8s.io/v1/namespaces/${cluster.managed.name}/leases`,
    ]),
  ];
}

/** Every VirtualCluster but the one measured before: `perCluster` on each Cell. */
async function createVirtualClusters(run: RemoteRun, perCluster: number): Promise<void> {
  const wanted = run.clusters.flatMap((cluster) =>
    Array.from({ length: perCluster }, (_, i) => ({
      cluster,
      namespace: `${cluster.prefix}-${String(i).padStart(3, '0')}`,
    })),
  );
  const existing = new Set((await run.client.list(VCS)).map((vc) => vc.metadata.namespace ?? ''));
  const missing = wanted.filter((entry) => !existing.has(entry.namespace));
  for (const { namespace } of missing)
    await run.client.apply(hostNamespaceManifest(namespace), 'bench-user');
  for (const { cluster, namespace } of missing) {
    await run.client.create(
      resourcePath({ apiVersion: 'kubecell.io/v1alpha1', resource: 'virtualclusters', namespace }),
      virtualClusterManifest(namespace, cluster.world.virtualCluster, {
        cell: cluster.world.cell,
        klass: cluster.world.klass,
      }),
      'bench-user',
    );
  }
}

const VCS = resourcePath({ apiVersion: 'kubecell.io/v1alpha1', resource: 'virtualclusters' });

async function clusterFigures(
  run: RemoteRun,
  options: RemoteOptions,
): Promise<RemoteIdleCluster[]> {
  const out: RemoteIdleCluster[] = [];
  for (const cluster of run.clusters) {
    const works = await run.client.list(
      resourcePath({
        apiVersion: 'work.open-cluster-management.io/v1',
        resource: 'manifestworks',
        namespace: cluster.managed.name,
      }),
    );
    const vcWorks = works.filter((work) => work.metadata.name.startsWith('kubecell-vc-'));
    const agentWork = works.find((work) => work.metadata.name === 'kubecell-cell-agent');
    out.push({
      managedCluster: cluster.managed.name,
      cell: cluster.world.cell,
      nodes: options.nodesPerCluster,
      virtualClusters: options.virtualClustersPerCluster,
      stored: await storedCell(
        run.connection,
        { namespace: cluster.world.cellNamespace, name: cluster.world.cell },
        options.nodesPerCluster,
      ),
      works: {
        agentWorkBytes: agentWork ? bytesOf(agentWork) : 0,
        virtualClusterWorks: vcWorks.length,
        meanVirtualClusterWorkBytes: Math.round(
          vcWorks.reduce((total, work) => total + bytesOf(work), 0) / Math.max(1, vcWorks.length),
        ),
      },
    });
  }
  return out;
}

function perMinuteByKind(changes: { kind: string }[], seconds: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const change of changes) counts[change.kind] = (counts[change.kind] ?? 0) + 1;
  return Object.fromEntries(
    Object.entries(counts).map(([kind, count]) => [kind, round(count / (seconds / 60), 2)]),
  );
}

export async function measureRemoteIdle(
  run: RemoteRun,
  options: RemoteOptions,
): Promise<RemoteIdle> {
  const { stack, client, log } = { ...run, log: options.log };
  const total = options.clusters * options.virtualClustersPerCluster;
  const result: RemoteIdle = {
    clusters: [],
    virtualClusters: total,
    seconds: { virtualClustersReady: 0, settle: 0, window: 0 },
    settled: false,
    settleSlices: [],
  };
  const readyStart = Date.now();
  await createVirtualClusters(run, options.virtualClustersPerCluster);
  const waited = await allVirtualClustersReady(stack, client, {
    count: total,
    timeoutSeconds: options.readyTimeoutSeconds,
    log: (line) => log(`  ${line}`),
  });
  if (waited.notAllReady !== undefined) result.notAllReady = waited.notAllReady;
  result.seconds.virtualClustersReady = round((Date.now() - readyStart) / 1000);
  log(`  ${total} remote VirtualClusters Ready (${result.seconds.virtualClustersReady} s)`);
  // The steady state, as bench/idle.ts measures it: Metacontroller caches each customize answer
  // for 20 minutes per UID and generation (pkg/controller/common/customize/manager.go), so
  // VirtualClusters created a moment ago would still relate their Cell (every lease renewal a
  // sync, every request carrying its Nodes) rather than its liveness record.
  const restartStart = Date.now();
  await stack.restartMetacontroller();
  log(
    `  Metacontroller restarted for the steady-state rules (${round((Date.now() - restartStart) / 1000)} s)`,
  );
  const changes = new ChangeLog(
    run.connection,
    { cellNamespace: 'kubecell-system', leaseNamespace: '' },
    log,
    watchedKinds(run),
  );
  try {
    changes.start();
    const settled = await settleSyncRate(stack, total, options);
    Object.assign(result, { settled: settled.settled, settleSlices: settled.slices });
    result.seconds.settle = settled.seconds;
    const start = await startWindow(stack, run.cpu);
    await sleep(options.windowSeconds * 1000);
    const { window, to } = await finishWindow(stack, start, run.cpu, {
      virtualClusters: total,
      cells: options.clusters,
    });
    result.window = window;
    result.seconds.window = window.seconds;
    const deliverySyncs = window.hookCallsPerMinute['delivery/sync'] ?? 0;
    const deliveryBytes = window.requestBytes['delivery/sync']?.meanBytes;
    result.delivery = {
      syncsPerManagedClusterPerMinute: round(deliverySyncs / options.clusters, 2),
      ...(deliveryBytes === undefined ? {} : { meanBytesPerSync: deliveryBytes }),
    };
    result.changesPerMinute = perMinuteByKind(changes.between(start.at, to), window.seconds);
    const vcSyncs = hookCallLines(stack.hookServer.logFile, start.logFrom).filter(
      (call) => call.controller === 'virtualcluster' && call.hook === 'sync',
    );
    result.attribution = attribute(changes.changes, vcSyncs, { from: start.at, to });
    result.clusters = await clusterFigures(run, options);
    const first = run.clusters[0]!;
    result.probe = await probeVirtualClusterSync(stack, client, {
      namespace: `${first.prefix}-000`,
      name: first.world.virtualCluster,
    });
  } finally {
    changes.stop();
  }
  return result;
}
