/**
 * Consumer pods: what holds a cell's GPU, and what is waiting for one.
 *
 * A consumer pod is a pod in a consumer namespace (the configured namespace selector, by
 * default the host namespaces `kubecell.io/host-namespace=true`) that requests the GPU resource
 * (by default `nvidia.com/gpu`): some container or init container asks for more than zero of it,
 * in `requests` or, as Kubernetes defaults extended resources, in `limits` alone.
 *
 * - A consumer pod **holds** a cell's GPU when it is bound to the cell's Node (`spec.nodeName`)
 *   and not terminal (phase neither Succeeded nor Failed). A pod being deleted still holds it
 *   until it is gone.
 * - A consumer pod is **pending demand** for a pool when it is not bound, not terminal, not being
 *   deleted, the scheduler has marked it unschedulable (condition PodScheduled=False, reason
 *   Unschedulable), and it targets the pool: its `nodeSelector` has
 *   `kubecell.io/machine-profile=<spec.machineProfile>` or `kubecell.io/pool=<pool>`, or one of
 *   its required node-affinity terms has an `In` expression on one of these keys that lists the
 *   value.
 */
import { compareQuantities, parseQuantity, ZERO_QUANTITY } from '../quantity/quantity.js';
import { LABEL_KEYS } from './constants.js';
import type { PodContainer, PodObject } from './objects.js';

function containerAsks(container: PodContainer, resource: string): boolean {
  const value =
    container.resources?.requests?.[resource] ?? container.resources?.limits?.[resource];
  if (value === undefined) return false;
  try {
    return compareQuantities(parseQuantity(value), ZERO_QUANTITY) > 0;
  } catch {
    return false;
  }
}

export function requestsGpu(pod: PodObject, resource: string): boolean {
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  return containers.some((container) => containerAsks(container, resource));
}

export function isTerminal(pod: PodObject): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** Consumer pods holding a GPU, by Node name. */
export function holdersByNode(pods: readonly PodObject[], resource: string): Map<string, string[]> {
  const byNode = new Map<string, string[]>();
  for (const pod of pods) {
    const node = pod.spec?.nodeName;
    if (!node || isTerminal(pod) || !requestsGpu(pod, resource)) continue;
    const list = byNode.get(node) ?? [];
    list.push(`${pod.metadata.namespace ?? ''}/${pod.metadata.name}`);
    byNode.set(node, list);
  }
  for (const list of byNode.values()) list.sort();
  return byNode;
}

function unschedulable(pod: PodObject): boolean {
  return (
    pod.status?.conditions?.some(
      (condition) =>
        condition.type === 'PodScheduled' &&
        condition.status === 'False' &&
        condition.reason === 'Unschedulable',
    ) ?? false
  );
}

/** Does the pod ask to run on this pool's Nodes (by profile or pool label)? */
export function targetsPool(pod: PodObject, pool: string, profile: string): boolean {
  const wanted: [string, string][] = [
    [LABEL_KEYS.machineProfile, profile],
    [LABEL_KEYS.pool, pool],
  ];
  const selector = pod.spec?.nodeSelector ?? {};
  if (wanted.some(([key, value]) => selector[key] === value)) return true;
  const terms =
    pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
      ?.nodeSelectorTerms ?? [];
  return terms.some((term) =>
    (term.matchExpressions ?? []).some(
      (expression) =>
        expression.operator === 'In' &&
        wanted.some(
          ([key, value]) => expression.key === key && (expression.values ?? []).includes(value),
        ),
    ),
  );
}

/** The pending demand for the pool: unschedulable consumer pods that target it, as namespace/name. */
export function pendingDemand(
  pods: readonly PodObject[],
  resource: string,
  pool: string,
  profile: string,
): string[] {
  return pods
    .filter(
      (pod) =>
        !pod.spec?.nodeName &&
        !isTerminal(pod) &&
        pod.metadata.deletionTimestamp === undefined &&
        unschedulable(pod) &&
        requestsGpu(pod, resource) &&
        targetsPool(pod, pool, profile),
    )
    .map((pod) => `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`)
    .sort();
}
