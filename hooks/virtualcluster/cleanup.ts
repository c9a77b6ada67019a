/**
 * Deletion of a VirtualCluster. Finalize returns no children, so Metacontroller deletes each
 * (with a UID precondition); what still exists is listed in `status.cleanup`, and deletion may
 * finish once nothing remains, or at once with the annotation `kubecell.io/skip-cleanup=true`
 * (the garbage collector then removes the owned children). Nothing here reads the spec.
 *
 * On a `delivery: ManifestWork` Cell the children on the managed cluster are gone when the
 * VirtualCluster's ManifestWork is: the kubecell-delivery controller stops rendering the work of
 * a VirtualCluster being deleted, Metacontroller deletes it, and OCM removes the work only once
 * its work agent has deleted every applied resource (ocm v1.3.1
 * pkg/work/spoke/controllers/finalizercontroller/). Until then the work is listed too; when
 * ManifestWorks were not observed it counts as remaining, since nothing shows it gone.
 */
import type { TypedObjectReference, VirtualCluster } from '../generated/types/index.js';
import { compareStrings } from '../json/compare.js';
import { ANNOTATIONS } from '../kube/labels.js';
import { workReference, type WorkRef } from './work-ref.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';

/** Most entries `status.cleanup` may hold (its maxItems). */
export const MAX_CLEANUP = 32;

export interface Cleanup {
  /** The children that still exist, for `status.cleanup` (sorted, at most MAX_CLEANUP). */
  remaining: TypedObjectReference[];
  /** Deletion may finish: every child is gone, or cleanup is skipped. */
  finalized: boolean;
  /** What deletion waits for, in words (the Ready condition's message). */
  message: string;
}

/** The VirtualCluster's ManifestWork, on a ManifestWork Cell: observed, and still there. */
export interface WorkCleanup {
  ref: WorkRef;
  observed: boolean;
  present: boolean;
}

export function assessCleanup(
  vc: VirtualCluster,
  children: readonly KubernetesObject[],
  work?: WorkCleanup,
): Cleanup {
  const waitForWork = work !== undefined && (work.present || !work.observed);
  const remaining = remainingChildren(children, waitForWork ? [workReference(work.ref)] : []);
  const left = children.length + (waitForWork ? 1 : 0);
  const skip = vc.metadata.annotations?.[ANNOTATIONS.skipCleanup] === 'true';
  return {
    remaining,
    finalized: skip || left === 0,
    message: cleanupMessage(left, skip, remaining) + (waitForWork ? workNote(work) : ''),
  };
}

/** Where the work is, and what its going away waits for. */
function workNote(work: WorkCleanup): string {
  const { namespace, name } = work.ref;
  return work.observed
    ? ` ManifestWork ${name} (namespace ${namespace}) goes once OCM's work agent has deleted its resources on ManagedCluster ${namespace}.`
    : ` ManifestWorks were not observed: ManifestWork ${name} (namespace ${namespace}) is not known to be gone.`;
}

/** The children that still exist, sorted by apiVersion, kind and name, at most MAX_CLEANUP. */
function remainingChildren(
  children: readonly KubernetesObject[],
  others: readonly TypedObjectReference[],
): TypedObjectReference[] {
  return children
    .map((obj) => ({ apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name }))
    .concat(others)
    .sort(
      (a, b) =>
        compareStrings(a.apiVersion, b.apiVersion) ||
        compareStrings(a.kind, b.kind) ||
        compareStrings(a.name, b.name),
    )
    .slice(0, MAX_CLEANUP);
}

function cleanupMessage(left: number, skip: boolean, remaining: TypedObjectReference[]): string {
  const listed = remaining.map((ref) => `${ref.kind} ${ref.name}`).join(', ');
  if (left === 0) return 'The VirtualCluster is being deleted; every child is gone.';
  if (skip) {
    return `Cleanup abandoned (${ANNOTATIONS.skipCleanup}=true) with ${left} children left: ${listed}; the garbage collector removes owned children.`;
  }
  return `The VirtualCluster is being deleted; waiting for ${left} children to go: ${listed}.`;
}
