/**
 * The kubecell-virtualcluster sync and finalize hooks.
 *
 * Sync, in order:
 * 1. Failure: a sticky Failed phase stays; otherwise an older VirtualCluster in the namespace
 *    (NamespaceOccupied), an unusable stored snapshot (ResolvedSnapshotInvalid), or, once
 *    resolved, another Cell under the resolved name (CellReplaced) or the Cell's ManagedCluster
 *    replaced (ManagedClusterReplaced) makes it Failed.
 * 2. Resolution, only while `status.resolved` is absent: the feasibility evaluation; anything
 *    but Accepted keeps it Pending with the report in `status.feasibilityChecks` and a resync.
 *    Accepted, with an endpoint address, writes the snapshot. It is never evaluated again.
 * 3. Children, rendered from `status.resolved` only (+ k3k's kubeconfig and the allocated
 *    NodePort for the Secret). Without a usable snapshot, observed children are returned as
 *    they are, so a missing or malformed input never deletes or changes one.
 * 4. Status, returned whole; for the same request and clock it is byte-identical.
 *
 * A stale copy of the VirtualCluster is answered 429 with Retry-After 1 (nothing changes;
 * Metacontroller retries then, without a SyncError event) rather than resolved again: see
 * `staleCopyEvidence`.
 *
 * Finalize returns no children (Metacontroller deletes each, with a UID precondition), lists
 * what remains in `status.cleanup` and answers `finalized: true` once nothing remains, or at
 * once with the annotation `kubecell.io/skip-cleanup=true`.
 */
import { keptChild } from '../metacontroller/kept-child.js';
import type {
  ResolvedPlacement,
  ResourceList,
  TypedObjectReference,
  VirtualCluster,
  VirtualClusterStatus,
} from '../generated/types/index.js';
import { Decision } from '../feasibility/reasons.js';
import { compareStrings } from '../feasibility/resources.js';
import { isJsonObject } from '../json/json.js';
import { ANNOTATIONS } from '../kube/labels.js';
import { RetryLaterError } from '../metacontroller/retry-later.js';
import {
  childKey,
  type CompositeSyncRequest,
  type CompositeSyncResponse,
  type KubernetesObject,
} from '../metacontroller/protocol.js';
import { findCondition, reconcileConditions, verdict } from '../status/conditions.js';
import type { VirtualClusterConfig } from './config.js';
import { endpointUrl } from './kubeconfig.js';
import { observeVirtualCluster, type VirtualClusterObservation } from './observe.js';
import { VC_CONDITION_TYPES, REASONS } from './reasons.js';
import {
  allocatedNodePort,
  childLabels,
  planSecret,
  renderApiService,
  renderK3kCluster,
  renderLimitRange,
  renderResourceQuota,
  secretPointsAt,
  type SecretPlan,
  type SecretPlanWhy,
} from './render.js';
import {
  chooseEndpoint,
  evaluateFeasibility,
  feasibilityInput,
  olderNeighbours,
  resolvedIsUsable,
  snapshot,
  snapshotSourcesUsable,
} from './resolve.js';
import {
  assessCell,
  feasibleVerdict,
  k3kReadiness,
  phaseOf,
  stickyFailure,
  type Failure,
  type Verdict,
} from './status.js';

/** Most entries `status.cleanup` may hold (its maxItems). */
export const MAX_CLEANUP = 32;

/**
 * How long after its newest child was created a VirtualCluster without `status.resolved` is
 * taken for a stale copy (see `staleCopyEvidence`) rather than a snapshot that was never
 * written. Metacontroller's caches lag by far less; past this, the placement is evaluated again.
 */
export const STALE_COPY_GRACE_SECONDS = 60;

/**
 * The child that shows this copy of the VirtualCluster is stale, if any: one was created less
 * than STALE_COPY_GRACE_SECONDS ago, yet the copy has no `status.resolved`.
 *
 * Children exist only once a sync rendered them from a snapshot, and Metacontroller writes the
 * status of that sync right after applying them. The next sync often starts before its cache
 * has seen that write: Metacontroller reads the parent from its informer
 * (`pc.parentLister.Get`, pkg/controller/composite/controller.go), and the children applied in
 * between queue that very sync. Yet it writes the status that sync returns over the latest
 * object, whatever the copy was (`AtomicStatusUpdate` GETs the object and replaces `.status`,
 * pkg/dynamic/clientset/clientset.go). Resolving again from such a copy would re-render the
 * children from the Cell and class as they are now and return a second snapshot, which the CRD
 * refuses, or no snapshot at all (the evaluation no longer accepts, e.g. the Cell now counts this
 * VirtualCluster as committed), which the CRD accepts (its rule compares old and new snapshots
 * only when both exist): the snapshot would be erased. So such a sync is refused; the write it
 * waited for makes Metacontroller sync again, with the snapshot.
 */
