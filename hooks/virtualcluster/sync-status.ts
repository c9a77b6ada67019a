/**
 * The status of a VirtualCluster, built whole from what a sync established (sync.ts): the
 * placement recorded (`status.resolved`), the feasibility checks, the endpoint and credential once
 * the placement reports them, the host namespace's quota as the apiserver reports it, and the
 * conditions (status.ts; on the children, where the placement has them: child-conditions.ts on
 * the hub, work-conditions.ts through the work) with Ready last. Finalize's status keeps what
 * the last sync recorded and adds `status.cleanup`.
 */
import type { ResolvedPlacement, VirtualClusterStatus } from '../generated/types/index.js';
import { reconcileConditions } from '../status/conditions.js';
import type { Assessment } from './assess.js';
import {
  hubChildConditions,
  keptChildConditions,
  type ChildConditions,
} from './child-conditions.js';
import type { Cleanup } from './cleanup.js';
import type { PriorStatus, VirtualClusterObservation } from './observe.js';
import type { ObservedQuota } from './observe-children.js';
import type { Rendering } from './render.js';
import {
  deletingConditions,
  feasibleCondition,
  phaseOf,
  planFollowedCondition,
  readyCondition,
  resolvedCondition,
  type Phase,
  type Verdict,
} from './status.js';
import { workChildConditions } from './work-conditions.js';

/** The status a sync returns: the placement, the endpoint and credential, the conditions. */
export function syncStatus(
  generation: number | undefined,
  outcome: SyncOutcome,
  now: Date,
): VirtualClusterStatus {
  const { observation, assessment } = outcome;
  const { prior } = observation;
  const { resolved } = assessment;
  const { children } = assessment.placement;
  const { phase, verdicts } = syncConditions(outcome);
  const checks = assessment.evaluation?.checks ?? prior.status.feasibilityChecks;
  return {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    phase: phase.phase,
    ...(resolved === undefined ? {} : { resolved }),
    ...(checks === undefined ? {} : { feasibilityChecks: checks }),
    ...(resolved !== undefined && children.port !== undefined
      ? { endpoint: { address: resolved.endpointAddress, port: children.port } }
      : {}),
    ...(children.published ? { credential: { secretName: observation.names.secret } } : {}),
    ...(resolved === undefined ? {} : { host: hostStatus(resolved, observation.children.quota) }),
    conditions: reconcileConditions(prior.conditions, verdicts, now, generation),
  };
}

/** What a sync established, from which its status is built. */
export interface SyncOutcome {
  observation: VirtualClusterObservation;
  assessment: Assessment;
  rendering: Rendering;
}

/** Every condition of a sync in the order the status lists them, Ready last, and the phase. */
function syncConditions(inputs: SyncOutcome): { phase: Phase; verdicts: Verdict[] } {
  const { observation, assessment } = inputs;
  const feasible = feasibleCondition(
    assessment.evaluation,
    assessment.resolved,
    observation.prior.conditions,
  );
  const resolvedVerdict = resolvedCondition(assessment.resolved, assessment.unresolved);
  const { applied, k3k, kubeconfig, missing, readyMessage } = childConditions(inputs);
  const phase = phaseOf(assessment, resolvedVerdict, missing, readyMessage);
  const verdicts = [
    feasible,
    resolvedVerdict,
    ...planFollowedCondition(assessment.resolved),
    applied,
    k3k,
    kubeconfig,
    assessment.cell.verdict,
    assessment.cell.nodes,
    readyCondition(phase),
  ];
  return { phase, verdicts };
}

/**
 * The conditions on the children where the placement has them: kept as observed before
 * resolution, on the hub, or in the work (a placement through the work is always resolved).
 */
function childConditions({ observation, assessment, rendering }: SyncOutcome): ChildConditions {
  const { placement } = assessment;
  if (!rendering.rendered) return keptChildConditions(placement.children, observation);
  return placement.where === 'work'
    ? workChildConditions(placement, rendering, observation)
    : hubChildConditions(placement.children, rendering, observation);
}

/** `status.host`: the host namespace and the quota as the apiserver reports it. */
function hostStatus(
  resolved: ResolvedPlacement,
  quota: ObservedQuota | undefined,
): NonNullable<VirtualClusterStatus['host']> {
  return {
    namespace: resolved.hostNamespace,
    ...(quota?.hard === undefined ? {} : { quotaHard: quota.hard }),
    ...(quota?.used === undefined ? {} : { quotaUsed: quota.used }),
  };
}

/**
 * The status finalize returns: what the last sync recorded, but for the endpoint and the
 * credential (the Service and the Secret are being removed), with `status.cleanup`.
 */
export function deletingStatus(
  generation: number | undefined,
  prior: PriorStatus,
  cleanup: Cleanup,
  now: Date,
): VirtualClusterStatus {
  const previous = prior.status;
  const verdicts = deletingConditions(prior.conditions, cleanup.message);
  return {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    phase: 'Deleting',
    ...(previous.resolved === undefined ? {} : { resolved: previous.resolved }),
    ...(previous.feasibilityChecks === undefined
      ? {}
      : { feasibilityChecks: previous.feasibilityChecks }),
    ...(previous.host === undefined ? {} : { host: previous.host }),
    cleanup: cleanup.remaining,
    conditions: reconcileConditions(prior.conditions, verdicts, now, generation),
  };
}
