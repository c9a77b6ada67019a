/**
 * Deletion of a VirtualCluster. Finalize returns no children, so Metacontroller deletes each
 * (with a UID precondition); what still exists is listed in `status.cleanup`, and deletion may
 * finish once nothing remains, or at once with the annotation `kubecell.io/skip-cleanup=true`
 * (the garbage collector then removes the owned children). Nothing here reads the spec.
 */
import type { TypedObjectReference, VirtualCluster } from '../generated/types/index.js';
import { compareStrings } from '../feasibility/resources.js';
import { ANNOTATIONS } from '../kube/labels.js';
import type { ObservedChildren } from './observe.js';

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

export function assessCleanup(vc: VirtualCluster, children: ObservedChildren): Cleanup {
  const remaining = remainingChildren(children);
  const left = children.all.length;
  const skip = vc.metadata.annotations?.[ANNOTATIONS.skipCleanup] === 'true';
  return {
    remaining,
    finalized: skip || left === 0,
    message: cleanupMessage(left, skip, remaining),
  };
}

/** The children that still exist, sorted by apiVersion, kind and name, at most MAX_CLEANUP. */
export function remainingChildren(children: ObservedChildren): TypedObjectReference[] {
  return children.all
    .map((obj) => ({ apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata?.name ?? '' }))
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
