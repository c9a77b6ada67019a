/**
 * The status phase: the pool's status, returned whole; for the same request and clock it is
 * byte-identical.
 *
 * Conditions, each from its own function:
 * - ScalingActive: the size decision (size.ts, autoscale.ts).
 * - BootstrapValid: the bootstrap assessment (assess.ts).
 * - Ready, the summary: False while the pool is being deleted; False with the assess phase's
 *   reason while cells are missing and cannot be created (BootstrapValid, the GPU claim, a
 *   template, a kind not served); False while cells are not Ready; True once every cell the pool
 *   wants is Ready.
 * - CellsHealthy and RemediationAllowed: the health phase (remediation.ts, health.ts).
 * - JoinContentCurrent (opaque bootstrap only, informational): every cell booted from the join
 *   Secret's current content (`joinContentHash`), or which did not and how to roll them.
 *
 * A cell's phase is Provisioning, NotReady or Ready from its machine and current Node, Failed
 * when it has no machine and none can be created, Retiring and Deleting during retirement.
 * A Ready cell's `since` is when its GPU was last seen idle (the autoscaler's memory). Its
 * `health`, `healthReason` and `healthSince` come from the health phase; a cell added after it
 * (no machine yet) is Healthy, Starting.
 */
import type { GPUCellPool, GPUCellPoolStatus, GPUCellStatus } from '../generated/types/index.js';
import {
  formatTime,
  reconcileConditions,
  verdict,
  type ConditionVerdict,
} from '../status/conditions.js';
import type { Assessment } from './assess.js';
import type { AutoscaleDecision } from './autoscale.js';
import type { Cell } from './cells.js';
import type { PoolObservation } from './observe.js';
import { cellsHealthyCondition, type HealthPhase } from './remediation.js';
import type { ProvisionerLabelProblem } from './provisioner.js';
import { REPLACE_ANNOTATION } from './constants.js';
import { CELL_HEALTH_REASONS, JOIN_CONTENT_REASONS, READY_REASONS } from './reasons.js';

export interface StatusInput {
  pool: GPUCellPool;
  /** The status before this sync. */
  previous: GPUCellPoolStatus;
  /** The cells still there, after retirement (render.ts). */
  cells: readonly Cell[];
  scaling: AutoscaleDecision;
  assessment: Assessment;
  health: Pick<HealthPhase, 'remediationAllowed'>;
  deleting: boolean;
  now: Date;
}

export function poolStatus(input: StatusInput): GPUCellPoolStatus {
  const { pool, cells, now } = input;
  const generation = pool.metadata.generation;
  const clusterAPI = pool.spec.provisioner.type === 'ClusterAPI';
  const cellStatuses = cells.map((cell) => cellStatus(cell, clusterAPI, now));
  const contentHash = input.assessment.bootstrap.contentHash;
  return {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    // A cell exists once its machine does: a cell still waiting for its machine (or one whose
    // machine is gone while its Node is being reaped) is listed, but not counted as current.
    replicas: cells.filter((cell) => cell.machine !== undefined).length,
    readyReplicas: cellStatuses.filter((cell) => cell.phase === 'Ready').length,
    desiredReplicas: input.scaling.desired,
    ...(contentHash !== undefined ? { joinContentHash: contentHash } : {}),
    cells: cellStatuses,
    conditions: reconcileConditions(
      input.previous.conditions,
      poolConditions(input),
      now,
      generation,
    ),
  };
}

/**
 * Ready first, then ScalingActive, BootstrapValid, CellsHealthy, RemediationAllowed and (opaque
 * bootstrap only) JoinContentCurrent.
 */
export function poolConditions(input: StatusInput): ConditionVerdict[] {
  const joinContent = joinContentCondition(input);
  return [
    readyCondition(input),
    scalingCondition(input.scaling),
    bootstrapCondition(input.assessment),
    cellsHealthyCondition(input.cells),
    input.health.remediationAllowed,
    ...(joinContent !== undefined ? [joinContent] : []),
  ];
}

