/**
 * The kubecell-virtualcluster sync and finalize hooks, each a short list of phases.
 *
 * Sync: observe (observe.ts) → assess (assess.ts: the placement, resolved once through the
 * feasibility evaluation of resolve.ts and never again; failures; the Cell's liveness; what
 * Ready waits for) → render (render.ts: the children, from `status.resolved` only; without a
 * usable snapshot the observed children are returned as they are, so a missing or malformed
 * input never deletes or changes one) → status (the conditions and the phase of status.ts, put
 * together here with the placement, endpoint and credential). The status is returned whole; for
 * the same request and clock it is byte-identical.
 *
 * A stale copy of the VirtualCluster is answered 429 with Retry-After 1 (nothing changes;
 * Metacontroller retries then, without a SyncError event) rather than resolved again: see
 * `staleCopyEvidence` in resolve.ts.
 *
 * On a `delivery: ManifestWork` Cell (status.resolved.cell.delivery) the render phase returns
 * the kubeconfig Secret alone, and ChildrenApplied, K3kReady and KubeconfigPublished come from
 * the VirtualCluster's ManifestWork (remote.ts, remote-status.ts).
 *
 * Finalize: observe the children (and, on a ManifestWork Cell, the ManifestWork) → what remains
 * (cleanup.ts) → status. It returns no children, lists what remains in `status.cleanup` and
 * answers `finalized: true` once nothing remains, or at once with the annotation
 * `kubecell.io/skip-cleanup=true`. It reads no spec field.
 */
import type {
  ResolvedPlacement,
  ResourceList,
  VirtualCluster,
  VirtualClusterStatus,
} from '../generated/types/index.js';
import { compareStrings } from '../feasibility/resources.js';
import { isJsonObject } from '../json/json.js';
import type { CompositeSyncRequest, CompositeSyncResponse } from '../metacontroller/protocol.js';
import { reconcileConditions } from '../status/conditions.js';
import { assessVirtualCluster, type Assessment } from './assess.js';
import { assessCleanup, type Cleanup } from './cleanup.js';
import type { VirtualClusterConfig } from './config.js';
import {
  observeOwnChildren,
  observeVirtualCluster,
  observeOwnWork,
  priorStatus,
  type PriorStatus,
  type ResourceQuota,
  type VirtualClusterObservation,
} from './observe.js';
import { renderRemoteChildren } from './remote.js';
import {
  remoteChildrenAppliedCondition,
  remoteK3kReadyCondition,
  remoteKubeconfigPublishedCondition,
  remoteMissingForReady,
  remoteReadyMessage,
} from './remote-status.js';
import { renderVirtualCluster, type Rendering } from './render.js';
import {
  childrenAppliedCondition,
  deletingConditions,
  feasibleCondition,
  k3kReadyCondition,
  kubeconfigPublishedCondition,
  missingForReady,
  phaseOf,
  readyCondition,
  resolvedCondition,
  type Phase,
  type Verdict,
} from './status.js';

export function syncVirtualCluster(
  request: CompositeSyncRequest<VirtualCluster>,
  config: VirtualClusterConfig,
  now: Date,
): CompositeSyncResponse {
  const vc = request.parent;
  const prior = priorStatus(vc);
  const observation = observeVirtualCluster(vc, request.related, request.children, config);
  const assessment = assessVirtualCluster(vc, prior, observation, config, now);
  const rendering = renderChildren(vc, assessment, observation);
  const outcome = { prior, observation, assessment, rendering };
  const status = syncStatus(vc.metadata.generation, outcome, now);
  const settled = status.phase === 'Ready' || status.phase === 'Failed';
  return {
    status,
    children: rendering.children,
    ...(settled ? {} : { resyncAfterSeconds: config.resyncSeconds }),
  };
}

