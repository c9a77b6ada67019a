/**
 * The VirtualCluster's conditions and phase, as pure functions of what a sync observed, assessed
 * and rendered. Each condition has its own function, in the order the status lists them
 * (VC_CONDITION_TYPES); the conditions on the children are child-conditions.ts's (on the hub)
 * and work-conditions.ts's (through the work). Ready summarises them through the phase;
 * sync-status.ts puts them in the status.
 *
 * Phase, first match wins: Deleting (deletionTimestamp set) → Failed (a failure of
 * STICKY_FAILURES seen now or before, or the resolved Cell's ManagedCluster replaced) →
 * Pending (not resolved) → Degraded (the resolved Cell lost liveness or its inventory) →
 * Provisioning (k3k not Ready, no NodePort, kubeconfig not published or quota not in place) →
 * Ready.
 */
import type {
  Condition,
  FeasibilityCheck,
  PlacementReport,
  PlanFollowed,
  ResolvedPlacement,
} from '../generated/types/index.js';
import { Decision } from '../feasibility/reasons.js';
import { findCondition, verdict, type ConditionVerdict } from '../status/conditions.js';
import type { Assessment } from './assess.js';
import {
  REASONS,
  VC_CONDITION_TYPES,
  type VirtualClusterConditionType,
  type VirtualClusterPhase,
} from './reasons.js';
import type { CellLiveness } from './cell-liveness.js';
import type { Unresolved } from './resolve.js';

export type Verdict = ConditionVerdict & { type: VirtualClusterConditionType };

// --- Feasible ---

const SEE_CHECKS = 'see status.feasibilityChecks.';

export function feasibleCondition(
  evaluation: { decision: Decision; checks: FeasibilityCheck[] } | undefined,
  resolved: ResolvedPlacement | undefined,
  previous: readonly Condition[] | undefined,
): Verdict {
  const feasible = (status: Verdict['status'], reason: string, message: string) =>
    verdict('Feasible', status, reason, message);
  if (resolved !== undefined) {
    const message = `The feasibility evaluation accepted the placement at ${resolved.resolvedAt}; it is not evaluated again.`;
    return feasible('True', REASONS.Accepted, message);
  }
  if (evaluation === undefined) {
    const prior = findCondition(previous, 'Feasible');
    return prior !== undefined
      ? feasible(prior.status, prior.reason, prior.message)
      : feasible('Unknown', REASONS.NotEvaluated, 'Not evaluated.');
  }
  const list = (result: FeasibilityCheck['result']) =>
    evaluation.checks
      .filter((check) => check.result === result)
      .map(describeCheck)
      .join(', ');
  switch (evaluation.decision) {
    case Decision.Accepted:
      return feasible('True', REASONS.Accepted, 'Every feasibility check passed.');
    case Decision.Rejected:
      return feasible('False', REASONS.Rejected, `Failed checks: ${list('Fail')}; ${SEE_CHECKS}`);
    default:
      return feasible(
        'Unknown',
        REASONS.Unknown,
        `Undecided checks: ${list('Unknown')}; ${SEE_CHECKS}`,
      );
  }
}

function describeCheck(check: FeasibilityCheck): string {
  return `${check.name}${check.resource ? ` ${check.resource}` : ''} (${check.reason})`;
}

// --- Resolved ---

export function resolvedCondition(
  resolved: ResolvedPlacement | undefined,
  unresolved: Unresolved | undefined,
): Verdict {
  if (resolved !== undefined) {
    const message = `Resolved at ${resolved.resolvedAt} to Cell ${resolved.cell.name} (${resolved.cell.uid}) and class ${resolved.class.name} (${resolved.class.uid}); endpoint address ${resolved.endpointAddress}.`;
    return verdict('Resolved', 'True', REASONS.Resolved, message);
  }
  const [reason, message] = unresolvedWords(unresolved ?? { why: 'notEvaluated' });
  return verdict('Resolved', 'False', reason, message);
}

function unresolvedWords(unresolved: Unresolved): [reason: string, message: string] {
  switch (unresolved.why) {
    case 'notEvaluated':
      return [REASONS.NotResolved, 'Not resolved.'];
    case 'failed':
      return [REASONS.NotResolved, unresolved.message];
    case 'rejected':
      return [
        REASONS.FeasibilityRejected,
        `The feasibility evaluation rejected the placement${selectionWords(unresolved.placement)}; see status.feasibilityChecks.`,
      ];
    case 'undecided':
      return [
        REASONS.FeasibilityUnknown,
        `The feasibility evaluation could not decide${selectionWords(unresolved.placement)}; see status.feasibilityChecks. It runs again on the next sync.`,
      ];
    case 'noEndpointAddress':
      return [
        REASONS.NoEndpointAddress,
        `The Cell's status.nodeAddresses lists no usable address: no Ready, schedulable Node labelled kubecell.io/machine-profile=${unresolved.profile} has an InternalIP that is an IP address (the Cell's NodeAddressesValid condition names those whose is not), so there is no address for the API endpoint yet.`,
      ];
  }
}

/**
 * With a cellSelector: on how many Cells, and which were left out why (status.feasibilityChecks
 * is then the report of the first left out).
 */