export function staleCopyEvidence(
  children: readonly KubernetesObject[],
  now: Date,
): { child: KubernetesObject; created: string } | undefined {
  let newest: { child: KubernetesObject; created: string; at: number } | undefined;
  for (const child of children) {
    const created = child.metadata?.creationTimestamp;
    const at = typeof created === 'string' ? Date.parse(created) : NaN;
    if (Number.isNaN(at) || (newest !== undefined && newest.at >= at)) continue;
    newest = { child, created: created as string, at };
  }
  if (newest === undefined || now.getTime() - newest.at >= STALE_COPY_GRACE_SECONDS * 1000) {
    return undefined;
  }
  return { child: newest.child, created: newest.created };
}

function previousStatus(vc: VirtualCluster): VirtualClusterStatus {
  return isJsonObject(vc.status) ? vc.status : {};
}

function conditionsOf(status: VirtualClusterStatus) {
  return Array.isArray(status.conditions) ? status.conditions : undefined;
}

export function syncVirtualCluster(
  request: CompositeSyncRequest<VirtualCluster>,
  config: VirtualClusterConfig,
  now: Date,
): CompositeSyncResponse {
  const vc = request.parent;
  const previous = previousStatus(vc);
  const previousConditions = conditionsOf(previous);
  const generation = vc.metadata.generation;
  const observation = observeVirtualCluster(vc, request.related, request.children, config);
  const deleting = vc.metadata.deletionTimestamp !== undefined;

  // 1. What was resolved before, and failures.
  const stored = previous.resolved;
  const hasStored = stored !== undefined && stored !== null;
  let resolved: ResolvedPlacement | undefined =
    hasStored && resolvedIsUsable(stored) ? stored : undefined;
  const sticky = stickyFailure(previous.phase, previousConditions);
  const older = olderNeighbours(vc, observation);
  let failure: Failure | undefined =
    sticky ??
    (hasStored && resolved === undefined
      ? {
          reason: REASONS.ResolvedSnapshotInvalid,
          message:
            'status.resolved lacks fields the children are rendered from; the children are kept as they are. Delete and recreate the VirtualCluster to place it again.',
        }
      : undefined) ??
    (older.length > 0
      ? {
          reason: REASONS.NamespaceOccupied,
          message: `Namespace ${observation.namespace} already hosts VirtualCluster ${older[0]?.metadata.name ?? ''}, which is older; a namespace hosts one VirtualCluster. Delete this one and create it in another host namespace.`,
        }
      : undefined);

  // 2. Resolution.
  let evaluation: ReturnType<typeof evaluateFeasibility> | undefined;
  let unresolved = verdict('Resolved', 'False', REASONS.NotResolved, 'Not resolved.');
  if (!hasStored && sticky === undefined && !deleting) {
    const stale = staleCopyEvidence(observation.children.all, now);
    if (stale !== undefined) {
      throw new RetryLaterError(
        `VirtualCluster ${observation.namespace}/${vc.metadata.name}: this copy has no status.resolved, but its ${stale.child.kind} ${stale.child.metadata?.name ?? ''} was created at ${stale.created}: the copy predates the status write that recorded the snapshot, so nothing is changed and the next sync reads the snapshot. If no snapshot appears within ${STALE_COPY_GRACE_SECONDS} s of the newest child's creation, the placement is evaluated again.`,
      );
    }
    evaluation = evaluateFeasibility(feasibilityInput(vc, observation, config, now));
    unresolved =
      evaluation.decision === Decision.Rejected
        ? verdict(
            'Resolved',
            'False',
            REASONS.FeasibilityRejected,
            'The feasibility evaluation rejected the placement; see status.feasibilityChecks.',
          )
        : verdict(
            'Resolved',
            'False',
            REASONS.FeasibilityUnknown,
            'The feasibility evaluation could not decide; see status.feasibilityChecks. It runs again on the next sync.',
          );
    const { cell, virtualNodeClass } = observation;
    const accepted =
      failure === undefined &&
      evaluation.decision === Decision.Accepted &&
      cell !== undefined &&
      virtualNodeClass !== undefined;
    if (accepted && !snapshotSourcesUsable(cell, virtualNodeClass)) {
      unresolved = verdict(
        'Resolved',
        'False',
        REASONS.NotResolved,
        `Cell ${cell.metadata.name} or VirtualNodeClass ${virtualNodeClass.metadata.name} lacks a field the snapshot needs (machine profile, ManagedCluster, storage class or entitlement).`,
      );
    } else if (accepted) {
      const profile = cell.spec.machineProfile.name;
      const endpoint = chooseEndpoint(
        observation.nodes,
        profile,
        vc.metadata.uid ?? `${observation.namespace}/${vc.metadata.name}`,
      );
      if (endpoint === undefined) {
        unresolved = verdict(
          'Resolved',
          'False',
          REASONS.NoEndpointAddress,
          `No Ready, schedulable Node labelled kubecell.io/machine-profile=${profile} lists an InternalIP, so there is no address for the API endpoint yet.`,
        );
      } else {
        resolved = snapshot(vc, cell, virtualNodeClass, endpoint.address, now);
      }
    }
  }
  if (failure !== undefined && resolved === undefined) {
    unresolved = verdict('Resolved', 'False', REASONS.NotResolved, failure.message);
  }
  const cellLiveness = assessCell(
    resolved?.cell.name ?? observation.cellName,
    observation.cellObserved,
    observation.cell,
    resolved,
  );
  if (failure === undefined && resolved !== undefined && cellLiveness.replaced) {
    failure = { reason: REASONS.CellReplaced, message: cellLiveness.verdict.message };
  }
  if (failure === undefined && resolved !== undefined && cellLiveness.managedClusterReplaced) {
    failure = {
      reason: REASONS.ManagedClusterReplaced,
      message: `Cell ${resolved.cell.name} reports its ManagedCluster replaced; the VirtualCluster is left as it is until an operator accepts the new cluster on the Cell.`,
    };
  }

  // 3. Children.
  const rendering = resolved === undefined ? undefined : renderChildren(vc, resolved, observation);
  const children = rendering?.children ?? observation.children.all.map(keptChild);

  // 4. Status.
  const port = resolved === undefined ? undefined : allocatedNodePort(observation.children.service);
  const url =
    resolved !== undefined && port !== undefined
      ? endpointUrl(resolved.endpointAddress, port)
      : undefined;
  const published = url !== undefined && secretPointsAt(observation.children.secret, url);
  const quota = observation.children.resourceQuota;
  const quotaInPlace =
    isJsonObject(quota?.status?.hard) && Object.keys(quota.status.hard).length > 0;

  const childrenVerdict = childrenApplied(rendering?.children, observation);
  const k3k = k3kReadiness(observation.children.cluster, resolved !== undefined);
  const kubeconfig = kubeconfigVerdict(resolved, observation, port, published, rendering?.secret);
  const missing: string[] = [];
  if (childrenVerdict.status !== 'True') missing.push(childrenVerdict.message);
  if (k3k.status !== 'True') missing.push('the k3k Cluster to be ready');
  if (port === undefined) {
    missing.push(`the apiserver to allocate the NodePort of Service ${observation.names.service}`);
  }
  if (!published) missing.push(`the kubeconfig Secret (${kubeconfig.reason})`);
  if (!quotaInPlace) {
    missing.push(`the ResourceQuota ${observation.names.resourceQuota} to be in force`);
  }
  const phase = phaseOf({
    deleting,
    failure,
    resolved: resolved !== undefined,
    unresolved,
    cell: cellLiveness,
    missing,
  });

  const verdicts: Verdict[] = [
    feasibleVerdict(evaluation, resolved, previousConditions),
    resolved === undefined
      ? unresolved
      : verdict(
          'Resolved',
          'True',
          REASONS.Resolved,
          `Resolved at ${resolved.resolvedAt} to Cell ${resolved.cell.name} (${resolved.cell.uid}) and class ${resolved.class.name} (${resolved.class.uid}); endpoint address ${resolved.endpointAddress}.`,
        ),
    childrenVerdict,
    k3k,
    kubeconfig,
    cellLiveness.verdict,
    verdict('Ready', phase.phase === 'Ready' ? 'True' : 'False', phase.reason, phase.message),
  ];

  const checks = evaluation?.checks ?? previous.feasibilityChecks;
  const status: VirtualClusterStatus = {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    phase: phase.phase,
    ...(resolved !== undefined ? { resolved } : hasStored ? { resolved: stored } : {}),
    ...(Array.isArray(checks) ? { feasibilityChecks: checks } : {}),
    ...(url !== undefined && resolved !== undefined && port !== undefined
      ? { endpoint: { address: resolved.endpointAddress, port } }
      : {}),
    ...(published ? { credential: { secretName: observation.names.secret } } : {}),
    ...(resolved !== undefined
      ? {
          host: {
            namespace: resolved.hostNamespace,
            ...(isJsonObject(quota?.status?.hard)
              ? { quotaHard: resourceList(quota.status.hard) }
              : {}),
            ...(isJsonObject(quota?.status?.used)
              ? { quotaUsed: resourceList(quota.status.used) }
              : {}),
          },
        }
      : {}),
    conditions: reconcileConditions(previousConditions, verdicts, now, generation),
  };
  const settled = phase.phase === 'Ready' || phase.phase === 'Failed';
  return {
    status,
    children,
    ...(settled ? {} : { resyncAfterSeconds: config.resyncSeconds }),
  };
}

