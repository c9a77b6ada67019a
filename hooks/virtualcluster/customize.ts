/**
 * The kubecell-virtualcluster customize hook: which objects the sync hook needs to see.
 *
 * Metacontroller caches this answer per VirtualCluster UID and generation for 20 minutes
 * (metacontroller v4.17.2 pkg/controller/common/customize/manager.go: `customizeCache`, keyed by
 * UID and generation; a status write changes neither), so whatever answer is cached must serve
 * every later sync. It depends on the spec, the name, the UID and the (immutable) namespace,
 * and on status only through the immutable `status.resolved.cell`, whose answer only narrows the
 * one given before resolution: the answer cached before it (for up to 20 minutes) still serves
 * (with a selector, observe.ts reads the resolved Cell missing from the Cells it matched as not
 * observed rather than gone).
 *
 * The rules rely on `version: v2` hooks (DESIGN section 6, decision D7): `namespace` + `names`
 * may name another namespace than the parent's, and cluster-scoped kinds are listed. The sync
 * hook filters what it receives.
 *
 * 1. before resolution, the Cell `spec.cellRef.name` in the controller namespace (with
 *    `spec.cellSelector`, every Cell there the selector matches, one of which resolution
 *    chooses: hooks/placement/select.ts): its status
 *    carries what the placement is judged on (liveness, inventory, the capacity already committed
 *    to its VirtualClusters) and the addresses the endpoint is chosen from
 *    (`status.nodeAddresses`); once resolved, the Cell's liveness record instead (the ConfigMap
 *    `kubecell-cell-<cell>` beside it, hooks/api/cell-liveness-record.ts), which changes only when
 *    the Cell's liveness does, not with its Nodes, pods or lease renewals (decision D36);
 * 2. the VirtualNodeClass `spec.classRef.name` (cluster-scoped, by name);
 * 3. the VirtualClusters of this namespace (a namespace hosts one, the oldest wins);
 * 4. k3k's admin kubeconfig Secret `k3k-<name>-kubeconfig` in this namespace;
 * 5. this Namespace, by name, for its `kubecell.io/host-namespace` label;
 * 6. before resolution, with `spec.cellSelector` and the annotation `kubecell.io/plan`, that
 *    VirtualClusterPlan of this namespace, by name: its chosen Cell is taken while it still fits
 *    (planned-cell.ts); read at creation (the answer is cached per generation, and an annotation
 *    changes none);
 * 7. its ManifestWork `kubecell-vc-<uid>` (work.open-cluster-management.io/v1), by name in any
 *    namespace: before resolution the ManagedCluster is not known, and this answer may stay
 *    cached after it; the sync hook reads the one in the resolved ManagedCluster's namespace.
 *
 * Once resolved to a `delivery: ManifestWork` Cell, rule 7 names the ManagedCluster's namespace
 * (a v2 hook may relate an object in another namespace than the parent's: manager.go
 * `selectByNamespaceAndNames`), and rule 4 is left out: k3k runs on the managed cluster, and the
 * kubeconfig comes back sealed through the work.
 *
 * Neither the VirtualClusters on the same Cell nor the Nodes are related: the Cell publishes
 * what the placement needs of them, so a sibling's change, a Node's status update or a lease
 * renewal re-syncs no VirtualCluster, and a request holds O(1) objects whatever the number of
 * Nodes and VirtualClusters (issue 14).
 *
 * Each rule also makes Metacontroller call sync again when a matching object changes; the
 * children never follow such a change (they are rendered from `status.resolved` only).
 */
import { cellLivenessRecordName } from '../api/cell-liveness-record.js';
import { API_VERSION } from '../api/kinds.js';
import type { VirtualCluster } from '../generated/types/index.js';
import type {
  CustomizeHookRequest,
  CustomizeHookResponse,
  RelatedResourceRule,
} from '../metacontroller/protocol.js';
import { placementRelatedResources } from '../feasibility/related.js';
import { virtualClusterWorkName } from '../remote/contract.js';
import { MANIFEST_WORK_API_VERSION, MANIFEST_WORK_RESOURCE } from '../remote/manifest-work.js';
import { snapshotWorkRef } from './work-ref.js';
import { k3kKubeconfigSecretName } from './names.js';
import { plannedName } from './planned-cell.js';

export function virtualClusterRelatedResources(
  vc: VirtualCluster,
  cellNamespace: string,
): RelatedResourceRule[] {
  const { cellRef, cellSelector } = vc.spec;
  const refs = {
    cellNamespace,
    cellName: cellRef?.name ?? '',
    ...(cellSelector === undefined ? {} : { cellSelector }),
    className: vc.spec.classRef.name,
    namespace: vc.metadata.namespace ?? '',
  };
  const namespace = refs.namespace;
  const resolvedCell = vc.status?.resolved?.cell.name;
  // Once resolved the Cell is never read again but for its liveness: its record replaces it.
  const placement = resolvedCell
    ? placementRelatedResources(refs).map((rule) =>
        rule.resource === 'cells' ? livenessRecordRule(cellNamespace, resolvedCell) : rule,
      )
    : placementRelatedResources(refs);
  const hostNamespace = { apiVersion: 'v1', resource: 'namespaces', names: [namespace] };
  const work = { apiVersion: MANIFEST_WORK_API_VERSION, resource: MANIFEST_WORK_RESOURCE };
  const plan = resolvedCell === undefined ? plannedName(vc) : undefined;
  if (plan !== undefined) {
    placement.push({
      apiVersion: API_VERSION,
      resource: 'virtualclusterplans',
      namespace,
      names: [plan],
    });
  }
  const remote = snapshotWorkRef(vc.status?.resolved, vc.metadata.uid);
  if (remote !== undefined) {
    return [
      ...placement,
      hostNamespace,
      { ...work, namespace: remote.namespace, names: [remote.name] },
    ];
  }
  return [
    ...placement,
    {
      apiVersion: 'v1',
      resource: 'secrets',
      namespace,
      names: [k3kKubeconfigSecretName(vc.metadata.name)],
    },
    hostNamespace,
    { ...work, names: [virtualClusterWorkName(vc.metadata.uid ?? '')] },
  ];
}

function livenessRecordRule(cellNamespace: string, cellName: string): RelatedResourceRule {
  return {
    apiVersion: 'v1',
    resource: 'configmaps',
    namespace: cellNamespace,
    names: [cellLivenessRecordName(cellName)],
  };
}

export function customizeVirtualCluster(
  request: CustomizeHookRequest<VirtualCluster>,
  cellNamespace: string,
): CustomizeHookResponse {
  return { relatedResources: virtualClusterRelatedResources(request.parent, cellNamespace) };
}
