/**
 * A VirtualCluster on a Cell with `delivery: ManifestWork` (decision D34): its host Namespace,
 * quota, LimitRange, k3k Cluster and API Service reach the ManagedCluster in the ManifestWork
 * `kubecell-vc-<uid>` (hooks/remote/contract.ts), written by the kubecell-delivery controller in
 * the hub namespace named after the ManagedCluster. The hub never reads the managed cluster: what
 * this controller learns is the work's status, as OCM's work agent reports it.
 *
 * The shape read here is OCM's `work.open-cluster-management.io/v1` ManifestWork (ocm v1.3.1
 * `vendor/open-cluster-management.io/api/work/v1/types.go`): `status.conditions` (`Applied`,
 * `Available`); its feedback (`status.resourceStatus.manifests[].statusFeedback`) is read by
 * hooks/remote/feedback.ts. The request is not validated past the object's envelope, so every
 * field is read defensively.
 */
import type { ResolvedPlacement } from '../generated/types/index.js';
import { isJsonObject } from '../json/json.js';
import type { ObjectCondition } from '../kube/objects.js';
import { virtualClusterWorkName } from '../remote/contract.js';
import {
  MANIFEST_WORK_API_VERSION,
  MANIFEST_WORK_KIND,
  type ManifestWork,
} from '../remote/feedback.js';

export type { ManifestWork };

/** Whether the snapshot places the children through a ManifestWork (absent means Local). */
export function deliveredByWork(resolved: ResolvedPlacement | undefined): boolean {
  return resolved?.cell.delivery === 'ManifestWork';
}

/** Where a VirtualCluster's ManifestWork is: the ManagedCluster's namespace, its UID's name. */
export interface WorkRef {
  namespace: string;
  name: string;
}

export function workRef(resolved: ResolvedPlacement, uid: string | undefined): WorkRef {
  return { namespace: resolved.cell.managedClusterName, name: virtualClusterWorkName(uid ?? '') };
}

/**
 * The work of a stored snapshot read leniently (finalize must not depend on a usable one): on a
 * ManifestWork Cell with a ManagedCluster name, where the work is; otherwise undefined.
 */
export function snapshotWorkRef(resolved: unknown, uid: string | undefined): WorkRef | undefined {
  if (!isJsonObject(resolved) || !isJsonObject(resolved['cell'])) return undefined;
  const { delivery, managedClusterName } = resolved['cell'];
  if (delivery !== 'ManifestWork' || typeof managedClusterName !== 'string') return undefined;
  if (managedClusterName === '') return undefined;
  return { namespace: managedClusterName, name: virtualClusterWorkName(uid ?? '') };
}

/** The work at `ref` among the observed ones (customize relates it by name, any namespace). */
export function findWork(
  works: readonly ManifestWork[] | undefined,
  ref: WorkRef,
): ManifestWork | undefined {
  return works?.find(
    (work) => work.metadata?.name === ref.name && work.metadata.namespace === ref.namespace,
  );
}

/** One of the work's own conditions (`Applied`, `Available`), when it is well formed. */
export function workCondition(work: ManifestWork, type: string): ObjectCondition | undefined {
  const status = isJsonObject(work.status) ? work.status : undefined;
  const conditions = status?.['conditions'];
  if (!Array.isArray(conditions)) return undefined;
  return conditions.find(
    (condition): condition is ObjectCondition =>
      isJsonObject(condition) &&
      condition['type'] === type &&
      typeof condition['status'] === 'string',
  );
}

/** `status.cleanup`'s entry for the work. */
export function workReference(ref: WorkRef): { apiVersion: string; kind: string; name: string } {
  return { apiVersion: MANIFEST_WORK_API_VERSION, kind: MANIFEST_WORK_KIND, name: ref.name };
}