export function finalizeVirtualCluster(
  request: CompositeSyncRequest<VirtualCluster>,
  config: VirtualClusterConfig,
  now: Date,
): CompositeSyncResponse {
  const vc = request.parent;
  const prior = priorStatus(vc);
  const work = observeOwnWork(vc, prior.status.resolved, request.related);
  const cleanup = assessCleanup(vc, observeOwnChildren(vc, request.children), work);
  const status = deletingStatus(vc.metadata.generation, prior, cleanup, now);
  return {
    status,
    children: [],
    finalized: cleanup.finalized,
    ...(cleanup.finalized ? {} : { resyncAfterSeconds: config.resyncSeconds }),
  };
}

/** The children: the local ones, or on a ManifestWork Cell the kubeconfig Secret alone. */
function renderChildren(
  vc: VirtualCluster,
  assessment: Assessment,
  observation: VirtualClusterObservation,
): Rendering {
  const { resolved, remote } = assessment;
  return resolved !== undefined && remote !== undefined
    ? renderRemoteChildren(vc, resolved, observation, remote)
    : renderVirtualCluster(vc, resolved, observation);
}

/** The status a sync returns: the placement, the endpoint and credential, the conditions. */
function syncStatus(
  generation: number | undefined,
  outcome: SyncOutcome,
  now: Date,
): VirtualClusterStatus {
  const { prior, observation, assessment } = outcome;
  const { resolved, children } = assessment;
  const { phase, verdicts } = syncConditions(outcome);
  const checks = assessment.evaluation?.checks ?? prior.status.feasibilityChecks;
  return {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    phase: phase.phase,
    ...placementFields(assessment),
    ...(Array.isArray(checks) ? { feasibilityChecks: checks } : {}),
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
interface SyncOutcome {
  prior: PriorStatus;
  observation: VirtualClusterObservation;
  assessment: Assessment;
  rendering: Rendering;
}

/** Every condition of a sync in the order the status lists them, Ready last, and the phase. */
function syncConditions(inputs: SyncOutcome): { phase: Phase; verdicts: Verdict[] } {
  const { prior, assessment } = inputs;
  const resolvedVerdict = resolvedCondition(assessment.resolved, assessment.unresolved);
  const { applied, k3k, kubeconfig, missing, readyMessage } = childConditions(inputs);
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

/** ChildrenApplied, K3kReady, KubeconfigPublished and what Ready waits for among them. */
function childConditions(inputs: SyncOutcome): {
  applied: Verdict;
  k3k: Verdict;
  kubeconfig: Verdict;
  missing: string[];
  readyMessage?: string;
} {
  const { observation, assessment, rendering } = inputs;
  const { resolved, children, remote } = assessment;
  if (remote !== undefined && rendering.rendered) {
    const applied = remoteChildrenAppliedCondition(remote, rendering, observation);
    const k3k = remoteK3kReadyCondition(remote);
    const kubeconfig = remoteKubeconfigPublishedCondition(remote, rendering, children, observation);
    const verdicts = { applied, k3k, kubeconfig };
    const missing = remoteMissingForReady(remote, verdicts, children, observation.names.service);
    return { ...verdicts, missing, readyMessage: remoteReadyMessage(remote, children.url) };
  }
  const applied = childrenAppliedCondition(rendering, observation);
  const k3k = k3kReadyCondition(observation.children.cluster, resolved !== undefined);
  const kubeconfig = kubeconfigPublishedCondition(resolved, rendering, children, observation);
  const missing = missingForReady({ applied, k3k, kubeconfig }, children, observation.names);
  return { applied, k3k, kubeconfig, missing };
}

/** `status.resolved`: the snapshot in use, or the stored one kept as it is when unusable. */
function placementFields(assessment: Assessment): Pick<VirtualClusterStatus, 'resolved'> {
  const snapshot = assessment.resolved ?? assessment.stored;
  return snapshot === undefined ? {} : { resolved: snapshot };
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
function deletingStatus(
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
    ...(previous.resolved !== undefined && previous.resolved !== null
      ? { resolved: previous.resolved }
      : {}),
    ...(Array.isArray(previous.feasibilityChecks)
      ? { feasibilityChecks: previous.feasibilityChecks }
      : {}),
    ...(isJsonObject(previous.host) ? { host: previous.host } : {}),
    cleanup: cleanup.remaining,
    conditions: reconcileConditions(prior.conditions, verdicts, now, generation),
  };
}
