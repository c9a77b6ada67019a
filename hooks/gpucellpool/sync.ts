/**
 * The GPUCellPool sync and finalize hooks, called by both GPUCellPool controllers. Sync is a
 * list of phases, each a pure function in its own module:
 *
 * 0. Whose pool (provisioner.ts `holdOf`). A controller whose child types do not include the
 *    pool's machine kind is the other provisioner's, reached through a `kubecell.io/provisioner`
 *    label that contradicts spec.provisioner.type: it keeps every child it observes as it is and
 *    says so in `Ready` (`ProvisionerLabelMismatch`), and its finalize lets go at once. A finalize
 *    call without a deletion means the pool stopped matching this controller's labelSelector:
 *    everything is kept (`ProvisionerLabelMissing` or `ProvisionerLabelMismatch`) and the
 *    finalizer stays, so that a label edit never tears GPU cells down.
 * 1. Observe (observe.ts). Without the pool's machines, Secrets or Nodes in the request, every
 *    observed child is returned as it is and the status is kept: nothing is created or deleted
 *    on a guess.
 * 2. Assess (assess.ts): can new machines be created (bootstrap, GPU claim, Cluster API
 *    templates, kinds served), and if not, why.
 * 3. Cells (cells.ts), from `status.cells` (the only memory): each cell's machine and current
 *    Node (nodes.ts); a cell whose joined machine disappeared gets a new incarnation.
 * 4. Health (remediation.ts, health.ts): each cell's health; unhealthy cells retired for
 *    replacement, within spec.health.maxUnhealthy.
 * 5. Size (size.ts, autoscale.ts): spec.replicas or the autoscaler's decision; missing cells are
 *    added (the replacements too), surplus cells retired.
 * 6. Render (render.ts): each cell's children, retirement (cordon first, never evict), the Nodes.
 * 7. Status (status.ts), returned whole; for the same request and clock it is byte-identical. The
 *    answer asks for a resync when the first clock-bound verdict falls due (a scale-down delay, a
 *    health check's duration, a release timeout).
 *
 * Finalize runs the same with a desired size of 0 and answers `finalized: true` once every cell
 * and child is gone (at once with the annotation `kubecell.io/skip-cleanup=true`).
 */
import type { GPUCellPool, GPUCellPoolStatus } from '../generated/types/index.js';
import type { CompositeSyncRequest, CompositeSyncResponse } from '../metacontroller/protocol.js';
import type { ConditionVerdict } from '../status/conditions.js';
import { assessPool, type Assessment } from './assess.js';
import { knownCells, type CellContext } from './cells.js';
import type { GPUCellPoolConfig } from './config.js';
import { FINALIZE_RESYNC_SECONDS } from './constants.js';
import { holdersByNode } from './consumers.js';
import {
  observedChildren,
  observePool,
  type ObservedChildren,
  type PoolObservation,
} from './observe.js';
import { holdOf, skipsCleanup } from './provisioner.js';
import { assessHealth } from './remediation.js';
import { heldChildren, renderChildren } from './render.js';
import { decideSize, resizeCells } from './size.js';
import { heldStatus, labelCondition, notObservedCondition, poolStatus } from './status.js';

export interface SyncOptions {
  config: GPUCellPoolConfig;
  now: Date;
  finalizing: boolean;
}

export interface PoolSync {
  response: CompositeSyncResponse;
  /** Cells and children still there (for finalize). */
  remaining: number;
  /**
   * Finalize only: the answer when it does not follow from `remaining` (a pool this controller
   * holds for a label, or lets go of because it is another provisioner's).
   */
  finalized?: boolean;
}

export function syncGPUCellPool(
  request: CompositeSyncRequest<GPUCellPool>,
  config: GPUCellPoolConfig,
  now: Date,
): CompositeSyncResponse {
  return reconcilePool(request, { config, now, finalizing: false }).response;
}

