/**
 * The ChildrenApplied, K3kReady and KubeconfigPublished conditions of a VirtualCluster on a
 * `delivery: ManifestWork` Cell, and what its Ready waits for, from what its ManifestWork fed
 * back (work-feedback.ts, read in observe; work-placement.ts). The other conditions and the phase
 * are the local ones (status.ts).
 *
 * - ChildrenApplied: the work exists and OCM's work agent reports it `Applied`, and the
 *   kubeconfig Secret rendered on the hub exists.
 * - K3kReady: what it means locally (k3k's `Ready` condition, else its phase), from k3k's status
 *   of the Cluster fed back through the work; the work missing says so.
 * - KubeconfigPublished: the NodePort and the sealed kubeconfig fed back, opened with the hub's
 *   sealing key, and the Secret published from it exactly as for a local Cell.
 *
 * No message holds a time or anything of the kubeconfig, so the same work gives the same status.
 */
import { echo } from '../json/echo.js';
import { SEALING_PREVIOUS_KEY_FILE_ENV } from '../remote/sealing-keys.js';
import { verdict } from '../status/conditions.js';
import {
  describeCondition,
  k3kReadyCondition,
  listedChildren,
  missingChildren,
  type ChildConditions,
} from './child-conditions.js';
import type { SecretPlan } from './kubeconfig-secret.js';
import type { VirtualClusterObservation } from './observe.js';
import type { ChildrenState, WorkPlacement, WorkState } from './placement.js';
import { REASONS } from './reasons.js';
import type { RenderedChildren } from './render.js';
import type { Verdict } from './status.js';

type Words = [status: Verdict['status'], reason: string, message: string];

type Observed = Pick<VirtualClusterObservation, 'names' | 'children'>;

/** The conditions on the children in the work, and what Ready waits for among them. */
export function workChildConditions(
  placement: WorkPlacement,
  rendering: RenderedChildren,
  observation: Observed,
): ChildConditions {
  const { work, children } = placement;
  const applied = workChildrenAppliedCondition(work, rendering, observation);
  const k3k = workK3kReadyCondition(work);
  const kubeconfig = workKubeconfigPublishedCondition(work, rendering, children, observation);
  const verdicts = { applied, k3k, kubeconfig };
  const missing = workMissingForReady(work, verdicts, children, observation.names.service);
  return { ...verdicts, missing, readyMessage: workReadyMessage(work, children.url) };
}

/** Why the work is not known to be there; undefined when it is. */
function workMissing(workState: WorkState): Words | undefined {
  const { namespace, name } = workState.ref;
  if (!workState.observed) {
    const message = `ManifestWorks were not observed (no ManifestWork group in the request); ManifestWork ${name} in namespace ${namespace} is read on the next sync.`;
    return ['Unknown', REASONS.WorkNotObserved, message];
  }
  if (workState.feedback === undefined) {
    const message = `ManifestWork ${name} does not exist in namespace ${namespace} yet: the kubecell-delivery controller writes it for ManagedCluster ${namespace}.`;
    return ['False', REASONS.WorkNotFound, message];
  }
  return undefined;
}

/** Why the work is not there or not applied; undefined when OCM's work agent applied it. */
function workProblem(workState: WorkState): Words | undefined {
  const missing = workMissing(workState);
  const applied = workState.feedback?.applied;
  if (missing !== undefined || applied?.status === 'True') return missing;
  const { namespace, name } = workState.ref;
  const state = describeCondition('Applied', applied, (text) => echo(text));
  return [
    'False',
    REASONS.WorkNotApplied,
    `OCM's work agent of ManagedCluster ${namespace} has not applied ManifestWork ${name}: ${state}.`,
  ];
}

function workChildrenAppliedCondition(
  workState: WorkState,
  rendering: RenderedChildren,
  observation: Observed,
): Verdict {
  const problem = workProblem(workState);
  if (problem !== undefined) return verdict('ChildrenApplied', ...problem);
  const missing = missingChildren(rendering.children, observation.children.all);
  if (missing.length > 0) {
    const message = `children to be applied: ${listedChildren(missing)}`;
    return verdict('ChildrenApplied', 'False', REASONS.ChildrenPending, message);
  }
  const { namespace, name } = workState.ref;
  const onHub =
    rendering.children.length === 0 ? '' : `; on the hub: ${listedChildren(rendering.children)}`;
  const message = `ManifestWork ${name} is applied on ManagedCluster ${namespace}${onHub}.`;
  return verdict('ChildrenApplied', 'True', REASONS.WorkApplied, message);
}

/**
 * k3k's own word on its Cluster, fed back through the work, read exactly as a local Cluster's
 * (child-conditions.ts `k3kReadyCondition`): no Cluster while the work agent does not report it
 * existing.
 */
function workK3kReadyCondition(workState: WorkState): Verdict {
  const missing = workMissing(workState);
  if (missing !== undefined) return verdict('K3kReady', ...missing);
  return k3kReadyCondition(workState.feedback?.cluster);
}