interface Rendering {
  children: KubernetesObject[];
  secret: SecretPlan;
}

function renderChildren(
  vc: VirtualCluster,
  resolved: ResolvedPlacement,
  observation: VirtualClusterObservation,
): Rendering {
  const { names } = observation;
  const labels = childLabels(vc, resolved);
  const secret = planSecret(
    names,
    resolved,
    labels,
    allocatedNodePort(observation.children.service),
    observation.k3kKubeconfig,
    observation.children,
  );
  return {
    children: [
      renderK3kCluster(names, resolved, labels),
      renderResourceQuota(names, resolved, labels),
      renderLimitRange(names, resolved, labels),
      renderApiService(names, resolved, labels),
      ...(secret.kind === 'none' ? [] : [secret.secret]),
    ],
    secret,
  };
}

function describe(obj: KubernetesObject): string {
  return `${obj.kind} ${obj.metadata.name}`;
}

function childrenApplied(
  desired: KubernetesObject[] | undefined,
  observation: VirtualClusterObservation,
): Verdict {
  const observed = new Set(
    observation.children.all.map(
      (obj) => `${childKey(obj.apiVersion, obj.kind)} ${obj.metadata?.name}`,
    ),
  );
  if (desired === undefined) {
    const kept = observation.children.all;
    return kept.length === 0
      ? verdict('ChildrenApplied', 'False', REASONS.NotResolved, 'Not resolved: no children.')
      : verdict(
          'ChildrenApplied',
          'Unknown',
          REASONS.ChildrenKept,
          `No usable status.resolved; the existing children are kept unchanged: ${kept.map(describe).join(', ')}.`,
        );
  }
  const missing = desired.filter(
    (obj) => !observed.has(`${childKey(obj.apiVersion, obj.kind)} ${obj.metadata.name}`),
  );
  return missing.length === 0
    ? verdict(
        'ChildrenApplied',
        'True',
        REASONS.ChildrenApplied,
        `Every child exists: ${desired.map(describe).join(', ')}.`,
      )
    : verdict(
        'ChildrenApplied',
        'False',
        REASONS.ChildrenPending,
        `children to be applied: ${missing.map(describe).join(', ')}`,
      );
}

