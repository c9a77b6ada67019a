/**
 * The idle part (bench/idle.ts) in results.md and its targets. The runs measured from issue 24 on
 * (steady state reached by a Metacontroller restart, a lease period and pod churn per point) get
 * issue 24's table and set the targets; older runs stay below as they were measured, marked as
 * history (report-idle-history.ts).
 */
import { caseName } from './idle-cases.js';
import type { IdlePointResult, IdleResult, IdleResults } from './idle-results.js';
import { attributionLines, historyMarkdown } from './report-idle-history.js';
import { kb, type Target } from './report.js';

/** Issue 24's limits (KB = 1,000 bytes, as report.ts's KB: not used here at load, a cycle). */
const MAX_VC_SYNCS_PER_MINUTE = 0.5;
const MAX_VC_SYNC_BYTES = 64_000;
const MAX_SPREAD = 1.1;
const MAX_STATUS_WRITES_WITH_CHURN = 2;
const MAX_CELL_BYTES_PER_NODE = 600;
/** managedFields growing by a byte or more per Node would be per-Node entries. */
const MAX_MANAGED_FIELDS_BYTES_PER_NODE = 1;

const times = (ratio: number) => (Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : '–');
const measuredPoints = (run: IdleResult) => run.points.filter((p) => p.window !== undefined);
const lease = (p: IdlePointResult) => p.leaseSeconds ?? NaN;
const churn = (p: IdlePointResult) => p.churnPerSecond ?? 0;
const nameOf = (p: IdlePointResult) =>
  caseName({ ...p, leaseSeconds: lease(p), churnPerSecond: churn(p) });

/** The latest run measured in the steady state (issue 24 on), whatever its label. */
export function latestSteadyRun(idle: IdleResults | undefined): IdleResult | undefined {
  return Object.values(idle ?? {})
    .filter((run) => run.measured && run.steadyState !== undefined)
    .sort((a, b) => b.date.localeCompare(a.date))[0];
}

/**
 * Bytes per virtualcluster/sync request: after the annotation probe (the same request at every
 * point, whatever the window synced), else the window's mean.
 */
export function requestBytes(p: IdlePointResult): number | undefined {
  if (p.probe && 'meanBytes' in p.probe) return p.probe.meanBytes;
  return p.window?.bytesPerVirtualClusterSync;
}

/**
 * Cell syncs a minute allowed: one per lease renewal plus one from the Cell's own timer (the hook
 * asks for a sync at the lease's expiry, at most once a minute while renewals arrive: D43).
 */
export function cellSyncLimit(leaseSeconds: number): number {
  return Math.round((60 / leaseSeconds + 1) * 100) / 100;
}

/**
 * Ratios of the request bytes between points of the same lease and churn that differ in one
 * dimension (the larger over the smaller): [description, ratio].
 */
export function requestBytesSpread(run: IdleResult): [string, number][] {
  const points = measuredPoints(run);
  const pairs: [string, number][] = [];
  const same = (a: IdlePointResult, b: IdlePointResult) =>
    lease(a) === lease(b) && churn(a) === churn(b);
  for (const a of points) {
    for (const b of points) {
      if (!same(a, b)) continue;
      const ratio = (requestBytes(a) ?? NaN) / (requestBytes(b) ?? NaN);
      const at = `lease ${lease(a)} s, ${churn(a) ? `churn ${churn(a)}/s` : 'no churn'}`;
      if (a.virtualClusters === b.virtualClusters && a.nodes > b.nodes)
        pairs.push([`${a.nodes} ÷ ${b.nodes} Nodes (${a.virtualClusters} VCs, ${at})`, ratio]);
      if (a.nodes === b.nodes && a.virtualClusters > b.virtualClusters)
        pairs.push([
          `${a.virtualClusters} ÷ ${b.virtualClusters} VCs (${a.nodes} Nodes, ${at})`,
          ratio,
        ]);
    }
  }
  return pairs;
}

/** The stored Cell's managedFields bytes per added Node, between the fewest and most Nodes. */
export function managedFieldsGrowth(
  run: IdleResult,
): { text: string; perNode: number } | undefined {
  const points = measuredPoints(run).filter((p) => p.stored !== undefined);
  if (points.length < 2) return undefined;
  const byNodes = [...points].sort((a, b) => a.nodes - b.nodes);
  const small = byNodes[0] as IdlePointResult;
  const large = byNodes[byNodes.length - 1] as IdlePointResult;
  if (large.nodes === small.nodes) return undefined;
  const bytes = (p: IdlePointResult) => p.stored?.cellManagedFieldsBytes ?? NaN;
  const perNode = (bytes(large) - bytes(small)) / (large.nodes - small.nodes);
  return {
    text: `${kb(bytes(small))} at ${small.nodes} Nodes, ${kb(bytes(large))} at ${large.nodes} Nodes: ${perNode.toFixed(2)} bytes per added Node`,
    perNode,
  };
}

