/**
 * The VirtualCluster's conditions and phase, as pure functions of what a sync observed, assessed
 * and rendered. Each condition has its own function, in the order the status lists them
 * (VC_CONDITION_TYPES); Ready summarises them through the phase. sync.ts puts them in the status.
 *
 * Phase, first match wins: Deleting (deletionTimestamp set) → Failed (a failure of
 * STICKY_FAILURES seen now or before, or the resolved Cell's ManagedCluster replaced) →
 * Pending (not resolved) → Degraded (the resolved Cell lost liveness or its inventory) →
 * Provisioning (k3k not Ready, no NodePort, kubeconfig not published or quota not in place) →
 * Ready.
 */
import type { Condition, FeasibilityCheck, ResolvedPlacement } from '../generated/types/index.js';
import { Decision } from '../feasibility/reasons.js';
import { childKey, type KubernetesObject } from '../metacontroller/protocol.js';
import { findCondition, verdict, type ConditionVerdict } from '../status/conditions.js';
import type { Assessment } from './assess.js';
import type { ChildrenState } from './placement.js';
import { endpointUrl } from './kubeconfig.js';
import type { ChildNames } from './names.js';
import type { K3kCluster, ObservedCondition, VirtualClusterObservation } from './observe.js';
import {
  REASONS,
  VC_CONDITION_TYPES,
  type VirtualClusterConditionType,
  type VirtualClusterPhase,
} from './reasons.js';
import type { CellLiveness } from './cell-liveness.js';
import type { SecretPlan, SecretPlanWhy } from './kubeconfig-secret.js';
import type { Rendering } from './render.js';
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
        'The feasibility evaluation rejected the placement; see status.feasibilityChecks.',
      ];
    case 'undecided':
      return [
        REASONS.FeasibilityUnknown,
        'The feasibility evaluation could not decide; see status.feasibilityChecks. It runs again on the next sync.',
      ];
    case 'noEndpointAddress':
      return [
        REASONS.NoEndpointAddress,
        `The Cell's status.nodeAddresses lists no usable address: no Ready, schedulable Node labelled kubecell.io/machine-profile=${unresolved.profile} has an InternalIP that is an IP address (the Cell's NodeAddressesValid condition names those whose is not), so there is no address for the API endpoint yet.`,
      ];
  }
}

// --- ChildrenApplied ---

export function childrenAppliedCondition(
  rendering: Rendering,
  observation: VirtualClusterObservation,
): Verdict {
  const applied = (status: Verdict['status'], reason: string, message: string) =>
    verdict('ChildrenApplied', status, reason, message);
  const observed = observation.children.all;
  if (!rendering.rendered && observed.length === 0) {
    return applied('False', REASONS.NotResolved, 'Not resolved: no children.');
  }
  if (!rendering.rendered) {
    const message = `No usable status.resolved; the existing children are kept unchanged: ${listed(observed)}.`;
    return applied('Unknown', REASONS.ChildrenKept, message);
  }
  const missing = missingChildren(rendering.children, observed);
  return missing.length === 0
    ? applied('True', REASONS.ChildrenApplied, `Every child exists: ${listed(rendering.children)}.`)
    : applied('False', REASONS.ChildrenPending, `children to be applied: ${listed(missing)}`);
}

function childId(obj: KubernetesObject): string {
  return `${childKey(obj.apiVersion, obj.kind)} ${obj.metadata.name}`;
}

function listed(objects: readonly KubernetesObject[]): string {
  return objects.map((obj) => `${obj.kind} ${obj.metadata.name}`).join(', ');
}

/** The rendered children that were not observed (by type and name). */
export function missingChildren(
  rendered: readonly KubernetesObject[],
  observed: readonly KubernetesObject[],
): KubernetesObject[] {
  const present = new Set(observed.map(childId));
  return rendered.filter((obj) => !present.has(childId(obj)));
}

/** `Kind name, Kind name` of the objects, for messages. */
export const listedChildren = listed;

/** "Ready=False (Reason: message)" of a condition, or that the object does not report it. */
export function describeCondition(
  type: string,
  condition: ObservedCondition | undefined,
  echo: (text: string) => string,
): string {
  if (condition === undefined) return `no ${type} condition`;
  const { reason, message } = condition;
  const detail = message ? `: ${echo(message)}` : '';
  return `${type}=${echo(String(condition.status))}${reason ? ` (${echo(reason)}${detail})` : ''}`;
}

// --- K3kReady ---

