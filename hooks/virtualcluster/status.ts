/**
 * The VirtualCluster's phase and conditions, as pure functions of what a sync established.
 *
 * Phase, first match wins: Deleting (deletionTimestamp set) → Failed (a failure of
 * STICKY_FAILURES seen now or before, or the resolved Cell's ManagedCluster replaced) →
 * Pending (not resolved) → Degraded (the resolved Cell lost liveness or its inventory) →
 * Provisioning (k3k not Ready, no NodePort, kubeconfig not published or quota not in place) →
 * Ready.
 */
import type {
  Cell,
  Condition,
  FeasibilityCheck,
  ResolvedPlacement,
} from '../generated/types/index.js';
import { Decision } from '../feasibility/reasons.js';
import { findCondition, verdict, type ConditionVerdict } from '../status/conditions.js';
import type { K3kCluster } from './observe.js';
import {
  STICKY_FAILURES,
  REASONS,
  type VirtualClusterConditionType,
  type VirtualClusterPhase,
} from './reasons.js';

export interface Failure {
  reason: string;
  message: string;
}

export type Verdict = ConditionVerdict & { type: VirtualClusterConditionType };

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

// --- CellLive ---

export interface CellLiveness {
  verdict: Verdict;
  /** The Cell lost its inventory (its InventoryFresh condition is not True). */
  inventoryGone: boolean;
  /** The observed Cell is another object than the resolved one. */
  replaced: boolean;
  /** The Cell reports its ManagedCluster replaced (Cell phase Failed). */
  managedClusterReplaced: boolean;
}

export function assessCell(
  cellName: string,
  cellObserved: boolean,
  cell: Cell | undefined,
  resolved: ResolvedPlacement | undefined,
): CellLiveness {
  const live = (status: ConditionVerdict['status'], reason: string, message: string) =>
    verdict('CellLive', status, reason, message);
  const base = { inventoryGone: false, replaced: false, managedClusterReplaced: false };
  if (!cellObserved) {
    return {
      ...base,
      verdict: live(
        'Unknown',
        REASONS.CellNotObserved,
        `Cell ${cellName} was not observed (no Cells in the request); wait for the next sync.`,
      ),
    };
  }
  if (cell === undefined) {
    return {
      ...base,
      verdict: live('False', REASONS.CellNotFound, `Cell ${cellName} does not exist.`),
    };
  }
  if (resolved !== undefined && cell.metadata.uid !== resolved.cell.uid) {
    return {
      ...base,
      replaced: true,
      verdict: live(
        'False',
        REASONS.CellReplaced,
        `Cell ${cellName} has UID ${cell.metadata.uid ?? '(none)'}, but this VirtualCluster resolved to UID ${resolved.cell.uid}: the Cell was deleted and recreated.`,
      ),
    };
  }
  const status = cell.status;
  const managedClusterReplaced =
    status?.phase === 'Failed' &&
    findCondition(status.conditions, 'Ready')?.reason === REASONS.ManagedClusterReplaced;
  const inventory = findCondition(status?.conditions, 'InventoryFresh');
  const inventoryGone = inventory !== undefined && inventory.status !== 'True';
  const withFlags = { ...base, managedClusterReplaced, inventoryGone };
  if (status === undefined) {
    return {
      ...withFlags,
      verdict: live(
        'Unknown',
        REASONS.CellStatusMissing,
        `Cell ${cellName} has no status yet: the kubecell-cell controller has not observed it.`,
      ),
    };
  }
  const lease = status.managedCluster;
  if (lease?.leaseFresh === true) {
    return {
      ...withFlags,
      verdict: live(
        'True',
        REASONS.LeaseFresh,
        `The lease of Cell ${cellName} is fresh (renewed ${lease.leaseRenewTime ?? 'recently'}).`,
      ),
    };
  }
  if (lease?.leaseFresh === false) {
    return {
      ...withFlags,
      verdict: live(
        'False',
        REASONS.LeaseStale,
        `The lease of Cell ${cellName} is stale (last renewed ${lease.leaseRenewTime ?? 'never'}); the ManagedCluster's agent must renew it.`,
      ),
    };
  }
  return {
    ...withFlags,
    verdict: live(
      'Unknown',
      REASONS.LeaseUnknown,
      `The status of Cell ${cellName} does not say whether its lease is fresh.`,
    ),
  };
}

// --- K3kReady ---