const TARGET_NAMES = [
  'Idle, steady state (issue 24): VirtualCluster syncs per VirtualCluster per minute, at every point (lease 60 s and 10 s, with and without pod churn)',
  'Idle, steady state (issue 24): bytes per VirtualCluster sync request (annotation probe), flat from 50 to 1,000 Nodes and from 10 to 100 VCs',
  'Idle, steady state (issue 24): Cell syncs per minute without churn',
  'Idle, steady state (issue 24): Cell status writes per minute with pod churn at the 60-s lease',
  'Idle, steady state (issue 24): the stored Cell (managedFields included) per Node',
  'Idle, steady state (issue 24): the stored Cell’s managedFields do not grow with Nodes',
  'Idle, steady state (issue 29): a VirtualCluster with spec.cellSelector costs what one with cellRef does: its sync request (annotation probe) against the cellRef one’s at the same point',
] as const;

/** What a selector's VirtualCluster may carry more than a cellRef one: its spec and snapshot. */
const SELECTOR_EXTRA_BYTES = 1000;

const probeBytes = (probe: IdlePointResult['probe']) =>
  probe && 'meanBytes' in probe ? probe.meanBytes : undefined;

const each = (list: IdlePointResult[], show: (p: IdlePointResult) => string) =>
  list.length ? list.map((p) => `${nameOf(p)}: ${show(p)}`).join('; ') : 'no such point';

/** A limit every point of `list` must keep: `value(p)` at most `max(p)` (missing: not kept). */
function pointTarget(
  name: string,
  limit: string,
  list: IdlePointResult[],
  figure: {
    show: (p: IdlePointResult) => string;
    value: (p: IdlePointResult) => number | undefined;
    max: (p: IdlePointResult) => number;
  },
): Target {
  return {
    name,
    limit,
    measured: each(list, figure.show),
    met:
      list.length === 0
        ? 'not measured'
        : list.every((p) => (figure.value(p) ?? Infinity) <= figure.max(p)),
  };
}

function requestBytesTarget(name: string, run: IdleResult): Target {
  const points = measuredPoints(run);
  const spread = requestBytesSpread(run);
  const bounded = pointTarget(name, '', points, {
    show: (p) => kb(requestBytes(p)),
    value: requestBytes,
    max: () => MAX_VC_SYNC_BYTES,
  });
  return {
    ...bounded,
    limit: `≤ 64 KB, and within ${Math.round((MAX_SPREAD - 1) * 100)} % between sizes`,
    measured:
      bounded.measured +
      (spread.length
        ? `; ratios ${spread.map(([what, ratio]) => `${what} ${times(ratio)}`).join(', ')}`
        : '; no two points differ in one dimension only'),
    met:
      bounded.met === true
        ? spread.length > 0 && spread.every(([, ratio]) => ratio <= MAX_SPREAD)
        : bounded.met,
  };
}