function kubeconfigVerdict(
  resolved: ResolvedPlacement | undefined,
  observation: VirtualClusterObservation,
  port: number | undefined,
  published: boolean,
  plan: SecretPlan | undefined,
): Verdict {
  const type = 'KubeconfigPublished';
  const secretName = observation.names.secret;
  if (resolved === undefined || plan === undefined) {
    return verdict(type, 'False', REASONS.NotResolved, 'Not resolved yet.');
  }
  if (published && port !== undefined) {
    return verdict(
      type,
      'True',
      REASONS.KubeconfigPublished,
      `Secret ${secretName} (key kubeconfig.yaml) points at ${endpointUrl(resolved.endpointAddress, port)}.`,
    );
  }
  if (port === undefined) {
    return verdict(
      type,
      'False',
      REASONS.WaitingForNodePort,
      `The NodePort of Service ${observation.names.service} is not allocated yet.`,
    );
  }
  const k3kSecret =
    `k3k's kubeconfig Secret ${observation.k3kKubeconfig?.metadata.name ?? ''}`.trim();
  if (plan.kind === 'none') {
    // Problems name fields and positions, never kubeconfig text (kubeconfig.ts).
    const withdrawn =
      plan.withdrawn === undefined
        ? ''
        : ` The published Secret ${secretName} was withdrawn: ${plan.withdrawn}.`;
    if (plan.why === 'k3kRejected') {
      return verdict(
        type,
        'False',
        REASONS.K3kKubeconfigRejected,
        `${k3kSecret} is not published: ${plan.problem ?? 'refused'}.${withdrawn}`,
      );
    }
    if (plan.why === 'k3kInvalid') {
      return verdict(
        type,
        'False',
        REASONS.K3kKubeconfigInvalid,
        `${k3kSecret} cannot be used: ${plan.problem ?? 'unreadable'}.${withdrawn}`,
      );
    }
    return verdict(
      type,
      'False',
      REASONS.WaitingForK3kKubeconfig,
      `k3k has not written the Cluster's admin kubeconfig Secret yet.${withdrawn}`,
    );
  }
  if (observation.children.secret === undefined) {
    return verdict(
      type,
      'False',
      REASONS.SecretNotApplied,
      `Secret ${secretName} does not exist yet.`,
    );
  }
  return verdict(
    type,
    'False',
    REASONS.SecretOutdated,
    plan.kind === 'keep'
      ? `Secret ${secretName} does not point at the current endpoint and k3k's kubeconfig is ${KEPT_BECAUSE[plan.why]}${plan.problem === undefined ? '' : ` (${plan.problem})`}; the published Secret is kept as it is.`
      : `Secret ${secretName} is being updated to point at the current endpoint.`,
  );
}

