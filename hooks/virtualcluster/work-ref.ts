/**
 * A VirtualCluster on a Cell with `delivery: ManifestWork` (decision D34): its host Namespace,
 * quota, LimitRange, k3k Cluster and API Service reach the ManagedCluster in the ManifestWork
 * `kubecell-vc-<uid>` (hooks/remote/contract.ts), written by the kubecell-delivery controller in
 * the hub namespace named after the ManagedCluster. The hub never reads the managed cluster: what
 * this controller learns is the work's status, as OCM's work agent reports it.
 *
 * This module says where that work is; hooks/remote/manifest-work.ts reads it.
 */
import type { ResolvedPlacement } from '../generated/types/index.js';
import { virtualClusterWorkName } from '../remote/contract.js';
import {
  MANIFEST_WORK_API_VERSION,
  MANIFEST_WORK_KIND,
  type ObservedManifestWork,
} from '../remote/manifest-work.js';

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

/** Where the work of a stored snapshot is, when it places the children through one. */
export function snapshotWorkRef(
  resolved: ResolvedPlacement | undefined,
  uid: string | undefined,
): WorkRef | undefined {
  return resolved !== undefined && deliveredByWork(resolved) ? workRef(resolved, uid) : undefined;
}

/** Where an observed work is. */
export function refOf(work: ObservedManifestWork): WorkRef {
  return { namespace: work.metadata.namespace ?? '', name: work.metadata.name };
}

/** Whether two refs name the same work. */
export function sameWork(a: WorkRef, b: WorkRef): boolean {
  return a.namespace === b.namespace && a.name === b.name;
}

/** `status.cleanup`'s entry for the work. */
export function workReference(ref: WorkRef): { apiVersion: string; kind: string; name: string } {
  return { apiVersion: MANIFEST_WORK_API_VERSION, kind: MANIFEST_WORK_KIND, name: ref.name };
}
