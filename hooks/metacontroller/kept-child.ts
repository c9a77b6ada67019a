import type { KubernetesObject } from './protocol.js';

/** Fields the apiserver or Metacontroller own, never part of a desired object. */
const SERVER_METADATA = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
  'ownerReferences',
  'finalizers',
] as const;
const LAST_APPLIED = 'metacontroller.k8s.io/last-applied-configuration';

/**
 * An observed child returned as the desired object, unchanged: what a sync answers when it
 * cannot render the child (so that Metacontroller, which deletes every child left out, keeps
 * it). Only server-owned metadata and `status` are dropped.
 */
export function keptChild(observed: KubernetesObject): KubernetesObject {
  const copy = structuredClone(observed) as KubernetesObject & Record<string, unknown>;
  delete copy['status'];
  const metadata = copy.metadata as unknown as Record<string, unknown>;
  for (const field of SERVER_METADATA) delete metadata[field];
  const annotations = metadata['annotations'] as Record<string, string> | undefined;
  if (annotations !== undefined) {
    delete annotations[LAST_APPLIED];
    if (Object.keys(annotations).length === 0) delete metadata['annotations'];
  }
  return copy;
}