const KEPT_BECAUSE: Record<SecretPlanWhy, string> = {
  k3kMissing: 'gone',
  k3kInvalid: 'unreadable',
  k3kRejected: 'refused',
  noPort: 'unreadable',
};

function resourceList(source: Record<string, unknown>): ResourceList {
  const list: ResourceList = {};
  for (const key of Object.keys(source).sort(compareStrings)) {
    const value = source[key];
    if (typeof value === 'string' || typeof value === 'number') list[key] = value;
  }
  return list;
}

// --- finalize ---

/** The children that still exist, for `status.cleanup` (sorted, at most MAX_CLEANUP). */
export function remainingChildren(observation: VirtualClusterObservation): TypedObjectReference[] {
  return observation.children.all
    .map((obj) => ({ apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata?.name ?? '' }))
    .sort(
      (a, b) =>
        compareStrings(a.apiVersion, b.apiVersion) ||
        compareStrings(a.kind, b.kind) ||
        compareStrings(a.name, b.name),
    )
    .slice(0, MAX_CLEANUP);
}

export function finalizeVirtualCluster(
  request: CompositeSyncRequest<VirtualCluster>,
  config: VirtualClusterConfig,
  now: Date,
): CompositeSyncResponse {
  const vc = request.parent;
  const previous = previousStatus(vc);
  const previousConditions = conditionsOf(previous);
  const generation = vc.metadata.generation;
  const observation = observeVirtualCluster(vc, request.related, request.children, config);
  const cleanup = remainingChildren(observation);
  const remaining = observation.children.all.length;
  const skip = vc.metadata.annotations?.[ANNOTATIONS.skipCleanup] === 'true';
  const finalized = skip || remaining === 0;

  const message =
    remaining === 0
      ? 'The VirtualCluster is being deleted; every child is gone.'
      : skip
        ? `Cleanup abandoned (${ANNOTATIONS.skipCleanup}=true) with ${remaining} children left: ${cleanup.map((ref) => `${ref.kind} ${ref.name}`).join(', ')}; the garbage collector removes owned children.`
        : `The VirtualCluster is being deleted; waiting for ${remaining} children to go: ${cleanup.map((ref) => `${ref.kind} ${ref.name}`).join(', ')}.`;
  const verdicts: Verdict[] = [];
  for (const type of VC_CONDITION_TYPES) {
    if (type === 'Ready') {
      verdicts.push(verdict('Ready', 'False', REASONS.Deleting, message));
      continue;
    }
    const prior = findCondition(previousConditions, type);
    if (prior !== undefined)
      verdicts.push(verdict(type, prior.status, prior.reason, prior.message));
  }

  const status: VirtualClusterStatus = {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    phase: 'Deleting',
    ...(previous.resolved !== undefined && previous.resolved !== null
      ? { resolved: previous.resolved }
      : {}),
    ...(Array.isArray(previous.feasibilityChecks)
      ? { feasibilityChecks: previous.feasibilityChecks }
      : {}),
    // endpoint and credential are left out: the Service and the Secret are being removed.
    ...(isJsonObject(previous.host) ? { host: previous.host } : {}),
    cleanup,
    conditions: reconcileConditions(previousConditions, verdicts, now, generation),
  };
  return {
    status,
    children: [],
    finalized,
    ...(finalized ? {} : { resyncAfterSeconds: config.resyncSeconds }),
  };
}
