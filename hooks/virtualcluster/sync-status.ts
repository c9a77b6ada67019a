/**
 * The status of a VirtualCluster, built whole from what a sync established (sync.ts): the
 * placement recorded (`status.resolved`), the feasibility checks, the endpoint and credential once
 * the placement reports them, the host namespace's quota as the apiserver reports it, and the
 * conditions (status.ts, and the placement's own: placement.ts) with Ready last. Finalize's
 * status keeps what the last sync recorded and adds `status.cleanup`.
 */
import type {
  ResolvedPlacement,
  ResourceList,
  VirtualClusterStatus,
} from '../generated/types/index.js';
import { compareStrings } from '../json/compare.js';
import { isJsonObject } from '../json/json.js';
import { reconcileConditions } from '../status/conditions.js';
import type { Assessment } from './assess.js';
import type { Cleanup } from './cleanup.js';
import type { PriorStatus, ResourceQuota, VirtualClusterObservation } from './observe.js';
import type { Rendering } from './render.js';
import {
  deletingConditions,
  feasibleCondition,
  phaseOf,
  readyCondition,
  resolvedCondition,
  type Phase,
  type Verdict,
} from './status.js';

/** The status a sync returns: the placement, the endpoint and credential, the conditions. */
export function syncStatus(
  generation: number | undefined,
  outcome: SyncOutcome,
  now: Date,
): VirtualClusterStatus {
  const { prior, observation, assessment } = outcome;
  const { resolved } = assessment;
  const { children } = assessment.placement;
  const { phase, verdicts } = syncConditions(outcome);
  const checks = assessment.evaluation?.checks ?? prior.status.feasibilityChecks;
  return {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    phase: phase.phase,
    ...placementFields(assessment),
    ...(checks === undefined ? {} : { feasibilityChecks: checks }),
    ...(resolved !== undefined && children.port !== undefined
      ? { endpoint: { address: resolved.endpointAddress, port: children.port } }
      : {}),
    ...(children.published ? { credential: { secretName: observation.names.secret } } : {}),
    ...(resolved === undefined
      ? {}
      : { host: hostStatus(resolved, observation.children.resourceQuota) }),
    conditions: reconcileConditions(prior.conditions, verdicts, now, generation),
  };
}

/** What a sync established, from which its status is built. */
export interface SyncOutcome {
  prior: PriorStatus;
  observation: VirtualClusterObservation;
  assessment: Assessment;
  rendering: Rendering;
}

/** Every condition of a sync in the order the status lists them, Ready last, and the phase. */
function syncConditions(inputs: SyncOutcome): { phase: Phase; verdicts: Verdict[] } {
  const { prior, assessment, rendering } = inputs;
  const resolvedVerdict = resolvedCondition(assessment.resolved, assessment.unresolved);
  const { applied, k3k, kubeconfig, missing, readyMessage } =
    assessment.placement.conditions(rendering);
  const phase = phaseOf(assessment, resolvedVerdict, missing, readyMessage);
  const verdicts = [
    feasibleCondition(assessment.evaluation, assessment.resolved, prior.conditions),
    resolvedVerdict,
    applied,
    k3k,
    kubeconfig,
    assessment.cell.verdict,
    readyCondition(phase),
  ];
  return { phase, verdicts };
}

/** `status.resolved`: the snapshot in use. */
function placementFields(assessment: Assessment): Pick<VirtualClusterStatus, 'resolved'> {
  return assessment.resolved === undefined ? {} : { resolved: assessment.resolved };
}

/** `status.host`: the host namespace and the quota as the apiserver reports it. */
function hostStatus(
  resolved: ResolvedPlacement,
  quota: ResourceQuota | undefined,
): NonNullable<VirtualClusterStatus['host']> {
  return {
    namespace: resolved.hostNamespace,
    ...(isJsonObject(quota?.status?.hard) ? { quotaHard: resourceList(quota.status.hard) } : {}),
    ...(isJsonObject(quota?.status?.used) ? { quotaUsed: resourceList(quota.status.used) } : {}),
  };
}

function resourceList(source: Record<string, unknown>): ResourceList {
  const list: ResourceList = {};
  for (const key of Object.keys(source).sort(compareStrings)) {
    const value = source[key];
    if (typeof value === 'string' || typeof value === 'number') list[key] = value;
  }
  return list;
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