/** Cells listed by name in the JoinContentCurrent message, at most. */
const LISTED = 5;

/**
 * JoinContentCurrent, for a pool that renders user-data from a join Secret (none when a Cluster
 * API bootstrap provider supplies the data): whether every cell with a machine (not retiring)
 * booted from the join Secret's current content. Informational: Ready does not depend on it.
 */
export function joinContentCondition(
  input: Pick<StatusInput, 'pool' | 'cells' | 'assessment'>,
): ConditionVerdict | undefined {
  const { pool } = input;
  const { provisioner } = pool.spec;
  if (provisioner.type === 'ClusterAPI' && provisioner.clusterAPI?.bootstrapConfigTemplateRef) {
    return undefined;
  }
  const current = input.assessment.bootstrap.contentHash;
  const where = `${pool.spec.namespace}/${pool.spec.bootstrap?.joinSecretRef?.name ?? ''}`;
  if (current === undefined) {
    return verdict(
      'JoinContentCurrent',
      'Unknown',
      JOIN_CONTENT_REASONS.JoinSecretUnavailable,
      `the join Secret ${where} is not available (see BootstrapValid): cells are not compared`,
    );
  }
  const running = input.cells.filter((cell) => !cell.retiring && cell.machine !== undefined);
  const older = running.filter((cell) => cell.joinContentHash !== current);
  if (older.length === 0) {
    return verdict(
      'JoinContentCurrent',
      true,
      JOIN_CONTENT_REASONS.AllCellsCurrent,
      `${running.length} of ${running.length} cells booted from the current content of the join Secret ${where} (joinContentHash ${current})`,
    );
  }
  const resource =
    provisioner.type === 'ClusterAPI' ? 'machines.cluster.x-k8s.io' : 'virtualmachines.kubevirt.io';
  const named = older
    .slice(0, LISTED)
    .map((cell) => `${cell.name} (${cell.machineName}, ${cell.joinContentHash ?? 'unknown'})`);
  const more = older.length > LISTED ? ` and ${older.length - LISTED} more` : '';
  return verdict(
    'JoinContentCurrent',
    false,
    JOIN_CONTENT_REASONS.CellsOnOlderJoinContent,
    `${older.length} of ${running.length} cells booted from an older content of the join Secret ` +
      `${where} than the current (joinContentHash ${current}): ${named.join(', ')}${more}; they ` +
      `keep running; to roll one, kubectl annotate -n ${pool.spec.namespace} ${resource} ` +
      `<machine> ${REPLACE_ANNOTATION}=true: it is retired and replaced, never evicted`,
  );
}

export function readyCondition(
  input: Pick<StatusInput, 'cells' | 'scaling' | 'assessment' | 'deleting'>,
): ConditionVerdict {
  if (input.deleting) {
    return verdict(
      'Ready',
      false,
      READY_REASONS.Deleting,
      'the pool is being deleted; its cells are retired',
    );
  }
  const { desired } = input.scaling;
  const { blocker } = input.assessment;
  const active = input.cells.filter((cell) => !cell.retiring);
  const notReady = active.filter((cell) => cell.phase !== 'Ready');
  const missing = desired - active.length;
  const waiting = notReady.some((cell) => cell.machine === undefined) || missing > 0;
  if (waiting && blocker.state !== 'ok') {
    return verdict('Ready', false, blocker.reason, blocker.message);
  }
  if (notReady.length > 0 || missing > 0) {
    const parts = notReady.map((cell) => `${cell.name} is ${cell.phase}`);
    if (missing > 0) parts.push(`${missing} more to create`);
    return verdict(
      'Ready',
      false,
      READY_REASONS.CellsNotReady,
      `${active.length - notReady.length} of ${desired} cells Ready: ${parts.join(', ')}`,
    );
  }
  return verdict(
    'Ready',
    true,
    READY_REASONS.AllCellsReady,
    `${desired} of ${desired} cells Ready`,
  );
}