function selectionWords(placement: PlacementReport | undefined): string {
  if (placement === undefined) return '';
  if (placement.candidates === 0)
    return ' on every Cell spec.cellSelector matches: it matches none';
  const groups = (placement.filtered ?? []).map(
    (group) => `${group.count} ${group.result} ${group.reason} (${(group.cells ?? []).join(', ')})`,
  );
  return ` on each of the ${placement.candidates} Cell(s) spec.cellSelector matches (left out: ${groups.join('; ')})`;
}

// --- PlanFollowed ---

/**
 * Only for a VirtualCluster resolved with the annotation kubecell.io/plan: whether it was placed
 * on the Cell that plan chose. A function of the snapshot alone, so it never changes afterwards.
 */
export function planFollowedCondition(resolved: ResolvedPlacement | undefined): Verdict[] {
  const plan = resolved?.plan;
  if (resolved === undefined || plan === undefined) return [];
  const chose = plan.cell === undefined ? 'chose no Cell' : `chose Cell ${plan.cell}`;
  const placed = `placed on Cell ${resolved.cell.name} by the placementPolicy`;
  const words: Record<PlanFollowed['result'], [string, string]> = {
    Followed: [
      REASONS.PlanFollowed,
      `Placed on Cell ${resolved.cell.name}, the one plan ${plan.name} chose.`,
    ],
    CellNoLongerFits: [
      REASONS.CellNoLongerFits,
      `Plan ${plan.name} ${chose}, which no longer accepts the placement (see status.resolved.placement.filtered); ${placed}.`,
    ],
    CellNotMatched: [
      REASONS.CellNotMatched,
      `Plan ${plan.name} ${chose}, which spec.cellSelector does not match; ${placed}.`,
    ],
    PlanNotAccepted: [
      REASONS.PlanNotAccepted,
      `Plan ${plan.name} is not Accepted for its current generation, or has Expired; ${placed}.`,
    ],
    PlanNotFound: [
      REASONS.PlanNotFound,
      `No VirtualClusterPlan ${plan.name} in this namespace was observed at resolution; ${placed}.`,
    ],
  };
  const [reason, message] = words[plan.result];
  return [verdict('PlanFollowed', plan.result === 'Followed', reason, message)];
}

// --- while deleting ---

/** Ready False (Deleting) with `message`; every other condition kept as the last sync left it. */
export function deletingConditions(
  previous: readonly Condition[] | undefined,
  message: string,
): Verdict[] {
  return VC_CONDITION_TYPES.flatMap((type): Verdict[] => {
    if (type === 'Ready') return [verdict('Ready', 'False', REASONS.Deleting, message)];
    const prior = findCondition(previous, type);
    return prior === undefined ? [] : [verdict(type, prior.status, prior.reason, prior.message)];
  });
}

// --- the phase and Ready ---

/** Ready's message on a local Cell. */
const READY_MESSAGE =
  'The k3k Cluster is ready, the NodePort is allocated, the kubeconfig is published and the quota is in place.';

export interface Phase {
  phase: VirtualClusterPhase;
  reason: string;
  message: string;
}

/** The phase, from the assessment, the Resolved condition and what Ready waits for. */
export function phaseOf(
  assessment: Pick<Assessment, 'deleting' | 'failure' | 'resolved' | 'cell'>,
  resolvedVerdict: Verdict,
  missing: readonly string[],
  readyMessage: string = READY_MESSAGE,
): Phase {
  if (assessment.deleting) {
    const message = 'The VirtualCluster is being deleted; see status.cleanup.';
    return { phase: 'Deleting', reason: REASONS.Deleting, message };
  }
  if (assessment.failure !== undefined) return { phase: 'Failed', ...assessment.failure };
  if (assessment.resolved === undefined) {
    const message = `Not resolved: ${resolvedVerdict.message}`;
    return { phase: 'Pending', reason: REASONS.Pending, message };
  }
  return degradedPhase(assessment.cell) ?? provisioningPhase(missing, readyMessage);
}

/** Degraded while the resolved Cell is not live or lost its inventory. */
function degradedPhase(cell: CellLiveness): Phase | undefined {
  const live = cell.verdict;
  if (live.status !== 'True') {
    const message = `${live.message} The VirtualCluster is left as it is.`;
    return { phase: 'Degraded', reason: live.reason, message };
  }
  if (!cell.inventoryGone) return undefined;
  const message =
    "The Cell's InventoryFresh condition is not True: an inventory source is gone. The VirtualCluster is left as it is.";
  return { phase: 'Degraded', reason: REASONS.CellInventoryUnavailable, message };
}

/** Provisioning while anything Ready waits for is missing; Ready once nothing is. */
function provisioningPhase(missing: readonly string[], readyMessage: string): Phase {
  if (missing.length > 0) {
    const message = `Waiting for ${missing.join('; ')}.`;
    return { phase: 'Provisioning', reason: REASONS.Provisioning, message };
  }
  return { phase: 'Ready', reason: REASONS.Ready, message: readyMessage };
}

/** Ready: True in phase Ready; otherwise False with the phase's reason and message. */
export function readyCondition(phase: Phase): Verdict {
  return verdict('Ready', phase.phase === 'Ready', phase.reason, phase.message);
}
