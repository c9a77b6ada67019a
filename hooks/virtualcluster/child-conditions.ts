/**
 * The conditions on a VirtualCluster's children, ChildrenApplied, K3kReady and
 * KubeconfigPublished, and what Ready waits for among them: before resolution (the observed
 * children kept as they are) and on the hub, from what was observed and rendered. On a
 * `delivery: ManifestWork` Cell they come from the work (work-conditions.ts, which words k3k's
 * status and the children it lists as here). The other conditions and the phase: status.ts.
 */
import { childKey, type KubernetesObject } from '../metacontroller/protocol.js';
import { verdict } from '../status/conditions.js';
import type { SecretPlan, SecretPlanWhy } from './kubeconfig-secret.js';
import type { ChildNames } from './names.js';
import type { VirtualClusterObservation } from './observe.js';
import type { K3kCluster, ObservedCondition } from './observe-children.js';
import type { ChildrenState } from './placement.js';
import { REASONS } from './reasons.js';
import type { RenderedChildren } from './render.js';
import type { Verdict } from './status.js';

/** ChildrenApplied, K3kReady, KubeconfigPublished and what Ready waits for among them. */
export interface ChildConditions {
  applied: Verdict;
  k3k: Verdict;
  kubeconfig: Verdict;
  /** What Ready still waits for, in words; empty when nothing. */
  missing: string[];
  /** Ready's message once nothing is missing, when it is not the local one. */
  readyMessage?: string;
}

type Observed = Pick<VirtualClusterObservation, 'names' | 'children' | 'k3kKubeconfig'>;

/** Not resolved: the observed children are kept as they are, and nothing is published. */
export function keptChildConditions(
  children: ChildrenState,
  observation: Observed,
): ChildConditions {
  const applied = keptChildrenApplied(observation.children.all);
  const k3k = verdict('K3kReady', 'Unknown', REASONS.NotResolved, 'Not resolved yet.');
  const kubeconfig = kubeconfigVerdict('False', REASONS.NotResolved, 'Not resolved yet.');
  const verdicts = { applied, k3k, kubeconfig };
  return { ...verdicts, missing: missingForReady(verdicts, children, observation.names) };
}

/** Resolved, on the hub: every child rendered, and observed as Metacontroller applied it. */
export function hubChildConditions(
  children: ChildrenState,
  rendering: RenderedChildren,
  observation: Observed,
): ChildConditions {
  const applied = childrenAppliedCondition(rendering, observation.children.all);
  const k3k = k3kReadyCondition(observation.children.cluster);
  const kubeconfig = kubeconfigPublishedCondition(rendering, children, observation);
  const verdicts = { applied, k3k, kubeconfig };
  return { ...verdicts, missing: missingForReady(verdicts, children, observation.names) };
}

// --- ChildrenApplied ---

function applied(status: Verdict['status'], reason: string, message: string): Verdict {
  return verdict('ChildrenApplied', status, reason, message);
}

function keptChildrenApplied(kept: readonly KubernetesObject[]): Verdict {
  if (kept.length === 0) return applied('False', REASONS.NotResolved, 'Not resolved: no children.');
  const message = `No usable status.resolved; the existing children are kept unchanged: ${listedChildren(kept)}.`;
  return applied('Unknown', REASONS.ChildrenKept, message);
}

function childrenAppliedCondition(
  rendering: RenderedChildren,
  observed: readonly KubernetesObject[],
): Verdict {
  const missing = missingChildren(rendering.children, observed);
  return missing.length === 0
    ? applied(
        'True',
        REASONS.ChildrenApplied,
        `Every child exists: ${listedChildren(rendering.children)}.`,
      )
    : applied(
        'False',
        REASONS.ChildrenPending,
        `children to be applied: ${listedChildren(missing)}`,
      );
}

function childId(obj: KubernetesObject): string {
  return `${childKey(obj.apiVersion, obj.kind)} ${obj.metadata.name}`;
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
export function listedChildren(objects: readonly KubernetesObject[]): string {
  return objects.map((obj) => `${obj.kind} ${obj.metadata.name}`).join(', ');
}

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
export function k3kReadyCondition(cluster: K3kCluster | undefined): Verdict {
  const ready = (status: Verdict['status'], reason: string, message: string) =>
    verdict('K3kReady', status, reason, message);
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

function kubeconfigPublishedCondition(
  rendering: RenderedChildren,
  children: ChildrenState,
  observation: Observed,
): Verdict {
  const secretName = observation.names.secret;
  if (children.published && children.url !== undefined) {
    const message = `Secret ${secretName} (key kubeconfig.yaml) points at ${children.url}.`;
    return kubeconfigVerdict('True', REASONS.KubeconfigPublished, message);
  }
  if (children.port === undefined) {
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
  observation: Observed,
): Verdict {
  const k3kSecret =
    `k3k's kubeconfig Secret ${observation.k3kKubeconfig?.object.metadata.name ?? ''}`.trim();
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

// --- what Ready waits for ---

/** What Ready still waits for, in words, from the conditions; empty when nothing. */
function missingForReady(
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