export function idleTargets(idle: IdleResults | undefined): Target[] {
  const run = latestSteadyRun(idle);
  if (!run)
    return TARGET_NAMES.map((name) => ({
      name,
      limit: '—',
      measured: 'not run since issue 24 (older idle runs in results.json measured older code)',
      met: 'not measured',
    }));
  const points = measuredPoints(run);
  const growth = managedFieldsGrowth(run);
  const [syncs, bytes, cellSyncs, writes, perNode, managedFields, selector] = TARGET_NAMES;
  const withSelector = points.filter((p) => p.probeSelector !== undefined);
  return [
    pointTarget(syncs, `≤ ${MAX_VC_SYNCS_PER_MINUTE}`, points, {
      show: (p) => String(p.window?.virtualClusterSyncsPerVirtualClusterPerMinute),
      value: (p) => p.window?.virtualClusterSyncsPerVirtualClusterPerMinute,
      max: () => MAX_VC_SYNCS_PER_MINUTE,
    }),
    requestBytesTarget(bytes, run),
    pointTarget(
      cellSyncs,
      '≤ 60 ÷ lease + 1 (one per renewal and one from the Cell’s own timer, D43)',
      points.filter((p) => churn(p) === 0),
      {
        show: (p) => `${p.window?.cellSyncsPerCellPerMinute} (≤ ${cellSyncLimit(lease(p))})`,
        value: (p) => p.window?.cellSyncsPerCellPerMinute,
        max: (p) => cellSyncLimit(lease(p)),
      },
    ),
    pointTarget(
      writes,
      `≤ ${MAX_STATUS_WRITES_WITH_CHURN}`,
      points.filter((p) => churn(p) > 0 && lease(p) === 60),
      {
        show: (p) => String(p.cellWrites?.statusPerMinute ?? '–'),
        value: (p) => p.cellWrites?.statusPerMinute,
        max: () => MAX_STATUS_WRITES_WITH_CHURN,
      },
    ),
    pointTarget(perNode, '≤ 0.6 KB per Node', points, {
      show: (p) => `${kb(p.stored?.cellBytes)}, ${kb(p.stored?.cellBytesPerNode)} per Node`,
      value: (p) => p.stored?.cellBytesPerNode,
      max: () => MAX_CELL_BYTES_PER_NODE,
    }),
    {
      name: managedFields,
      limit: `< ${MAX_MANAGED_FIELDS_BYTES_PER_NODE} byte per added Node`,
      measured: growth?.text ?? 'needs two Node counts',
      met: growth ? growth.perNode < MAX_MANAGED_FIELDS_BYTES_PER_NODE : 'not measured',
    },
    pointTarget(
      selector,
      `≤ the cellRef one’s + ${kb(SELECTOR_EXTRA_BYTES)} (its own spec and status.resolved.placement), and no more syncs (the syncs target counts both)`,
      withSelector,
      {
        show: (p) => `${kb(probeBytes(p.probeSelector))} vs ${kb(probeBytes(p.probe))}`,
        value: (p) => probeBytes(p.probeSelector),
        max: (p) => (probeBytes(p.probe) ?? -Infinity) + SELECTOR_EXTRA_BYTES,
      },
    ),
  ];
}

function steadyIntro(run: IdleResult): string {
  const s = run.setup;
  return `Metacontroller ${run.metacontrollerVersion} with \`${run.metacontrollerArgs.join(' ')}\`${run.effective ? ` (it logged client-go-qps ${run.effective.clientGoQps ?? '?'}, burst ${run.effective.clientGoBurst ?? '?'}, workers ${run.effective.workers ?? '?'})` : ''}; each point in a fresh stack with one Cell. Steady state: ${run.steadyState ?? ''}. The lease period is both the ManagedCluster's spec.leaseDurationSeconds and the renewal interval, as OCM's agent renews (ocm v1.3.1 pkg/registration/spoke/lease/lease_controller.go). Churn: pods created (set Running) and deleted on the profile Nodes at that rate, in a namespace that is not a host namespace, ${s.churnKeep ?? '?'} kept alive. Measured over ${s.windowSeconds} s once the VirtualCluster sync rate agreed in two ${s.sliceSeconds}-s slices in a row. Bytes per VirtualCluster sync request: the requests after one VirtualCluster was annotated (the window's mean in brackets, when it synced any). Cell status writes: new resourceVersions of the Cell that changed its status, on a watch. KB = 1,000 bytes.`;
}

function steadyRow(p: IdlePointResult): string {
  const size = `${p.nodes} × ${p.virtualClusters}`;
  const w = p.window;
  if (!w)
    return `| ${lease(p)} | ${churn(p)} | ${size} | failed: ${p.error ?? 'no window'} | | | | | | |`;
  const windowBytes =
    w.bytesPerVirtualClusterSync === undefined ? '' : ` (${kb(w.bytesPerVirtualClusterSync)})`;
  const cellLimit = churn(p) === 0 ? ` (≤ ${cellSyncLimit(lease(p))})` : '';
  const stored = p.stored;
  return `| ${lease(p)} | ${churn(p)} | ${size} | **${w.virtualClusterSyncsPerVirtualClusterPerMinute}** | **${kb(requestBytes(p))}**${windowBytes} | **${w.cellSyncsPerCellPerMinute}**${cellLimit} | **${p.cellWrites?.statusPerMinute ?? '–'}** | **${kb(stored?.cellBytesPerNode)}** | ${kb(stored?.cellBytes)} | ${kb(stored?.cellManagedFieldsBytes)} | ${p.settled ? 'yes' : '**no**'}${p.notAllReady ? `; **not all VCs Ready**: ${p.notAllReady}` : ''} |`;
}