export function finalizeGPUCellPool(
  request: CompositeSyncRequest<GPUCellPool>,
  config: GPUCellPoolConfig,
  now: Date,
): CompositeSyncResponse {
  const result = reconcilePool(request, { config, now, finalizing: true });
  const { response, remaining } = result;
  if (result.finalized !== undefined) return { ...response, finalized: result.finalized };
  const finalized = skipsCleanup(request.parent) || remaining === 0;
  const { resyncAfterSeconds, ...rest } = response;
  return {
    ...rest,
    finalized,
    ...(finalized ? {} : { resyncAfterSeconds: resyncAfterSeconds ?? FINALIZE_RESYNC_SECONDS }),
  };
}

/** What every phase of one sync reads. */
interface PoolInput {
  pool: GPUCellPool;
  /** The status before this sync. */
  previous: GPUCellPoolStatus;
  observation: PoolObservation;
  config: GPUCellPoolConfig;
  now: Date;
  /** Finalizing, or the pool has a deletionTimestamp: every cell is retired. */
  deleting: boolean;
}

export function reconcilePool(
  request: CompositeSyncRequest<GPUCellPool>,
  options: SyncOptions,
): PoolSync {
  const input = poolInput(request, options);
  const { pool, previous, observation, now, deleting } = input;
  const hold = holdOf(pool, request.children, options.finalizing);
  if (hold !== undefined) {
    return heldSync(input, hold.problem && labelCondition(hold.problem), hold.finalized);
  }
  const children = observedChildren(observation);
  if (children === undefined) return heldSync(input, notObservedCondition(pool, observation));
  const assessment = assessPool(pool, observation);
  const context = cellContext(input, children, assessment);
  const health = assessHealth({ pool, cells: knownCells(context), now, deleting });
  const scaling = decideSize({
    pool,
    previous,
    active: health.cells.filter((cell) => !cell.retiring),
    consumerPods: observation.consumerPods,
    gpuResource: input.config.gpuResource,
    now,
    deleting,
  });
  const cells = resizeCells({ context, cells: health.cells, scaling });
  const rendered = renderChildren({ pool, cells, children, observation, assessment, deleting });
  const status = poolStatus({
    pool,
    previous,
    cells: rendered.cells,
    scaling,
    assessment,
    health,
    deleting,
    now,
  });
  const resync = earliest(scaling.resyncAfterSeconds, health.resyncAfterSeconds);
  return {
    response: {
      status,
      children: rendered.children,
      ...(resync !== undefined ? { resyncAfterSeconds: resync } : {}),
    },
    remaining: rendered.cells.length + observation.allChildren.length,
  };
}

function earliest(...seconds: (number | undefined)[]): number | undefined {
  const known = seconds.filter((value): value is number => value !== undefined);
  return known.length === 0 ? undefined : Math.min(...known);
}

function poolInput(request: CompositeSyncRequest<GPUCellPool>, options: SyncOptions): PoolInput {
  const pool = request.parent;
  const { config, now, finalizing } = options;
  return {
    pool,
    previous: pool.status ?? {},
    observation: observePool(pool, request.children, request.related, config),
    config,
    now,
    deleting: finalizing || pool.metadata.deletionTimestamp !== undefined,
  };
}

function cellContext(
  input: PoolInput,
  children: ObservedChildren,
  assessment: Assessment,
): CellContext {
  const pods = input.observation.consumerPods;
  return {
    pool: input.pool,
    machines: children.machines,
    nodes: children.nodes,
    ...(pods === undefined ? {} : { holders: holdersByNode(pods, input.config.gpuResource) }),
    blocker: assessment.blocker,
  };
}

/**
 * Every observed child returned as it is, the status kept: without the children groups (`Ready`
 * is `NotObserved`), for a label problem (`Ready` says it), or without `ready`, the status exactly
 * as it was (a controller that is not the pool's writes nothing of its own).
 */
function heldSync(
  input: PoolInput,
  ready: ConditionVerdict | undefined,
  finalized?: boolean,
): PoolSync {
  const { pool, previous, now } = input;
  const children = heldChildren(previous, input.observation.allChildren);
  return {
    response: {
      status: heldStatus({ pool, previous, now, ...(ready ? { ready } : {}) }),
      children,
    },
    remaining: (previous.cells?.length ?? 0) + children.length,
    ...(finalized === undefined ? {} : { finalized }),
  };
}
