/**
 * The annotations a host namespace carries while it has the baseline: the baseline version and
 * what Pod Security labels KubeCell applied, kept and found weaker (pod-security.ts). A value
 * of null removes an annotation (Metacontroller's decorator semantics).
 */
import { BASELINE_VERSION, HOST_NAMESPACE_ANNOTATIONS } from './baseline.js';
import { formatRecord, type PodSecurityPlan } from './pod-security.js';

export type AnnotationUpdate = Record<string, string | null>;

/** On sync: the baseline version and the Pod Security report, empty records removed. */
export function appliedAnnotations(podSecurity: PodSecurityPlan): AnnotationUpdate {
  return {
    [HOST_NAMESPACE_ANNOTATIONS.baseline]: BASELINE_VERSION,
    [HOST_NAMESPACE_ANNOTATIONS.podSecurityApplied]: formatRecord(podSecurity.applied) ?? null,
    [HOST_NAMESPACE_ANNOTATIONS.podSecurityKept]: formatRecord(podSecurity.kept) ?? null,
    [HOST_NAMESPACE_ANNOTATIONS.podSecurityWeaker]: formatRecord(podSecurity.weaker) ?? null,
  };
}

/** On finalize: every one of them removed. */
export function clearedAnnotations(): Record<string, null> {
  const annotations: Record<string, null> = {};
  for (const key of Object.values(HOST_NAMESPACE_ANNOTATIONS)) annotations[key] = null;
  return annotations;
}