export function scalingCondition(scaling: AutoscaleDecision): ConditionVerdict {
  return verdict('ScalingActive', scaling.status, scaling.reason, scaling.message);
}

export function bootstrapCondition(assessment: Assessment): ConditionVerdict {
  return assessment.bootstrap.verdict;
}

// --- cells ---

function cellStatus(cell: Cell, clusterAPI: boolean, now: Date): GPUCellStatus {
  // KubeVirt: the UUID the pool gave the incarnation. Cluster API: what its Node reports (the
  // infrastructure provider decides it), kept while the Node is away.
  const reported = cell.node?.status?.nodeInfo?.systemUUID;
  const systemUUID = clusterAPI ? (reported ?? cell.uuid) : cell.uuid;
  const since = cellSince(cell, now);
  const health = cell.health;
  return {
    name: cell.name,
    vm: cell.machineName,
    ...(cell.node ? { node: cell.node.metadata.name } : {}),
    ...(systemUUID ? { systemUUID } : {}),
    phase: cell.phase,
    ...(since !== undefined ? { since } : {}),
    health: health?.health ?? 'Healthy',
    healthReason: health?.reason ?? CELL_HEALTH_REASONS.Starting,
    healthSince: health?.since ?? formatTime(now),
    ...(cell.joinContentHash !== undefined ? { joinContentHash: cell.joinContentHash } : {}),
  };
}

/**
 * When the cell entered its phase. A Ready cell's `since` is when its GPU was last seen idle;
 * absent while a consumer pod holds it. That is the memory the autoscaler's scale-down delay is
 * measured with.
 */
function cellSince(cell: Cell, now: Date): string | undefined {
  const samePhase = cell.previousPhase === cell.phase;
  if (cell.phase === 'Ready' && cell.holders !== undefined) {
    if (cell.holders.length > 0) return undefined;
    return samePhase && cell.previousSince !== undefined ? cell.previousSince : formatTime(now);
  }
  return samePhase ? cell.previousSince : formatTime(now);
}

// --- a sync that keeps everything ---

export interface HeldStatusInput {
  pool: GPUCellPool;
  previous: GPUCellPoolStatus;
  now: Date;
  /** The Ready condition to report; without it, the status is kept exactly as it was. */
  ready?: ConditionVerdict;
}

/** The status kept as it was, with this generation, and `ready` (if any) as the Ready condition. */
export function heldStatus(input: HeldStatusInput): GPUCellPoolStatus {
  const { previous, ready } = input;
  const generation = input.pool.metadata.generation;
  const kept: GPUCellPoolStatus = {
    ...previous,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
  };
  if (ready === undefined) return kept;
  const others = (previous.conditions ?? [])
    .filter((condition) => condition.type !== 'Ready')
    .map((condition) =>
      verdict(condition.type, condition.status, condition.reason, condition.message),
    );
  return {
    ...kept,
    conditions: reconcileConditions(previous.conditions, [ready, ...others], input.now, generation),
  };
}

/** Ready for a pool whose `kubecell.io/provisioner` label is wrong (provisioner.ts). */
export function labelCondition(problem: ProvisionerLabelProblem): ConditionVerdict {
  return verdict('Ready', false, problem.reason, problem.message);
}

/** Ready when Metacontroller delivered no machines, Secrets or Nodes. */
export function notObservedCondition(
  pool: GPUCellPool,
  observation: Pick<PoolObservation, 'machines' | 'secrets' | 'nodes'>,
): ConditionVerdict {
  const machines = pool.spec.provisioner.type === 'ClusterAPI' ? 'Machines' : 'VirtualMachines';
  const missing = [
    observation.machines === undefined ? machines : undefined,
    observation.secrets === undefined ? 'Secrets' : undefined,
    observation.nodes === undefined ? 'Nodes' : undefined,
  ].filter((item): item is string => item !== undefined);
  return verdict(
    'Ready',
    false,
    READY_REASONS.NotObserved,
    `not observed: ${missing.join(', ')}; every child is kept as it is`,
  );
}
