/**
 * The autoscaler: a pure decision from the pool's previous size, its cells and the demand.
 *
 * - Start: the previous `status.desiredReplicas` (the first time, `spec.replicas`), clamped into
 *   `[minReplicas, maxReplicas]`.
 * - Pending demand (see consumers.ts) and every cell Ready: one cell more (`SCALE_UP_STEP`),
 *   up to `maxReplicas`. While a cell is still coming up (any phase but Ready), nothing is added:
 *   a new cell may absorb several pending pods, since HAMi shares its GPU.
 * - No pending demand: every Ready cell whose GPU no consumer pod holds is idle; those idle for
 *   at least `scaleDownDelaySeconds` are retired, down to `minReplicas`. Scale-down picks the
 *   cells idle past the delay, newest cell (highest ordinal) first.
 * - Without pods or consumer namespaces in the request, the size is held.
 */
import { SCALE_UP_STEP } from './constants.js';
import { SCALING_REASONS, type ScalingReason } from './reasons.js';

export interface AutoscaleCell {
  name: string;
  ordinal: number;
  ready: boolean;
  /** When the cell's GPU became idle; undefined while held (or not Ready). */
  idleSince?: Date;
}

export interface AutoscaleInput {
  minReplicas: number;
  maxReplicas: number;
  scaleDownDelaySeconds: number;
  /** The previous decision (or spec.replicas). */
  previous: number;
  /** The cells that are not being retired. */
  cells: readonly AutoscaleCell[];
  /** Pending demand as namespace/name; undefined when pods were not observed. */
  pending?: readonly string[];
  now: Date;
}

export interface AutoscaleDecision {
  desired: number;
  status: 'True' | 'False';
  reason: ScalingReason;
  message: string;
  /** Cells to retire first (idle past the delay, newest first). */
  retire: string[];
  /** Seconds until the next idle cell reaches the delay. */
  resyncAfterSeconds?: number;
}

export function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

function list(names: readonly string[], limit = 5): string {
  const shown = names.slice(0, limit).join(', ');
  return names.length > limit ? `${shown} and ${names.length - limit} more` : shown;
}

export function decideScale(input: AutoscaleInput): AutoscaleDecision {
  const start = clamp(input.previous, input.minReplicas, input.maxReplicas);
  if (input.pending === undefined) {
    return decision({
      desired: start,
      status: 'False',
      reason: SCALING_REASONS.DemandNotObserved,
      message: `pods or consumer namespaces were not observed; the pool stays at ${start} cells`,
    });
  }
  if (input.pending.length > 0) return scaleUp(input, input.pending, start);
  return scaleDown(input, start);
}

function decision(
  fields: Omit<AutoscaleDecision, 'retire'> & Partial<Pick<AutoscaleDecision, 'retire'>>,
): AutoscaleDecision {
  return { retire: [], ...fields };
}

/** Pending demand: one cell more once every cell is Ready, up to maxReplicas. */
function scaleUp(
  input: AutoscaleInput,
  pending: readonly string[],
  start: number,
): AutoscaleDecision {
  const max = input.maxReplicas;
  const coming = input.cells.filter((cell) => !cell.ready).map((cell) => cell.name);
  const one = pending.length === 1;
  const pods = `${pending.length} unschedulable GPU pod${one ? '' : 's'} (${list(pending)})`;
  if (coming.length > 0) {
    return decision({
      desired: start,
      status: 'True',
      reason: SCALING_REASONS.WaitingForCells,
      message: `${pods} wait${one ? 's' : ''} for cells that are not Ready yet: ${list(coming)}`,
    });
  }
  if (start >= max) {
    return decision({
      desired: max,
      status: 'False',
      reason: SCALING_REASONS.AtMaxReplicas,
      message: `${pods} cannot be served: the pool is at maxReplicas (${max})`,
    });
  }
  const desired = Math.min(max, start + SCALE_UP_STEP);
  return decision({
    desired,
    status: 'True',
    reason: SCALING_REASONS.ScalingUp,
    message: `${pods}: scaling up from ${start} to ${desired} cells`,
  });
}

/** No pending demand: cells idle past the delay are retired, down to minReplicas. */
function scaleDown(input: AutoscaleInput, start: number): AutoscaleDecision {
  const { now, minReplicas: min, scaleDownDelaySeconds: delay } = input;
  const idle = input.cells.filter((cell) => cell.ready && cell.idleSince !== undefined);
  const idleFor = (cell: AutoscaleCell) => now.getTime() - (cell.idleSince?.getTime() ?? 0);
  const eligible = idle
    .filter((cell) => idleFor(cell) >= delay * 1000)
    .sort((a, b) => b.ordinal - a.ordinal || (a.name < b.name ? -1 : 1));
  const names = list(eligible.map((cell) => cell.name));
  if (eligible.length > 0 && start > min) {
    const desired = Math.max(min, start - eligible.length);
    const retire = eligible.slice(0, start - desired).map((cell) => cell.name);
    return decision({
      desired,
      status: 'True',
      reason: SCALING_REASONS.ScalingDown,
      message: `idle for ${delay}s or more: ${names}; scaling down from ${start} to ${desired} cells, retiring ${list(retire)}`,
      retire,
    });
  }
  if (eligible.length > 0) {
    return decision({
      desired: start,
      status: 'True',
      reason: SCALING_REASONS.AtMinReplicas,
      message: `idle for ${delay}s or more: ${names}; the pool is at minReplicas (${min})`,
    });
  }
  if (idle.length > 0) {
    const remainingMs = Math.min(...idle.map((cell) => delay * 1000 - idleFor(cell)));
    return decision({
      desired: start,
      status: 'True',
      reason: SCALING_REASONS.WaitingForScaleDownDelay,
      message: `idle, not yet for ${delay}s: ${list(idle.map((cell) => cell.name))}`,
      resyncAfterSeconds: Math.max(1, Math.ceil(remainingMs / 1000)),
    });
  }
  return decision({
    desired: start,
    status: 'True',
    reason: SCALING_REASONS.DemandMet,
    message: `no GPU pod is pending and no cell is idle; the pool stays at ${start} cells`,
  });
}
