/**
 * Reading OCM ManifestWork status feedback: the only channel through which the hub learns about a
 * managed cluster (decision D34). The shape is OCM's work API v1 (ocm v1.3.1
 * vendor/open-cluster-management.io/api/work/v1/types.go): status.resourceStatus.manifests[] is
 * a ManifestCondition with resourceMeta (group, version, kind, resource, name, namespace) and
 * statusFeedback.values[] of {name, fieldValue: {type: Integer|String|Boolean|JsonRaw, integer,
 * string, boolean, jsonRaw}}. The object arrives untrusted (validated only for the fields
 * KubeCell reads elsewhere), so every step checks its type.
 */
import { isJsonObject } from '../json/json.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';

export const MANIFEST_WORK_API_VERSION = 'work.open-cluster-management.io/v1';
export const MANIFEST_WORK_KIND = 'ManifestWork';
/** The plural resource, as a related-resource rule names it. */
export const MANIFEST_WORK_RESOURCE = 'manifestworks';
/** The key of ManifestWorks in a Metacontroller request's related/children map. */
export const MANIFEST_WORK_TYPE_KEY = `${MANIFEST_WORK_KIND}.${MANIFEST_WORK_API_VERSION}`;

export type ManifestWork = KubernetesObject & { spec?: unknown; status?: unknown };

/** Which applied resource a feedback value belongs to (fields left out match anything). */
export interface ResourceMetaMatch {
  group?: string;
  version?: string;
  kind?: string;
  resource?: string;
  name: string;
  namespace?: string;
}

export type FeedbackValue =
  | { type: 'String'; string: string }
  | { type: 'Integer'; integer: number }
  | { type: 'Boolean'; boolean: boolean }
  | { type: string };

function matches(meta: unknown, want: ResourceMetaMatch): boolean {
  if (!isJsonObject(meta)) return false;
  return Object.entries(want).every(([field, value]) => (meta[field] ?? '') === value);
}

/** The manifest condition of the resource `want` names, if the work reports one. */
export function manifestCondition(
  work: ManifestWork | undefined,
  want: ResourceMetaMatch,
): Record<string, unknown> | undefined {
  const status = isJsonObject(work?.status) ? work.status : undefined;
  const resourceStatus = status?.['resourceStatus'];
  const manifests = isJsonObject(resourceStatus) ? resourceStatus['manifests'] : undefined;
  if (!Array.isArray(manifests)) return undefined;
  return manifests.find(
    (manifest): manifest is Record<string, unknown> =>
      isJsonObject(manifest) && matches(manifest['resourceMeta'], want),
  );
}

/** The fed-back value `name` of the resource `want` names; undefined while none is reported. */
export function feedbackValue(
  work: ManifestWork | undefined,
  want: ResourceMetaMatch,
  name: string,
): FeedbackValue | undefined {
  const feedback = manifestCondition(work, want)?.['statusFeedback'];
  const values = isJsonObject(feedback) ? feedback['values'] : undefined;
  if (!Array.isArray(values)) return undefined;
  const entry: unknown = values.find((value) => isJsonObject(value) && value['name'] === name);
  const fieldValue = isJsonObject(entry) ? entry['fieldValue'] : undefined;
  if (!isJsonObject(fieldValue) || typeof fieldValue['type'] !== 'string') return undefined;
  return fieldValue as FeedbackValue;
}

/**
 * A ConfigMap on the managed cluster, as resourceMeta names it. Not by `resource`: the work agent
 * fills it in only when its REST mapping succeeds (pkg/work/helper/helpers.go, BuildResourceMeta).
 */
export function configMapMeta(namespace: string, name: string): ResourceMetaMatch {
  return { group: '', version: 'v1', kind: 'ConfigMap', namespace, name };
}
