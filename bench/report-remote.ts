/** The remote part (bench/remote.ts) in results.md and its targets. */
import { kb, KB, type Target } from './report.js';
import type { RemoteResult } from './remote.js';

const secondsText = (value: number | undefined) => (value === undefined ? '–' : value.toFixed(1));

/** Issue 25: Ready within 10 s of k3k serving, the simulated k3k's serving time to Ready. */
function servedToReadyTarget(name: string, remote: RemoteResult): Target {
  const seconds = remote.remote?.waits.servedToReady;
  if (seconds === undefined)
    return { name, limit: '≤ 10 s', measured: 'not measured', met: 'not measured' };
  const sync = remote.setup.ocm.statusSyncIntervalSeconds;
  return {
    name,
    limit: '≤ 10 s',
    measured: `${secondsText(seconds)} s (status sync every ${sync} s)`,
    met: seconds <= 10,
  };
}

export function remoteTargets(remote: RemoteResult | undefined): Target[] {
  const names = [
    'Remote Cell: apply → Ready of one VirtualCluster through OCM’s work agent and the cell agent, beside a local Cell (same run)',
    'Remote Cell: k3k served → VirtualCluster Ready (the cell agent’s watch, the work agent’s status sync)',
    'Remote Cells (2 clusters): VirtualCluster syncs per VirtualCluster per minute',
    'Remote Cells (2 clusters): bytes per VirtualCluster sync request',
    'Remote Cells (2 clusters): the stored Cell per Node',
    'Remote Cells (2 clusters): Cell syncs per Cell per minute',
  ];
  if (!remote)
    return names.map((name) => ({ name, limit: '—', measured: 'not run', met: 'not measured' }));
  const w = remote.idle?.window;
  const bytes =
    w?.bytesPerVirtualClusterSync ??
    (remote.idle?.probe && 'meanBytes' in remote.idle.probe
      ? remote.idle.probe.meanBytes
      : undefined);
  const perNode = (remote.idle?.clusters ?? []).map((c) => c.stored?.cellBytesPerNode ?? NaN);
  const notMeasured = { measured: 'not measured', met: 'not measured' as const };
  return [
    {
      name: names[0] ?? '',
      limit: '—',
      measured:
        remote.local && remote.remote
          ? `remote ${secondsText(remote.remote.seconds)} s, local ${secondsText(remote.local.seconds)} s: ${remote.ratio}×`
          : `not measured: ${remote.errors.join('; ')}`,
      met: remote.remote ? 'no limit' : 'not measured',
    },
    servedToReadyTarget(names[1] ?? '', remote),
    ...(w
      ? [
          {
            name: names[2] ?? '',
            limit: '≤ 0.5',
            measured: String(w.virtualClusterSyncsPerVirtualClusterPerMinute),
            met: w.virtualClusterSyncsPerVirtualClusterPerMinute <= 0.5,
          },
          {
            name: names[3] ?? '',
            limit: '≤ 64 KB',
            measured: `${kb(bytes)}${w.bytesPerVirtualClusterSync === undefined ? ' (annotation probe)' : ''}`,
            met: (bytes ?? Infinity) <= 64 * KB,
          },
          {
            name: names[4] ?? '',
            // Issue 24's bound: a remote Cell lists every Node too (the cell agent reports them).
            limit: '≤ 0.6 KB per Node',
            measured: perNode.map((bytesPerNode) => kb(bytesPerNode)).join(', '),
            met: perNode.length > 0 && perNode.every((value) => value <= 0.6 * KB),
          },
          {
            name: names[5] ?? '',
            limit: '≤ 2',
            measured: String(w.cellSyncsPerCellPerMinute),
            met: w.cellSyncsPerCellPerMinute <= 2,
          },
        ]
      : names.slice(2).map((name) => ({ name, limit: '—', ...notMeasured }))),
  ];
}

/** `20.82 s (watch)`: each pass's end and why it ran (older runs recorded no reason). */
function passesText(remote: NonNullable<RemoteResult['remote']>): string {
  const triggers = remote.agentPassTriggers ?? [];
  return (
    remote.agentPasses
      .map((at, i) => `${at} s${triggers[i] ? ` (${triggers[i]})` : ''}`)
      .join(', ') || '–'
  );
}

function applyMarkdown(remote: RemoteResult): string[] {
  const at = (step: string) =>
    remote.remote?.milestones[step] ?? remote.local?.milestones[step] ?? Infinity;
  const steps = [
    ...new Set([
      ...Object.keys(remote.local?.milestones ?? {}),
      ...Object.keys(remote.remote?.milestones ?? {}),
    ]),
  ].sort((a, b) => at(a) - at(b));
  const lines = [
    '| Step (first seen, s after the create was answered) | Local Cell | Remote Cell |',
    '| --- | --- | --- |',
  ];
  for (const step of steps)
    lines.push(
      `| ${step} | ${secondsText(remote.local?.milestones[step])} | ${secondsText(remote.remote?.milestones[step])} |`,
    );
  lines.push(
    `| **apply → Ready** | **${secondsText(remote.local?.seconds)}** | **${secondsText(remote.remote?.seconds)}** (${remote.ratio ?? '–'}×) |`,
    `| Stack start; Cell(s) Ready | ${secondsText(remote.local?.stackStartSeconds)}; ${secondsText(remote.local?.cellReadySeconds)} | ${secondsText(remote.remote?.stackStartSeconds)}; ${secondsText(remote.remote?.cellReadySeconds)} |`,
    '',
  );
  if (remote.remote)
    lines.push(
      `The cell agent's interval: ${remote.remote.agentIntervalSeconds} s (KUBECELL_AGENT_INTERVAL_SECONDS as the delivered Deployment sets it, else the agent's default), and a pass within a second of a change it watches. Its passes ended at ${passesText(remote.remote)} (relative to the create). k3k served → sealed kubeconfig written by the agent's pass: ${remote.remote.waits.forAgentPass ?? '–'} s; → fed back by the work agent's next status sync: ${remote.remote.waits.forStatusSync ?? '–'} s; k3k served → Ready: ${remote.remote.waits.servedToReady ?? '–'} s. OCM: lease ${remote.setup.ocm.leaseDurationSeconds} s, work agent status sync every ${remote.setup.ocm.statusSyncIntervalSeconds} s, cluster health check every ${remote.setup.ocm.clusterHealthCheckPeriodSeconds} s; managed clusters joined in ${remote.remote.joinSeconds.join(', ')} s.`,
      '',
    );
  return lines;
}

