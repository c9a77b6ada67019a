/**
 * The kubecell-host-namespace sync and finalize hooks: the isolation baseline of every namespace
 * labelled `kubecell.io/host-namespace=true`, whether or not a VirtualCluster lives there yet.
 *
 * - sync: the Pod Security labels (see pod-security.ts), the annotations that say what was
 *   applied (annotations.ts), and the NetworkPolicies as attachments (network-policies.ts).
 *   Never a status: a Namespace's status subresource belongs to the namespace controller, and
 *   Metacontroller would write it.
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
import { LABELS } from '../kube/labels.js';
import type { Namespace } from '../kube/objects.js';
import { InvalidHookInputError } from '../metacontroller/invalid-input.js';
import {
  childKey,
  type DecoratorSyncRequest,
  type DecoratorSyncResponse,
} from '../metacontroller/protocol.js';
import { appliedAnnotations, clearedAnnotations } from './annotations.js';
import type { HostNamespaceConfig } from './config.js';
import { renderNetworkPolicies } from './network-policies.js';
import { clearedLabels, planPodSecurity } from './pod-security.js';

/** The attachment group of the NetworkPolicies, as Metacontroller keys it. */
export const NETWORK_POLICY_KEY = childKey('networking.k8s.io/v1', 'NetworkPolicy');

/** Resync of a finalize that waits for its NetworkPolicies to be deleted. */
export const FINALIZE_RESYNC_SECONDS = 5;

export function syncHostNamespace(
  request: DecoratorSyncRequest<Namespace>,
  config: HostNamespaceConfig,
): DecoratorSyncResponse {
  const namespace = request.parent;
  requireHostNamespaceLabel(namespace);
  const podSecurity = planPodSecurity(
    namespace.metadata.labels ?? {},
    namespace.metadata.annotations ?? {},
    config.podSecurityLevel,
  );
  return {
    labels: podSecurity.labels,
    annotations: appliedAnnotations(podSecurity),
    attachments: renderNetworkPolicies(namespace.metadata.name, config),
  };
}

export function finalizeHostNamespace(
  request: DecoratorSyncRequest<Namespace>,
): DecoratorSyncResponse {
  const namespace = request.parent;
  const labels = clearedLabels(
    namespace.metadata.labels ?? {},
    namespace.metadata.annotations ?? {},
  );
  const annotations = clearedAnnotations();
  if (networkPoliciesRemaining(request) > 0) {
    return { labels, annotations, attachments: [], resyncAfterSeconds: FINALIZE_RESYNC_SECONDS };
  }
  return { labels, annotations, attachments: [], finalized: true };
}

/**
 * The NetworkPolicies still observed. Metacontroller sends the group of every declared
 * attachment type, empty when none exists (getChildren). Without the group it manages no
 * NetworkPolicies for this decorator, so there is nothing to wait for, and waiting would hold a
 * deleted namespace forever.
 */
function networkPoliciesRemaining(request: DecoratorSyncRequest<Namespace>): number {
  return Object.keys(request.children[NETWORK_POLICY_KEY] ?? {}).length;
}

/** A selector mistake must not put a baseline on a namespace the platform did not opt in. */
function requireHostNamespaceLabel(namespace: Namespace): void {
  if (namespace.metadata.labels?.[LABELS.hostNamespace] !== 'true') {
    throw new InvalidHookInputError(
      `namespace ${namespace.metadata.name} is not labelled ${LABELS.hostNamespace}=true; ` +
        'the kubecell-host-namespace DecoratorController must select only host namespaces ' +
        `(labelSelector matchLabels ${LABELS.hostNamespace}: "true")`,
    );
  }
}