function detailLine(p: IdlePointResult): string {
  const w = p.window;
  if (!w) return `- ${nameOf(p)}: failed: ${p.error ?? 'no window'}.`;
  const cpu = (name: string) => (w?.cpuSecondsPerMinute[name] ?? NaN).toFixed(1);
  const apiserver = (
    (w?.cpuSecondsPerMinute.kubeApiserver ?? NaN) + (w?.cpuSecondsPerMinute.etcd ?? NaN)
  ).toFixed(1);
  const quiet = p.quiet
    ? `quiet ${p.quiet.seconds} s (renewals paused): ${p.quiet.virtualClusterSyncsPerVirtualClusterPerMinute} VC syncs/VC/min, ${p.quiet.cellSyncsPerCellPerMinute} Cell syncs/min, ${p.quiet.cellWrites} Cell writes`
    : `no quiet window (${p.quietSkipped ?? 'not asked for'})`;
  const churnText = p.churn
    ? `churn: ${p.churn.created} created, ${p.churn.deleted} deleted in ${p.churn.seconds} s (${p.churn.createdPerSecond}/s), ${p.churn.lateTicks} late ticks${Object.keys(p.churn.errors).length ? `, errors ${JSON.stringify(p.churn.errors)}` : ''}`
    : 'no churn';
  return `- ${nameOf(p)}: Cell writes ${p.cellWrites?.total ?? '–'} (status ${p.cellWrites?.status ?? '–'}), liveness record writes ${p.cellWrites?.livenessRecord ?? '–'}; bytes per Cell sync ${kb(w?.bytesPerCellSync)}; ${churnText}; ${quiet}; CPU s/min Metacontroller / hook server / apiserver + etcd ${cpu('metacontroller')} / ${cpu('hookServer')} / ${apiserver}; settle slices ${JSON.stringify(p.settleSlices)}; times (s): stack ${p.seconds.stackStart}, Cell Ready ${p.seconds.cellReady}, VCs Ready ${p.seconds.virtualClustersReady}, Metacontroller restart ${p.seconds.restart ?? '–'}, settle ${p.seconds.settle}, whole point ${p.seconds.total}.`;
}

function steadyMarkdown(run: IdleResult): string[] {
  const title = run.label === 'issue 24' ? 'issue 24' : `issue 24: ${run.label}`;
  const lines = [
    `### ${title} (${run.date.slice(0, 16).replace('T', ' ')}${run.gitCommit ? `, commit ${run.gitCommit}` : ''})`,
    '',
    steadyIntro(run),
    '',
    '| Lease (s) | Churn (pods/s) | Nodes × VCs | VC syncs / VC / min (≤ 0.5) | Bytes per VC sync request (≤ 64 KB) | Cell syncs / min (≤ 60 ÷ lease + 1 without churn) | Cell status writes / min (≤ 2 with churn at the 60-s lease) | Stored Cell per Node (≤ 0.6 KB) | Stored Cell | of which managedFields | Settled |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...run.points.map(steadyRow),
    '',
  ];
  const spread = requestBytesSpread(run);
  const growth = managedFieldsGrowth(run);
  lines.push(
    `Bytes per VirtualCluster sync request, larger point ÷ smaller (goal within 10 %): ${spread.map(([what, ratio]) => `${what} ${times(ratio)}`).join('; ') || 'no two points differ in one dimension only'}. The stored Cell's managedFields: ${growth?.text ?? 'needs two Node counts'} (must not grow per Node).`,
    '',
    ...run.points.map(detailLine),
    '',
    'What each VirtualCluster sync followed (attribution by timing, see bench/idle-changes.ts):',
    '',
    ...attributionLines(run, nameOf),
    '',
  );
  return lines;
}

export function idleMarkdown(idle: IdleResults): string[] {
  const runs = Object.values(idle);
  const steady = runs
    .filter((run) => run.steadyState !== undefined)
    .sort((a, b) => b.date.localeCompare(a.date));
  const older = runs
    .filter((run) => run.steadyState === undefined)
    .sort((a, b) => a.date.localeCompare(b.date));
  return [
    '## Idle cost through Metacontroller',
    '',
    ...steady.flatMap(steadyMarkdown),
    ...older.flatMap(historyMarkdown),
  ];
}
