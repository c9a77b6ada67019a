/**
 * The kubecell-host-namespace DecoratorController: the isolation baseline of every namespace
 * labelled `kubecell.io/host-namespace=true`, whether or not a VirtualCluster lives there yet.
 *
 * - sync: the Pod Security labels (see pod-security.ts), the annotations that say what was
 *   applied, and the NetworkPolicies as attachments. Never a status: a Namespace's status
 *   subresource belongs to the namespace controller, and Metacontroller would write it.
 * - finalize: Metacontroller calls it when the namespace is deleted and also when it stops
 *   matching the selector (the label was removed; `shouldCallFinalizeHook`,
 *   `pkg/controller/decorator/hooks.go`). It returns no attachments (Metacontroller deletes
 *   them), removes KubeCell's labels and annotations and keeps the platform's. It answers
 *   `finalized: true` only once no NetworkPolicy of its own is observed: Metacontroller removes
 *   its finalizer before it deletes the attachments (`syncParentObject`,
 *   `pkg/controller/decorator/controller.go`), and an unlabelled namespace without the
 *   finalizer is never synced again, so a failed delete would leave the policies behind.
 *
 * Metacontroller posts `{controller, object, attachments, related, finalizing}`; the request
 * check hands the handlers `object` as `parent` and `attachments` as `children`
 * (`DecoratorSyncRequest`, metacontroller/protocol.ts).
 */
import { InvalidHookInputError } from '../metacontroller/invalid-input.js';
import {
  childKey,
  type CustomizeHookResponse,
  type DecoratorSyncRequest,
  type DecoratorSyncResponse,
} from '../metacontroller/protocol.js';
import { LABELS } from '../kube/labels.js';
import type { Namespace } from '../kube/objects.js';
import type { DecoratorHooks } from '../metacontroller/controller-hooks.js';
import { BASELINE_VERSION, HOST_NAMESPACE_ANNOTATIONS } from './baseline.js';
import { loadHostNamespaceConfig, type HostNamespaceConfig } from './config.js';
import { renderNetworkPolicies } from './network-policies.js';
import { formatRecord, labelsToRemove, planPodSecurity } from './pod-security.js';

/** The attachment group of the NetworkPolicies, as Metacontroller keys it. */
export const NETWORK_POLICY_KEY = childKey('networking.k8s.io/v1', 'NetworkPolicy');

/** Resync of a finalize that waits for its NetworkPolicies to be deleted. */
export const FINALIZE_RESYNC_SECONDS = 5;

function requireNamespace(parent: Namespace): void {
  if (parent.apiVersion !== 'v1' || parent.kind !== 'Namespace') {
    throw new InvalidHookInputError(
      `parent is ${parent.apiVersion} ${parent.kind} ${parent.metadata.name}, expected a v1 ` +
        'Namespace: the kubecell-host-namespace DecoratorController must select namespaces only',
    );
  }
}

export function syncHostNamespace(
  request: DecoratorSyncRequest<Namespace>,
  config: HostNamespaceConfig,
): DecoratorSyncResponse {
  const namespace = request.parent;
  requireNamespace(namespace);
  const labels = namespace.metadata.labels ?? {};
  // A selector mistake must not put a baseline on a namespace the platform did not opt in.
  if (labels[LABELS.hostNamespace] !== 'true') {
    throw new InvalidHookInputError(
      `namespace ${namespace.metadata.name} is not labelled ${LABELS.hostNamespace}=true; ` +
        'the kubecell-host-namespace DecoratorController must select only host namespaces ' +
        `(labelSelector matchLabels ${LABELS.hostNamespace}: "true")`,
    );
  }
  const plan = planPodSecurity(
    labels,
    namespace.metadata.annotations ?? {},
    config.podSecurityLevel,
  );
  return {
    labels: plan.labels,
    annotations: {
      [HOST_NAMESPACE_ANNOTATIONS.baseline]: BASELINE_VERSION,
      [HOST_NAMESPACE_ANNOTATIONS.podSecurityApplied]: formatRecord(plan.applied) ?? null,
      [HOST_NAMESPACE_ANNOTATIONS.podSecurityKept]: formatRecord(plan.kept) ?? null,
      [HOST_NAMESPACE_ANNOTATIONS.podSecurityWeaker]: formatRecord(plan.weaker) ?? null,
    },
    attachments: renderNetworkPolicies(namespace.metadata.name, config),
  };
}

export function finalizeHostNamespace(
  request: DecoratorSyncRequest<Namespace>,
): DecoratorSyncResponse {
  const namespace = request.parent;
  requireNamespace(namespace);
  const labels: Record<string, null> = {};
  for (const key of labelsToRemove(
    namespace.metadata.labels ?? {},
    namespace.metadata.annotations ?? {},
  )) {
    labels[key] = null;
  }
  const annotations: Record<string, null> = {};
  for (const key of Object.values(HOST_NAMESPACE_ANNOTATIONS)) annotations[key] = null;
  // Metacontroller sends the group of every declared attachment type, empty when none exists
  // (getChildren). Without the group it manages no NetworkPolicies for this decorator, so there
  // is nothing to wait for, and waiting would hold a deleted namespace forever.
  const remaining = Object.keys(request.children[NETWORK_POLICY_KEY] ?? {}).length;
  if (remaining > 0) {
    return { labels, annotations, attachments: [], resyncAfterSeconds: FINALIZE_RESYNC_SECONDS };
  }
  return { labels, annotations, attachments: [], finalized: true };
}

export function hostNamespaceHooks(config: HostNamespaceConfig): DecoratorHooks<Namespace> {
  return {
    // No related objects: the baseline depends on the namespace and the settings only.
    customize: (): CustomizeHookResponse => ({ relatedResources: [] }),
    sync: (request) => syncHostNamespace(request, config),
    finalize: (request) => finalizeHostNamespace(request),
  };
}

/** The hooks with their settings read from the environment (throws a `ConfigError`). */
export function hostNamespaceHooksFromEnv(env: NodeJS.ProcessEnv): DecoratorHooks<Namespace> {
  return hostNamespaceHooks(loadHostNamespaceConfig(env));
}