function workKubeconfigPublishedCondition(
  workState: WorkState,
  rendering: RenderedChildren,
  children: ChildrenState,
  observation: Observed,
): Verdict {
  const published = (words: Words) => verdict('KubeconfigPublished', ...words);
  const { names } = observation;
  const { name } = workState.ref;
  if (children.published && children.url !== undefined) {
    const message = `Secret ${names.secret} (key kubeconfig.yaml) points at ${children.url}.`;
    return published(['True', REASONS.KubeconfigPublished, message + rotationNote(workState)]);
  }
  if (children.port === undefined) {
    const message = `ManifestWork ${name} has not fed back the NodePort of Service ${names.service} yet (feedback nodePort).`;
    return published([
      'False',
      REASONS.WaitingForNodePort,
      message + kept(rendering.secret, names.secret),
    ]);
  }
  return published(kubeconfigWords(workState, rendering.secret, observation));
}

/**
 * During a rotation of the hub's sealing key, whether this kubeconfig still comes sealed for the
 * previous key: the rotation is over once no VirtualCluster says so.
 */
function rotationNote(workState: WorkState): string {
  const { kubeconfig } = workState;
  return kubeconfig.state === 'unsealed' && kubeconfig.hubKey === 'previous'
    ? ` The cell agent sealed it for the previous sealing key (${SEALING_PREVIOUS_KEY_FILE_ENV}); it seals it for the current one once it has that public key.`
    : '';
}

/** Why the kubeconfig is not published yet, once the NodePort is known. */
function kubeconfigWords(workState: WorkState, plan: SecretPlan, observation: Observed): Words {
  const { name } = workState.ref;
  const secret = observation.names.secret;
  const after = kept(plan, secret);
  const { kubeconfig } = workState;
  switch (kubeconfig.state) {
    case 'absent':
      return [
        'False',
        REASONS.WaitingForSealedKubeconfig,
        `ManifestWork ${name} has not fed back the sealed kubeconfig of ConfigMap ${workState.sealedConfigMap} yet (feedback sealedKubeconfig).${after}`,
      ];
    case 'noKey':
      return [
        'False',
        REASONS.SealingKeyMissing,
        `The hook server has no sealing key (KUBECELL_SEALING_KEY_FILE is unset), so the kubeconfig ManifestWork ${name} fed back sealed cannot be opened.${after}`,
      ];
    case 'invalid':
      return [
        'False',
        REASONS.SealedKubeconfigInvalid,
        `The sealed kubeconfig ManifestWork ${name} fed back cannot be opened: ${kubeconfig.problem}.${after}`,
      ];
    case 'unsealed':
      return unsealedWords(workState, plan, observation);
  }
}

/** The kubeconfig was opened: refused by the allowlist, or its Secret is on its way. */
function unsealedWords(workState: WorkState, plan: SecretPlan, observation: Observed): Words {
  const secret = observation.names.secret;
  const source = `k3k's kubeconfig fed back sealed through ConfigMap ${workState.sealedConfigMap}`;
  if (plan.kind !== 'render') {
    const rejected = plan.why === 'k3kRejected';
    return [
      'False',
      rejected ? REASONS.K3kKubeconfigRejected : REASONS.K3kKubeconfigInvalid,
      `${source} ${rejected ? 'is not published' : 'cannot be used'}: ${plan.problem ?? (rejected ? 'refused' : 'unreadable')}.${kept(plan, secret)}`,
    ];
  }
  if (observation.children.secret === undefined) {
    return ['False', REASONS.SecretNotApplied, `Secret ${secret} does not exist yet.`];
  }
  const message = `Secret ${secret} is being updated to point at the current endpoint.`;
  return ['False', REASONS.SecretOutdated, message];
}

/** What became of the Secret already published: kept as it is, or withdrawn (and why). */
function kept(plan: SecretPlan, secret: string): string {
  if (plan.kind === 'keep') return ` The published Secret ${secret} is kept as it is.`;
  if (plan.kind === 'none' && plan.withdrawn !== undefined) {
    return ` The published Secret ${secret} was withdrawn: ${plan.withdrawn}.`;
  }
  return '';
}

/** What Ready still waits for on a ManifestWork Cell, in words; empty when nothing. */
function workMissingForReady(
  workState: WorkState,
  conditions: { applied: Verdict; k3k: Verdict; kubeconfig: Verdict },
  children: ChildrenState,
  service: string,
): string[] {
  const { namespace, name } = workState.ref;
  const { applied, k3k, kubeconfig } = conditions;
  const missing: string[] = [];
  if (applied.status !== 'True') {
    missing.push(
      applied.reason === REASONS.ChildrenPending
        ? applied.message
        : `ManifestWork ${name} in namespace ${namespace} to be applied (${applied.reason})`,
    );
  }
  if (k3k.status !== 'True') missing.push(`the k3k Cluster on the managed cluster (${k3k.reason})`);
  if (children.port === undefined) {
    missing.push(`ManifestWork ${name} to feed back the NodePort of Service ${service}`);
  }
  if (!children.published) missing.push(`the kubeconfig Secret (${kubeconfig.reason})`);
  return missing;
}

/** Ready's message on a ManifestWork Cell once nothing is missing. */
function workReadyMessage(workState: WorkState, url: string | undefined): string {
  const { namespace, name } = workState.ref;
  return `ManifestWork ${name} is applied on ManagedCluster ${namespace}, k3k reports the Cluster ready, and its kubeconfig came back sealed and is published for ${url ?? ''}.`;
}
