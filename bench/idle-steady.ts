/**
 * The steady state of the idle benchmark (bench/idle.ts, issue 24): reaching it, counting the
 * Cell's writes in it, and the quiet window (where it fits, the queues drained first).
 */
import type { KubeCellStack } from '../harness/cluster/kubecell-stack.js';
import type { Simulation } from '../harness/simulate/index.js';
import { cellLivenessRecordName } from '../hooks/api/cell-liveness-record.js';
import type { ChangeLog } from './idle-changes.js';
import type { IdleCase } from './idle-cases.js';
import { cpuPerMinute, perControllerOf, VC_QUEUE } from './idle-metrics.js';
import type { CellWriteFigures, IdleOptions, IdlePointResult } from './idle-results.js';
import { difference, scrape, sum } from './prometheus.js';
import { hookCallsOf, processCpu } from './metacontroller.js';
import { round } from './stats.js';
import { sleep } from '../harness/poll.js';

export const STEADY_STATE =
  'Metacontroller restarted once every VirtualCluster was Ready, before convergence and the window: it caches each customize answer 20 minutes per parent UID and generation (pkg/controller/common/customize/manager.go), so without the restart VirtualClusters created in the run would still relate what they asked for before they were resolved (the Cell itself, not its liveness record)';

const CELL_QUEUE = 'CompositeController-kubecell-cell';
/** The longest wait, lease renewal paused, for the work it started to finish before the quiet window. */
export const QUIET_DRAIN_MAX_SECONDS = 90;
/** KubeCell judges a lease stale 5 lease durations after its renewTime (hooks/cell/liveness.ts). */
const STALE_AFTER_LEASES = 5;

/** Metacontroller restarted (its customize cache emptied); the seconds it took. */
export async function restartForSteadyState(
  stack: KubeCellStack,
  log: (line: string) => void,
): Promise<number> {
  const started = Date.now();
  await stack.restartMetacontroller();
  const seconds = round((Date.now() - started) / 1000);
  log(`Metacontroller restarted for the steady-state rules (${seconds} s)`);
  return seconds;
}

/** Why a quiet window of `quietSeconds` cannot run at this lease period, if it cannot. */
export function quietSkipReason(leaseSeconds: number, quietSeconds: number): string | undefined {
  if (quietSeconds <= 0) return 'no quiet window asked for';
  const needed = quietSeconds + QUIET_DRAIN_MAX_SECONDS + 20;
  const allowed = STALE_AFTER_LEASES * leaseSeconds;
  return needed < allowed
    ? undefined
    : `renewals paused for up to ${needed} s (drain ≤ ${QUIET_DRAIN_MAX_SECONDS} s + ${quietSeconds} s + 20 s) would let the lease go stale (${STALE_AFTER_LEASES} × ${leaseSeconds} s = ${allowed} s)`;
}

/**
 * Waits until what the last renewal started (a Cell write, the syncs it causes) has finished:
 * both work queues empty for 3 s in a row (at least 10 s, at most QUIET_DRAIN_MAX_SECONDS).
 * The seconds waited.
 */
export async function drainQueues(stack: KubeCellStack): Promise<number> {
  const drainStart = Date.now();
  let emptySince: number | undefined;
  while (Date.now() - drainStart < QUIET_DRAIN_MAX_SECONDS * 1000) {
    await sleep(1000);
    const mc = await scrape(stack.metacontroller.metricsUrl);
    const depth = sum(
      mc,
      'workqueue_depth',
      (labels) => labels.name === VC_QUEUE || labels.name === CELL_QUEUE,
    );
    if (depth > 0) emptySince = undefined;
    else emptySince ??= Date.now();
    const quietFor = emptySince === undefined ? 0 : Date.now() - emptySince;
    if (quietFor >= 3000 && Date.now() - drainStart >= 10_000) break;
  }
  return round((Date.now() - drainStart) / 1000);
}

/** The Cell's writes and its liveness record's between `from` and `to`, seen on the watches. */
export function cellWritesOf(
  changes: ChangeLog,
  cell: { namespace: string; name: string },
  window: { from: number; to: number },
): CellWriteFigures {
  const minutes = (window.to - window.from) / 60_000;
  const record = cellLivenessRecordName(cell.name);
  const seen = changes
    .between(window.from, window.to)
    .filter((c) => c.namespace === cell.namespace);
  const cellWrites = seen.filter((c) => c.kind === 'Cell' && c.name === cell.name);
  const status = cellWrites.filter((c) => c.paths.some((path) => path.startsWith('status'))).length;
  return {
    status,
    statusPerMinute: minutes > 0 ? round(status / minutes, 2) : 0,
    total: cellWrites.length,
    livenessRecord: seen.filter((c) => c.kind === 'ConfigMap' && c.name === record).length,
  };
}

/**
 * The quiet window (bench/idle.ts step 6): lease renewals paused, the queues drained, then
 * `quietSeconds` counted; skipped where the lease would go stale meanwhile.
 */
export async function measureQuiet(
  context: { stack: KubeCellStack; simulation: Simulation; changes: ChangeLog },
  point: IdleCase,
  options: Pick<IdleOptions, 'quietSeconds'>,
  result: IdlePointResult,
): Promise<{ from: number; to: number } | undefined> {
  const { stack, simulation } = context;
  const skip = quietSkipReason(point.leaseSeconds, options.quietSeconds);
  if (skip !== undefined || !simulation.leases) {
    if (options.quietSeconds > 0) result.quietSkipped = skip ?? 'no lease renewal to pause';
    return undefined;
  }
  const started = Date.now();
  await simulation.leases.stop();
  const drainSeconds = await drainQueues(stack);
  const hookBefore = await scrape(`${stack.hookServerUrl}/metrics`);
  const cpuBefore = processCpu(stack);
  const from = Date.now();
  await sleep(options.quietSeconds * 1000);
  const hookAfter = await scrape(`${stack.hookServerUrl}/metrics`);
  const cpuAfter = processCpu(stack);
  const to = Date.now();
  simulation.leases.start();
  const minutes = (to - from) / 60_000;
  const calls = hookCallsOf(difference(hookBefore, hookAfter)).ok;
  result.quiet = {
    seconds: round((to - from) / 1000),
    drainSeconds,
    virtualClusterSyncsPerVirtualClusterPerMinute: round(
      (calls['virtualcluster/sync'] ?? 0) / point.virtualClusters / minutes,
      2,
    ),
    cellSyncsPerCellPerMinute: round((calls['cell/sync'] ?? 0) / minutes, 2),
    cellWrites: context.changes.between(from, to).filter((c) => c.kind === 'Cell').length,
    perController: perControllerOf(difference(hookBefore, hookAfter), minutes),
    cpuSecondsPerMinute: cpuPerMinute(cpuBefore, cpuAfter, minutes),
  };
  result.seconds.quiet = round((Date.now() - started) / 1000);
  return { from, to };
}
