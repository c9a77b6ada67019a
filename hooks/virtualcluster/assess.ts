/**
 * What a VirtualCluster sync establishes before it renders, as pure functions of the prior
 * status, the observation and the clock:
 *
 * - the placement: the stored snapshot (`status.resolved`, which the validation layer checked
 *   against the schema: every field rendering needs, an endpoint address a URL may be built
 *   from); only while none is stored (and nothing sticky failed, and it is not being deleted) a
 *   new resolution (resolve.ts). A stored snapshot is never evaluated again.
 * - the failure, first match wins: a sticky Failed phase stays; otherwise an older
 *   VirtualCluster in the namespace (NamespaceOccupied), or, once resolved, another Cell under
 *   the resolved name (CellReplaced) or the Cell's ManagedCluster replaced
 *   (ManagedClusterReplaced).
 * - the resolved Cell's liveness (cell-liveness.ts `assessCell`, the CellLive condition);
 * - the placement of the children, chosen once (placement.ts): applied on the hub
 *   (local-placement.ts) or carried by the VirtualCluster's ManifestWork on a `delivery:
 *   ManifestWork` Cell (work-placement.ts), and the state there of what Ready waits for.
 */
import type { Condition, ResolvedPlacement, VirtualCluster } from '../generated/types/index.js';
import type { FeasibilityResult } from '../feasibility/evaluate.js';
import { findCondition } from '../status/conditions.js';
import type { VirtualClusterConfig } from './config.js';
import { localPlacement } from './local-placement.js';
import type { VirtualClusterObservation } from './observe.js';
import type { Placement } from './placement.js';
import { REASONS, STICKY_FAILURES } from './reasons.js';
import { olderNeighbours, resolvePlacement, type Resolution, type Unresolved } from './resolve.js';
import { assessCell, type CellLiveness } from './cell-liveness.js';
import { deliveredByWork } from './work-ref.js';
import { workPlacement } from './work-placement.js';

export interface Failure {
  reason: string;
  message: string;
}

export interface Assessment {
  /** `deletionTimestamp` is set. */
  deleting: boolean;
  /** The snapshot the children are rendered from: the stored one, or a new one. */
  resolved?: ResolvedPlacement;
  /** Why there is no snapshot; undefined when `resolved` is set. */
  unresolved?: Unresolved;
  /** This sync's feasibility evaluation; only when it resolved anew. */
  evaluation?: FeasibilityResult;
  failure?: Failure;
  cell: CellLiveness;
  /** Where the children go, and the state there of what Ready waits for. */
  placement: Placement;
}

export function assessVirtualCluster(
  vc: VirtualCluster,
  observation: VirtualClusterObservation,
  config: VirtualClusterConfig,
  now: Date,
): Assessment {
  const { prior } = observation;
  const deleting = vc.metadata.deletionTimestamp !== undefined;
  const stored = prior.status.resolved;
  const sticky = stickyFailure(prior.status.phase, prior.conditions);
  const failure = sticky ?? occupiedFailure(vc, observation);
  const resolution: Partial<Resolution> =
    stored === undefined && sticky === undefined && !deleting
      ? resolvePlacement(vc, observation, config, now, failure !== undefined)
      : { resolved: stored };
  const { resolved, cell: resolvedTo, ...rest } = resolution;
  // A Cell chosen by selector in this very sync is the one the rest of it reads.
  const observed =
    resolvedTo === undefined
      ? observation
      : {
          ...observation,
          cellName: resolvedTo.metadata.name,
          cell: resolvedTo,
          cellObserved: true,
        };
  const cell = assessCell(resolved?.cell.name ?? observed.cellName, observed, resolved);
  return {
    deleting,
    ...rest,
    ...(resolved === undefined ? {} : { resolved }),
    unresolved: unresolvedBecause(resolution, failure),
    failure: failure ?? cellFailure(resolved, cell),
    cell,
    placement: placementOf(vc, resolved, observed),
  };
}

/** On the hub, or through the VirtualCluster's ManifestWork when the snapshot says so. */
function placementOf(
  vc: VirtualCluster,
  resolved: ResolvedPlacement | undefined,
  observation: VirtualClusterObservation,
): Placement {
  return resolved !== undefined && deliveredByWork(resolved)
    ? workPlacement(vc, resolved, observation)
    : localPlacement(resolved, observation);
}

/** A Failed phase recorded by an earlier sync that must stay (its reason is sticky). */
export function stickyFailure(
  phase: string | undefined,
  conditions: readonly Condition[] | undefined,
): Failure | undefined {
  if (phase !== 'Failed') return undefined;
  const ready = findCondition(conditions, 'Ready');
  if (ready === undefined || !STICKY_FAILURES.includes(ready.reason)) return undefined;
  return { reason: ready.reason, message: ready.message };
}

/** An older VirtualCluster keeps the namespace (a namespace hosts one). */
function occupiedFailure(
  vc: VirtualCluster,
  observation: VirtualClusterObservation,
): Failure | undefined {
  const older = olderNeighbours(vc, observation);
  if (older.length === 0) return undefined;
  return {
    reason: REASONS.NamespaceOccupied,
    message: `Namespace ${observation.namespace} already hosts VirtualCluster ${older[0]?.metadata.name ?? ''}, which is older; a namespace hosts one VirtualCluster. Delete this one and create it in another host namespace.`,
  };
}

/** Once resolved: the Cell was replaced, or it reports its ManagedCluster replaced. */
function cellFailure(
  resolved: ResolvedPlacement | undefined,
  cell: CellLiveness,
): Failure | undefined {
  if (resolved === undefined) return undefined;
  if (cell.replaced) return { reason: REASONS.CellReplaced, message: cell.verdict.message };
  if (!cell.managedClusterReplaced) return undefined;
  return {
    reason: REASONS.ManagedClusterReplaced,
    message: `Cell ${resolved.cell.name} reports its ManagedCluster replaced; the VirtualCluster is left as it is until an operator accepts the new cluster on the Cell.`,
  };
}

/** Why there is no snapshot: the failure when there is one, else what the resolution said. */
function unresolvedBecause(
  resolution: Partial<Resolution>,
  failure: Failure | undefined,
): Unresolved | undefined {
  if (resolution.resolved !== undefined) return undefined;
  if (failure !== undefined) return { why: 'failed', message: failure.message };
  return resolution.unresolved ?? { why: 'notEvaluated' };
}
