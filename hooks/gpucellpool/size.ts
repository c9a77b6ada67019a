/**
 * The size phase: how many cells the pool wants, and which cells that adds or retires.
 *
 * - The size is spec.replicas, or the autoscaler's decision (autoscale.ts); 0 while the pool is
 *   being deleted.
 * - Missing cells are added, each at the lowest free ordinal. Surplus cells are retired: the
 *   autoscaler's own choice first (idle past the delay, newest first), then Unhealthy and not
 *   Ready ones, then idle, then busy, newest (highest ordinal) first.
 */
import type { GPUCellPool, GPUCellPoolStatus } from '../generated/types/index.js';
import { clamp, decideScale, type AutoscaleCell, type AutoscaleDecision } from './autoscale.js';
import { buildCell, isIdle, type Cell, type CellContext } from './cells.js';
import { MAX_CELLS, SPEC_DEFAULTS } from './constants.js';
import { pendingDemand } from './consumers.js';
import { cellName } from './names.js';
import type { PodObject } from './objects.js';
import { SCALING_REASONS } from './reasons.js';

export interface SizeInput {
  pool: GPUCellPool;
  /** The status before this sync (its desiredReplicas is the autoscaler's memory). */
  previous: GPUCellPoolStatus;
  /** The cells that are not retiring. */
  active: readonly Cell[];
  /** Consumer pods; undefined when pods or consumer namespaces were not observed. */
  consumerPods?: readonly PodObject[] | undefined;
  gpuResource: string;
  now: Date;
  deleting: boolean;
}

type Autoscaling = NonNullable<GPUCellPool['spec']['autoscaling']>;

/** The size the pool wants now, and why (the ScalingActive condition). */
export function decideSize(input: SizeInput): AutoscaleDecision {
  const { spec } = input.pool;
  const replicas = spec.replicas ?? SPEC_DEFAULTS.replicas;
  const autoscaling = spec.autoscaling;
  if (input.deleting) {
    return {
      desired: 0,
      status: autoscaling ? 'True' : 'False',
      reason: autoscaling ? SCALING_REASONS.ScalingDown : SCALING_REASONS.AutoscalingDisabled,
      message: 'the pool is being deleted: every cell is retired',
      retire: [],
    };
  }
  if (autoscaling === undefined) {
    return {
      desired: replicas,
      status: 'False',
      reason: SCALING_REASONS.AutoscalingDisabled,
      message: `spec.autoscaling is not set; the pool runs spec.replicas (${replicas}) cells`,
      retire: [],
    };
  }
  return autoscale(input, autoscaling, replicas);
}

/** The autoscaler's decision, starting from the previous one (the first time, spec.replicas). */
function autoscale(
  input: SizeInput,
  autoscaling: Autoscaling,
  replicas: number,
): AutoscaleDecision {
  const { pool, now } = input;
  const min = autoscaling.minReplicas ?? SPEC_DEFAULTS.minReplicas;
  const max = Math.max(min, autoscaling.maxReplicas);
  // The schema makes a recorded desiredReplicas a non-negative integer.
  const start = input.previous.desiredReplicas ?? replicas;
  return decideScale({
    minReplicas: min,
    maxReplicas: max,
    scaleDownDelaySeconds: autoscaling.scaleDownDelaySeconds ?? SPEC_DEFAULTS.scaleDownDelaySeconds,
    previous: clamp(start, min, max),
    cells: input.active.map((cell) => autoscaleCell(cell, now)),
    ...(input.consumerPods !== undefined
      ? {
          pending: pendingDemand(
            input.consumerPods,
            input.gpuResource,
            pool.metadata.name,
            pool.spec.machineProfile,
          ),
        }
      : {}),
    now,
  });
}

/**
 * A cell as the autoscaler sees it. A Ready cell whose GPU no consumer pod holds is idle since
 * the `since` recorded while it was Ready and idle, else since now.
 */
function autoscaleCell(cell: Cell, now: Date): AutoscaleCell {
  const ready = cell.phase === 'Ready';
  const idleSince = !(ready && isIdle(cell))
    ? undefined
    : cell.previousPhase === 'Ready' && cell.previousSince !== undefined
      ? new Date(cell.previousSince)
      : now;
  return {
    name: cell.name,
    ordinal: cell.ordinal,
    ready,
    ...(idleSince !== undefined && !Number.isNaN(idleSince.getTime()) ? { idleSince } : {}),
  };
}

export interface ResizeInput {
  context: CellContext;
  /** Every known cell, retiring ones included. */
  cells: readonly Cell[];
  scaling: AutoscaleDecision;
}

/** The cells after sizing: new cells added, or surplus cells marked retiring. */
export function resizeCells(input: ResizeInput): Cell[] {
  const { cells, scaling } = input;
  const active = cells.filter((cell) => !cell.retiring);
  const toAdd = scaling.desired - active.length;
  if (toAdd > 0) return [...cells, ...newCells(input.context, cells, toAdd)];
  if (toAdd === 0) return [...cells];
  const retired = new Set(retirees(active, scaling.retire, -toAdd).map((cell) => cell.name));
  return cells.map((cell) =>
    retired.has(cell.name) ? { ...cell, retiring: true, phase: 'Retiring' } : cell,
  );
}

/** `count` new cells (fewer if the status would list more than MAX_CELLS), lowest free ordinals first. */
function newCells(context: CellContext, cells: readonly Cell[], count: number): Cell[] {
  const used = new Set(cells.map((cell) => cell.ordinal));
  const room = Math.min(count, MAX_CELLS - cells.length);
  const added: Cell[] = [];
  for (let ordinal = 0; added.length < room; ordinal++) {
    if (used.has(ordinal)) continue;
    added.push(
      buildCell(context, { name: cellName(context.pool.metadata.name, ordinal), incarnation: 0 }),
    );
  }
  return added;
}

/** The `count` cells to retire: the autoscaler's choice first, then by `retirementRank`, newest first. */
function retirees(active: readonly Cell[], preferred: readonly string[], count: number): Cell[] {
  const rank = new Map(preferred.map((name, index) => [name, index]));
  return [...active]
    .sort(
      (a, b) =>
        (rank.get(a.name) ?? Infinity) - (rank.get(b.name) ?? Infinity) ||
        retirementRank(a) - retirementRank(b) ||
        b.ordinal - a.ordinal,
    )
    .slice(0, count);
}

/** Retirement order: unhealthy or not Ready first, then idle, then busy. */
function retirementRank(cell: Cell): number {
  if (cell.health?.health === 'Unhealthy') return 0;
  switch (cell.phase) {
    case 'Failed':
      return 0;
    case 'Provisioning':
      return 1;
    case 'NotReady':
      return 2;
    default:
      return (cell.holders?.length ?? 0) === 0 ? 3 : 4;
  }
}
