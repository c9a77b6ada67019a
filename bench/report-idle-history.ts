/**
 * Idle runs measured before issue 24 (bench/report-idle.ts), rendered as they were written then
 * and marked as history: they measured older code, one lease setting for every point, and the
 * rules Metacontroller had cached before the VirtualClusters were resolved. Also the attribution
 * lines both kinds of run share.
 */
import type { IdlePointResult, IdleResult } from './idle-results.js';
import { kb } from './report.js';

const pointName = (p: { nodes: number; virtualClusters: number }) =>
  `${p.nodes} Nodes × ${p.virtualClusters} VCs`;

/** What each VirtualCluster sync followed, one line per point. */
export function attributionLines(
  run: IdleResult,
  name: (p: IdlePointResult) => string = pointName,
): string[] {
  const lines: string[] = [];
  for (const p of run.points) {
    const a = p.attribution;
    if (!a) continue;
    const after = Object.entries(a.virtualClusterSyncsAfter)
      .sort(([, x], [, y]) => y - x)
      .map(
        ([what, count]) =>
          `${count} after ${what}${a.virtualClusterSyncsPerChange[what] !== undefined ? ` (${a.virtualClusterSyncsPerChange[what]} per change)` : ''}`,
      )
      .join('; ');
    const paths = Object.entries(a.changedPaths)
      .map(
        ([kind, changed]) =>
          `${kind}: ${Object.entries(changed)
            .slice(0, 6)
            .map(([path, count]) => `\`${path}\` ${count}`)
            .join(', ')}`,
      )
      .join('; ');
    lines.push(
      `- ${name(p)}: changes in the window ${JSON.stringify(a.changes)}; Cell writes: ${
        Object.entries(a.cellWrites)
          .map(([what, count]) => `${count} × ${what}`)
          .join(', ') || 'none'
      }; what changed (writes): ${paths || 'nothing'}. VirtualCluster syncs: ${after || 'none'}. Per lease cycle ${a.virtualClusterSyncsPerLeaseCycle ?? '–'}, per 10 s quiet ${a.virtualClusterSyncsPer10sQuiet ?? '–'}; median lag ${a.medianLagSeconds ?? '–'} s.${p.probe ? ` Annotation probe: ${'meanBytes' in p.probe ? `${p.probe.syncs} VirtualCluster syncs, ${kb(p.probe.meanBytes)} each` : p.probe.error}.` : ''}`,
    );
  }
  return lines;
}

/**
 * Bytes per virtualcluster/sync request as these runs reported them: the window's mean, or, when
 * the window synced no VirtualCluster, the requests that followed the annotation probe.
 */
function vcSyncBytes(p: IdlePointResult): number | undefined {
  if (p.window?.bytesPerVirtualClusterSync !== undefined)
    return p.window.bytesPerVirtualClusterSync;
  return p.probe && 'meanBytes' in p.probe ? p.probe.meanBytes : undefined;
}

function historyRow(p: IdlePointResult): string {
  const w = p.window;
  if (!w) return `| ${pointName(p)} | failed: ${p.error ?? 'no window'} | | | | | | | | | | | | |`;
  const perController = Object.entries(w.perController)
    .filter(([, cost]) => cost.requestBytesPerMinute > 0)
    .sort(([, a], [, b]) => b.requestBytesPerMinute - a.requestBytesPerMinute)
    .map(([controller, cost]) => `${controller} ${kb(cost.requestBytesPerMinute)}`)
    .join(', ');
  const cpu = (name: string) => (w.cpuSecondsPerMinute[name] ?? NaN).toFixed(1);
  const apiserver = (
    (w.cpuSecondsPerMinute.kubeApiserver ?? NaN) + (w.cpuSecondsPerMinute.etcd ?? NaN)
  ).toFixed(1);
  return `| ${pointName(p)} | **${w.virtualClusterSyncsPerVirtualClusterPerMinute}** | ${p.quiet?.virtualClusterSyncsPerVirtualClusterPerMinute ?? '–'} | **${w.cellSyncsPerCellPerMinute}** | ${p.quiet?.cellSyncsPerCellPerMinute ?? '–'} | **${kb(vcSyncBytes(p))}**${w.bytesPerVirtualClusterSync === undefined ? ' (probe)' : ''} | ${kb(w.bytesPerCellSync)} | ${perController} | ${kb(p.stored?.cellBytes)} (${kb(p.stored?.cellManagedFieldsBytes)}) | **${kb(p.stored?.cellBytesPerNode)}** | ${cpu('metacontroller')} / ${cpu('hookServer')} / ${apiserver} | ${w.virtualClusterQueue ? `${w.virtualClusterQueue.meanWaitSeconds}, ${w.virtualClusterQueue.depthAtEnd}` : '–'} | ${p.settled ? 'yes' : '**no**'}${p.notAllReady ? `; **not all VCs Ready**: ${p.notAllReady}` : ''} | ${p.seconds.stackStart}, ${p.seconds.cellReady}, ${p.seconds.virtualClustersReady}, ${p.seconds.settle}, ${p.seconds.total} |`;
}

/** One run measured before issue 24, its table as it was, under a heading saying so. */
export function historyMarkdown(run: IdleResult): string[] {
  return [
    `### ${run.label} (${run.date.slice(0, 16).replace('T', ' ')}${run.gitCommit ? `, commit ${run.gitCommit}` : ''}): history, measured on older code (issue 14)`,
    '',
    `Kept as measured then, on the code of commit ${run.gitCommit ?? '?'}: before issue 24 (VirtualClusters related the Cell itself, one lease setting for every point, no pod churn, no restart of Metacontroller); not comparable with issue 24's table above.`,
    '',
    `Metacontroller ${run.metacontrollerVersion} with \`${run.metacontrollerArgs.join(' ')}\`${run.effective ? ` (it logged client-go-qps ${run.effective.clientGoQps ?? '?'}, burst ${run.effective.clientGoBurst ?? '?'}, workers ${run.effective.workers ?? '?'})` : ''}; one Cell, its lease renewed every ${run.setup.leaseRenewSeconds ?? '?'} s (duration ${run.setup.leaseDurationSeconds ?? '?'} s); measured over ${run.setup.windowSeconds} s once the VirtualCluster sync rate agreed in two ${run.setup.sliceSeconds}-s slices in a row; then ${run.setup.quietSeconds} s with the renewal paused (quiet). KB = 1,000 bytes.`,
    '',
    '| Point | VC syncs / VC / min | quiet | Cell syncs / min | quiet | Bytes per VC sync | Bytes per Cell sync | Request bytes / min by controller | Stored Cell (managedFields) | per Node | CPU s / min: Metacontroller / hook server / apiserver + etcd | VC queue: mean wait (s), depth at the end | Settled | Times (s): stack, Cell Ready, VCs Ready, settle, whole point |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...run.points.map(historyRow),
    '',
    'What each VirtualCluster sync followed (attribution by timing, see bench/idle.ts):',
    '',
    ...attributionLines(run),
    '',
  ];
}
