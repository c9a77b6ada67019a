/**
 * The kubecell-virtualcluster customize hook: which objects the sync hook needs to see.
 *
 * Metacontroller caches this answer per VirtualCluster UID and generation for 20 minutes, so
 * it depends on the spec, the name and the (immutable) namespace only, never on status.
 *
 * The rules rely on `version: v2` hooks (DESIGN section 6, decision D7): a `labelSelector` rule
 * lists every namespace and cluster-scoped kinds, and `namespace` + `names` may name another
 * namespace than the parent's. The sync hook filters what it receives.
 *
 * 1. the Cell `spec.cellRef.name` in the controller namespace;
 * 2. the VirtualNodeClass `spec.classRef.name` (cluster-scoped, by name);
 * 3. the VirtualClusters on the same Cell (label `kubecell.io/cell=<cell>`, which the admission
 *    webhook sets): the capacity already committed;
 * 4. the VirtualClusters of this namespace (a namespace hosts one, the oldest wins);
 * 5. k3k's admin kubeconfig Secret `k3k-<name>-kubeconfig` in this namespace;
 * 6. this Namespace, by name, for its `kubecell.io/host-namespace` label;
 * 7. every Node carrying `kubecell.io/machine-profile`; sync keeps those of the resolved
 *    profile. The endpoint address is the InternalIP of a Ready Node of the Cell's profile, but
 *    the profile comes from the Cell, which customize must not read (its answer is cached per
 *    generation, and the Cell can be created after the VirtualCluster).
 *
 * Each rule also makes Metacontroller call sync again when a matching object changes; the
 * children never follow such a change (they are rendered from `status.resolved` only).
 */
import type { VirtualCluster } from '../generated/types/index.js';
import type {
  CustomizeHookRequest,
  CustomizeHookResponse,
  RelatedResourceRule,
} from '../metacontroller/protocol.js';
import { LABELS } from '../kube/labels.js';
import { placementRelatedResources } from '../feasibility/related.js';
import { k3kKubeconfigSecretName } from './names.js';

export function virtualClusterRelatedResources(
  vc: VirtualCluster,
  cellNamespace: string,
): RelatedResourceRule[] {
  const cellName = specString(vc.spec?.cellRef?.name);
  const className = specString(vc.spec?.classRef?.name);
  const namespace = vc.metadata.namespace ?? '';
  return [
    ...placementRelatedResources({ cellNamespace, cellName, className, namespace }),
    {
      apiVersion: 'v1',
      resource: 'secrets',
      namespace,
      names: [k3kKubeconfigSecretName(vc.metadata.name)],
    },
    { apiVersion: 'v1', resource: 'namespaces', names: [namespace] },
    {
      apiVersion: 'v1',
      resource: 'nodes',
      labelSelector: { matchExpressions: [{ key: LABELS.machineProfile, operator: 'Exists' }] },
    },
  ];
}

export function customizeVirtualCluster(
  request: CustomizeHookRequest<VirtualCluster>,
  cellNamespace: string,
): CustomizeHookResponse {
  return { relatedResources: virtualClusterRelatedResources(request.parent, cellNamespace) };
}

/** A spec string as sent, or '' when the (unvalidated) request lacks it. */
export function specString(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