function idleMarkdown(remote: RemoteResult): string[] {
  const idle = remote.idle;
  const w = idle?.window;
  if (!idle || !w) return [];
  const perController = Object.entries(w.perController)
    .sort(([, a], [, b]) => b.requestBytesPerMinute - a.requestBytesPerMinute)
    .map(
      ([controller, cost]) =>
        `${controller} ${cost.callsPerMinute} calls, ${kb(cost.requestBytesPerMinute)}`,
    )
    .join('; ');
  const cpu = Object.entries(w.cpuSecondsPerMinute)
    .map(([name, value]) => `${name} ${value}`)
    .join(', ');
  const lines = [
    `${idle.clusters.length} Cells on ${idle.clusters.length} managed clusters, ${idle.virtualClusters} VirtualClusters; window ${w.seconds} s once the VirtualCluster sync rate settled (${idle.settled ? 'settled' : '**not settled**'}: ${idle.settleSlices.join(', ')}); all Ready in ${idle.seconds.virtualClustersReady} s${idle.notAllReady ? ` (**not all Ready**: ${idle.notAllReady})` : ''}.`,
    '',
    '| Figure | Measured |',
    '| --- | --- |',
    `| VirtualCluster syncs / VirtualCluster / min | **${w.virtualClusterSyncsPerVirtualClusterPerMinute}** |`,
    `| Bytes per VirtualCluster sync request | **${kb(w.bytesPerVirtualClusterSync)}**${idle.probe ? `; after an annotation: ${'meanBytes' in idle.probe ? `${kb(idle.probe.meanBytes)} (${idle.probe.syncs} syncs)` : idle.probe.error}` : ''} |`,
    `| Cell syncs / Cell / min | **${w.cellSyncsPerCellPerMinute}** (${kb(w.bytesPerCellSync)} per request) |`,
    `| delivery syncs / ManagedCluster / min | ${idle.delivery?.syncsPerManagedClusterPerMinute ?? '–'} (${kb(idle.delivery?.meanBytesPerSync)} per request) |`,
    `| Hook calls and request bytes / min by controller | ${perController} |`,
    `| Changes on the hub / min (watches) | ${JSON.stringify(idle.changesPerMinute ?? {})} |`,
    `| CPU s / min | ${cpu} |`,
  ];
  for (const c of idle.clusters)
    lines.push(
      `| ${c.managedCluster}: Cell ${c.cell}, ${c.nodes} Nodes, ${c.virtualClusters} VCs | stored Cell ${kb(c.stored?.cellBytes)} = **${kb(c.stored?.cellBytesPerNode)} per Node**; ManifestWorks: agent ${kb(c.works?.agentWorkBytes)}, ${c.works?.virtualClusterWorks ?? 0} VirtualCluster works of ${kb(c.works?.meanVirtualClusterWorkBytes)} each |`,
    );
  const a = idle.attribution;
  if (a)
    lines.push(
      '',
      `What each VirtualCluster sync followed (by timing, as the idle part): ${
        Object.entries(a.virtualClusterSyncsAfter)
          .map(([what, count]) => `${count} after ${what}`)
          .join('; ') || 'none'
      }. What changed: ${Object.entries(a.changedPaths)
        .map(
          ([kind, paths]) =>
            `${kind}: ${Object.entries(paths)
              .slice(0, 5)
              .map(([p, n]) => `\`${p}\` ${n}`)
              .join(', ')}`,
        )
        .join('; ')}.`,
    );
  lines.push('');
  return lines;
}

export function remoteMarkdown(remote: RemoteResult): string[] {
  return [
    '## Remote Cells through OCM (issue 18)',
    '',
    `Measured ${remote.date.slice(0, 16).replace('T', ' ')} in ${Math.round(remote.totalSeconds)} s. Local: the hub is the Cell's cluster (simulated OCM, ${remote.setup.localNodes} Nodes). Remote: the real OCM hub and ${remote.setup.clusters} managed clusters joined by OCM's agents, ${remote.setup.nodesPerCluster} Nodes each, the cell agent run as delivered; k3k simulated on each cluster (poll every ${remote.setup.k3kIntervalMs} ms). Metacontroller with \`${remote.metacontrollerArgs.join(' ')}\`. KB = 1,000 bytes.${remote.errors.length ? ` Errors: ${remote.errors.join('; ')}.` : ''}${remote.hooksUncommitted.length ? ` The hook server ran with uncommitted changes under hooks/ (${remote.hooksUncommitted.length} files).` : ''}`,
    '',
    ...applyMarkdown(remote),
    ...idleMarkdown(remote),
  ];
}
