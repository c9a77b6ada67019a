/**
 * The VirtualCluster's Metacontroller finalizer, put on at CREATE by the mutating webhook (D47).
 *
 * The VirtualCluster's CompositeController has a finalize hook, so Metacontroller puts its
 * finalizer `metacontroller.io/compositecontroller-<controller name>` on every VirtualCluster
 * before the first sync: a read and an update of the object, and the update's event syncs the
 * VirtualCluster once more (v4.17.2 `pkg/controller/common/finalizer/finalizer.go` `SyncObject`,
 * `pkg/dynamic/clientset/clientset.go` `AddFinalizer` → `AtomicUpdate`). It skips both when the
 * object it observed already carries the finalizer. Putting it on at admission spends none of
 * Metacontroller's rate-limited requests, which set how soon VirtualClusters become Ready
 * (issue 25, D39), and the finalizer is in place from the first instant, where Metacontroller's
 * left a window in which a deleted VirtualCluster was not finalized.
 *
 * Only at CREATE: Metacontroller removes the finalizer with an UPDATE once the finalize hook
 * says finalized, and putting it back then would block the deletion for ever.
 */
import { isJsonObject } from '../json/json.js';
import type { JsonPatchOperation } from './mutate.js';

/**
 * metadata.name of the CompositeController in metacontroller/virtualcluster.yaml (a test holds
 * the two together).
 */
export const VIRTUALCLUSTER_CONTROLLER = 'kubecell-virtualcluster';

/** The finalizer Metacontroller's VirtualCluster controller keeps on each VirtualCluster. */
export const VIRTUALCLUSTER_FINALIZER = `metacontroller.io/compositecontroller-${VIRTUALCLUSTER_CONTROLLER}`;

/**
 * The patch that adds the finalizer to a VirtualCluster being created; empty for any other
 * kind or operation, when it is there already, or when the object has no metadata (the
 * validating webhook refuses that; Metacontroller would add the finalizer itself).
 */
export function finalizerPatch(
  kind: string,
  operation: 'CREATE' | 'UPDATE',
  object: Record<string, unknown>,
): JsonPatchOperation[] {
  if (kind !== 'VirtualCluster' || operation !== 'CREATE') return [];
  const metadata = object.metadata;
  if (!isJsonObject(metadata) || metadata.deletionTimestamp != null) return [];
  const finalizers = metadata.finalizers;
  if (finalizers === undefined || finalizers === null)
    return [{ op: 'add', path: '/metadata/finalizers', value: [VIRTUALCLUSTER_FINALIZER] }];
  if (!Array.isArray(finalizers) || finalizers.includes(VIRTUALCLUSTER_FINALIZER)) return [];
  return [{ op: 'add', path: '/metadata/finalizers/-', value: VIRTUALCLUSTER_FINALIZER }];
}
