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
  const { minReplicas: min, maxReplicas: max, now } = input;
  const start = clamp(input.previous, min, max);
  const decision = (
    desired: number,
    status: 'True' | 'False',
    reason: ScalingReason,
    message: string,
    extra: Partial<AutoscaleDecision> = {},
  ): AutoscaleDecision => ({ desired, status, reason, message, retire: [], ...extra });

  if (input.pending === undefined) {
    return decision(
      start,
      'False',
      SCALING_REASONS.DemandNotObserved,
      `pods or consumer namespaces were not observed; the pool stays at ${start} cells`,
    );
  }
  if (input.pending.length > 0) {
    const coming = input.cells.filter((cell) => !cell.ready).map((cell) => cell.name);
    const pods = `${input.pending.length} unschedulable GPU pod${input.pending.length === 1 ? '' : 's'} (${list(input.pending)})`;
    if (coming.length > 0) {
      return decision(
        start,
        'True',
        SCALING_REASONS.WaitingForCells,
        `${pods} wait${input.pending.length === 1 ? 's' : ''} for cells that are not Ready yet: ${list(coming)}`,
      );
    }
    if (start >= max) {
      return decision(
        max,
        'False',
        SCALING_REASONS.AtMaxReplicas,
        `${pods} cannot be served: the pool is at maxReplicas (${max})`,
      );
    }
    const desired = Math.min(max, start + SCALE_UP_STEP);
    return decision(
      desired,
      'True',
      SCALING_REASONS.ScalingUp,
      `${pods}: scaling up from ${start} to ${desired} cells`,
    );
  }

  const idle = input.cells.filter((cell) => cell.ready && cell.idleSince !== undefined);
  const delayMs = input.scaleDownDelaySeconds * 1000;
  const idleFor = (cell: AutoscaleCell) => now.getTime() - (cell.idleSince?.getTime() ?? 0);
  const eligible = idle
    .filter((cell) => idleFor(cell) >= delayMs)
    .sort((a, b) => b.ordinal - a.ordinal || (a.name < b.name ? -1 : 1));
  if (eligible.length > 0) {
    if (start > min) {
      const desired = Math.max(min, start - eligible.length);
      const retire = eligible.slice(0, start - desired).map((cell) => cell.name);
      return decision(
        desired,
        'True',
        SCALING_REASONS.ScalingDown,
        `idle for ${input.scaleDownDelaySeconds}s or more: ${list(eligible.map((cell) => cell.name))}; scaling down from ${start} to ${desired} cells, retiring ${list(retire)}`,
        { retire },
      );
    }
    return decision(
      start,
      'True',
      SCALING_REASONS.AtMinReplicas,
      `idle for ${input.scaleDownDelaySeconds}s or more: ${list(eligible.map((cell) => cell.name))}; the pool is at minReplicas (${min})`,
    );
  }
  if (idle.length > 0) {
    const remainingMs = Math.min(...idle.map((cell) => delayMs - idleFor(cell)));
    return decision(
      start,
      'True',
      SCALING_REASONS.WaitingForScaleDownDelay,
      `idle, not yet for ${input.scaleDownDelaySeconds}s: ${list(idle.map((cell) => cell.name))}`,
      { resyncAfterSeconds: Math.max(1, Math.ceil(remainingMs / 1000)) },
    );
  }
  return decision(
    start,
    'True',
    SCALING_REASONS.DemandMet,
    `no GPU pod is pending and no cell is idle; the pool stays at ${start} cells`,
  );
}