/** k3k's Ready condition when present (it is authoritative), else its phase. */
export function k3kReadyCondition(cluster: K3kCluster | undefined, resolved: boolean): Verdict {
  const ready = (status: Verdict['status'], reason: string, message: string) =>
    verdict('K3kReady', status, reason, message);
  if (!resolved) return ready('Unknown', REASONS.NotResolved, 'Not resolved yet.');
  if (cluster === undefined) {
    return ready('False', REASONS.K3kClusterMissing, 'The k3k Cluster does not exist yet.');
  }
  const phase = cluster.status?.phase ?? undefined;
  const conditions = cluster.status?.conditions ?? [];
  const k3kReady = conditions.find((condition) => condition.type === 'Ready');
  const isReady = k3kReady !== undefined ? k3kReady.status === 'True' : phase === 'Ready';
  const detail = [
    `phase ${phase ?? '(none)'}`,
    describeCondition('Ready', k3kReady, (text) => text),
  ].join(', ');
  return isReady
    ? ready('True', REASONS.K3kReady, `k3k reports the Cluster ready: ${detail}.`)
    : ready('False', REASONS.K3kNotReady, `k3k does not report the Cluster ready: ${detail}.`);
}

// --- KubeconfigPublished ---

function kubeconfigVerdict(status: Verdict['status'], reason: string, message: string): Verdict {
  return verdict('KubeconfigPublished', status, reason, message);
}

export function kubeconfigPublishedCondition(
  resolved: ResolvedPlacement | undefined,
  rendering: Rendering,
  children: ChildrenState,
  observation: VirtualClusterObservation,
): Verdict {
  const { port } = children;
  const secretName = observation.names.secret;
  if (resolved === undefined || !rendering.rendered) {
    return kubeconfigVerdict('False', REASONS.NotResolved, 'Not resolved yet.');
  }
  if (children.published && port !== undefined) {
    const message = `Secret ${secretName} (key kubeconfig.yaml) points at ${endpointUrl(resolved.endpointAddress, port)}.`;
    return kubeconfigVerdict('True', REASONS.KubeconfigPublished, message);
  }
  if (port === undefined) {
    const message = `The NodePort of Service ${observation.names.service} is not allocated yet.`;
    return kubeconfigVerdict('False', REASONS.WaitingForNodePort, message);
  }
  const plan = rendering.secret;
  if (plan.kind === 'none') return k3kKubeconfigUnusable(plan, observation);
  if (observation.children.secret === undefined) {
    const message = `Secret ${secretName} does not exist yet.`;
    return kubeconfigVerdict('False', REASONS.SecretNotApplied, message);
  }
  return kubeconfigVerdict(
    'False',
    REASONS.SecretOutdated,
    plan.kind === 'keep'
      ? `Secret ${secretName} does not point at the current endpoint and k3k's kubeconfig is ${KEPT_BECAUSE[plan.why]}${plan.problem === undefined ? '' : ` (${plan.problem})`}; the published Secret is kept as it is.`
      : `Secret ${secretName} is being updated to point at the current endpoint.`,
  );
}

/** Nothing to publish: k3k's kubeconfig is refused, unreadable or not written yet. */
function k3kKubeconfigUnusable(
  plan: Extract<SecretPlan, { kind: 'none' }>,
  observation: VirtualClusterObservation,
): Verdict {
  const k3kSecret =
    `k3k's kubeconfig Secret ${observation.k3kKubeconfig?.metadata.name ?? ''}`.trim();
  // Problems name fields and positions, never kubeconfig text (kubeconfig.ts).
  const withdrawn =
    plan.withdrawn === undefined
      ? ''
      : ` The published Secret ${observation.names.secret} was withdrawn: ${plan.withdrawn}.`;
  if (plan.why === 'k3kRejected') {
    const message = `${k3kSecret} is not published: ${plan.problem ?? 'refused'}.${withdrawn}`;
    return kubeconfigVerdict('False', REASONS.K3kKubeconfigRejected, message);
  }
  if (plan.why === 'k3kInvalid') {
    const message = `${k3kSecret} cannot be used: ${plan.problem ?? 'unreadable'}.${withdrawn}`;
    return kubeconfigVerdict('False', REASONS.K3kKubeconfigInvalid, message);
  }
  const message = `k3k has not written the Cluster's admin kubeconfig Secret yet.${withdrawn}`;
  return kubeconfigVerdict('False', REASONS.WaitingForK3kKubeconfig, message);
}

const KEPT_BECAUSE: Record<SecretPlanWhy, string> = {
  k3kMissing: 'gone',
  k3kInvalid: 'unreadable',
  k3kRejected: 'refused',
  noPort: 'unreadable',
};

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

/** What Ready still waits for, in words, from the conditions; empty when nothing. */
export function missingForReady(
  conditions: { applied: Verdict; k3k: Verdict; kubeconfig: Verdict },
  children: ChildrenState,
  names: ChildNames,
): string[] {
  const missing: string[] = [];
  const { applied, k3k, kubeconfig } = conditions;
  if (applied.status !== 'True') missing.push(applied.message);
  if (k3k.status !== 'True') missing.push('the k3k Cluster to be ready');
  if (children.port === undefined) {
    missing.push(`the apiserver to allocate the NodePort of Service ${names.service}`);
  }
  if (!children.published) missing.push(`the kubeconfig Secret (${kubeconfig.reason})`);
  if (!children.quotaInPlace) {
    missing.push(`the ResourceQuota ${names.resourceQuota} to be in force`);
  }
  return missing;
}

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