/** k3k's Ready condition when present (it is authoritative), else its phase. */
export function k3kReadiness(cluster: K3kCluster | undefined, resolved: boolean): Verdict {
  if (!resolved) {
    return verdict('K3kReady', 'Unknown', REASONS.NotResolved, 'Not resolved yet.');
  }
  if (cluster === undefined) {
    return verdict(
      'K3kReady',
      'False',
      REASONS.K3kClusterMissing,
      'The k3k Cluster does not exist yet.',
    );
  }
  const phase = typeof cluster.status?.phase === 'string' ? cluster.status.phase : undefined;
  const conditions = Array.isArray(cluster.status?.conditions) ? cluster.status.conditions : [];
  const ready = conditions.find((condition) => condition?.type === 'Ready');
  const isReady = ready !== undefined ? ready.status === 'True' : phase === 'Ready';
  const detail = [
    `phase ${phase ?? '(none)'}`,
    ready === undefined
      ? 'no Ready condition'
      : `Ready=${ready.status}${ready.reason ? ` (${ready.reason}${ready.message ? `: ${ready.message}` : ''})` : ''}`,
  ].join(', ');
  return isReady
    ? verdict('K3kReady', 'True', REASONS.K3kReady, `k3k reports the Cluster ready: ${detail}.`)
    : verdict(
        'K3kReady',
        'False',
        REASONS.K3kNotReady,
        `k3k does not report the Cluster ready: ${detail}.`,
      );
}

// --- Feasible ---

export function feasibleVerdict(
  evaluation: { decision: Decision; checks: FeasibilityCheck[] } | undefined,
  resolved: ResolvedPlacement | undefined,
  previous: readonly Condition[] | undefined,
): Verdict {
  if (resolved !== undefined) {
    return verdict(
      'Feasible',
      'True',
      REASONS.Accepted,
      `The feasibility evaluation accepted the placement at ${resolved.resolvedAt}; it is not evaluated again.`,
    );
  }
  if (evaluation === undefined) {
    const prior = findCondition(previous, 'Feasible');
    return prior !== undefined
      ? verdict('Feasible', prior.status, prior.reason, prior.message)
      : verdict('Feasible', 'Unknown', REASONS.NotEvaluated, 'Not evaluated.');
  }
  const list = (result: FeasibilityCheck['result']) =>
    evaluation.checks
      .filter((check) => check.result === result)
      .map(
        (check) => `${check.name}${check.resource ? ` ${check.resource}` : ''} (${check.reason})`,
      )
      .join(', ');
  switch (evaluation.decision) {
    case Decision.Accepted:
      return verdict('Feasible', 'True', REASONS.Accepted, 'Every feasibility check passed.');
    case Decision.Rejected:
      return verdict(
        'Feasible',
        'False',
        REASONS.Rejected,
        `Failed checks: ${list('Fail')}; see status.feasibilityChecks.`,
      );
    default:
      return verdict(
        'Feasible',
        'Unknown',
        REASONS.Unknown,
        `Undecided checks: ${list('Unknown')}; see status.feasibilityChecks.`,
      );
  }
}

// --- the phase ---

export interface PhaseInputs {
  deleting: boolean;
  failure: Failure | undefined;
  resolved: boolean;
  /** Why the VirtualCluster is not resolved (the Resolved condition's verdict). */
  unresolved: Verdict;
  cell: CellLiveness;
  /** What is still missing before Ready, in words; empty when nothing is. */
  missing: string[];
}

export function phaseOf(inputs: PhaseInputs): {
  phase: VirtualClusterPhase;
  reason: string;
  message: string;
} {
  if (inputs.deleting) {
    return {
      phase: 'Deleting',
      reason: REASONS.Deleting,
      message: 'The VirtualCluster is being deleted; see status.cleanup.',
    };
  }
  if (inputs.failure !== undefined) {
    return { phase: 'Failed', ...inputs.failure };
  }
  if (!inputs.resolved) {
    return {
      phase: 'Pending',
      reason: REASONS.Pending,
      message: `Not resolved: ${inputs.unresolved.message}`,
    };
  }
  const live = inputs.cell.verdict;
  if (live.status !== 'True') {
    return {
      phase: 'Degraded',
      reason: live.reason,
      message: `${live.message} The VirtualCluster is left as it is.`,
    };
  }
  if (inputs.cell.inventoryGone) {
    return {
      phase: 'Degraded',
      reason: REASONS.CellInventoryUnavailable,
      message:
        "The Cell's InventoryFresh condition is not True: an inventory source is gone. The VirtualCluster is left as it is.",
    };
  }
  if (inputs.missing.length > 0) {
    return {
      phase: 'Provisioning',
      reason: REASONS.Provisioning,
      message: `Waiting for ${inputs.missing.join('; ')}.`,
    };
  }
  return {
    phase: 'Ready',
    reason: REASONS.Ready,
    message:
      'The k3k Cluster is ready, the NodePort is allocated, the kubeconfig is published and the quota is in place.',
  };
}
