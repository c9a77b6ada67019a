/**
 * OCM's ManifestWork (`work.open-cluster-management.io/v1`), KubeCell's one home for it: its
 * names, the shape KubeCell writes (the works of `kubecell-delivery`) and the reading of what
 * OCM's work agent reports back (its conditions and status feedback, decision D34).
 *
 * Every field name and value is checked against OCM v1.3.1's Go types
 * (`vendor/open-cluster-management.io/api/work/v1/types.go`: ManifestWorkSpec, ManifestsTemplate,
 * DeleteOption, SelectivelyOrphan, ResourceIdentifier, ManifestConfigOption, UpdateStrategy,
 * FeedbackRule, JsonPath, ManifestCondition) and its CRD
 * (`work.open-cluster-management.io_manifestworks.yaml`).
 *
 * Writing:
 * - A feedback JSONPath is evaluated on the whole applied object, not under `.status` as the
 *   field's description says (`getValueByJsonPath`, `pkg/work/spoke/statusfeedback/reader.go`),
 *   so `.data.report` and `.spec.ports[0].nodePort` work. Strings and integers come back without
 *   the `RawFeedbackJsonString` gate and without a length cap.
 * - `CreateOnly` creates the object when it is absent and otherwise only adds the work's owner
 *   reference to it (`pkg/work/spoke/apply/create_only_apply.go`, `helper.ApplyOwnerReferences`
 *   in `pkg/work/helper/helpers.go`): it never rewrites what another writer put there, adopts an
 *   object that already exists, and deletes it with the work. Feedback is read whatever the
 *   strategy (`pkg/work/spoke/controllers/statuscontroller/availablestatus_controller.go`).
 *   The default `Update` would fight the cell agent over a ConfigMap it fills: for a ConfigMap it
 *   rewrites every data key the manifest does not hold (library-go's `ApplyConfigMapImproved`,
 *   vendored in ocm v1.3.1).
 *
 * Reading: `status.conditions` (`Applied`, `Available`) and `status.resourceStatus.manifests[]`,
 * each a ManifestCondition with `resourceMeta` (group, version, kind, resource, name, namespace)
 * and `statusFeedback.values[]` of `{name, fieldValue: {type: Integer|String|Boolean|JsonRaw,
 * integer, string, boolean, jsonRaw}}`. An observed work arrives untrusted (validated only for
 * the fields KubeCell reads elsewhere), so every step checks its type.
 */
import { isJsonObject } from '../json/json.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';

export const MANIFEST_WORK_API_VERSION = 'work.open-cluster-management.io/v1';
export const MANIFEST_WORK_KIND = 'ManifestWork';
/** The plural resource, as a related-resource rule names it. */
export const MANIFEST_WORK_RESOURCE = 'manifestworks';
/** The key of ManifestWorks in a Metacontroller request's related/children map. */
export const MANIFEST_WORK_TYPE_KEY = `${MANIFEST_WORK_KIND}.${MANIFEST_WORK_API_VERSION}`;

// --- writing ---

export interface ResourceIdentifier {
  /** '' for the core group. */
  group: string;
  /** The plural resource, e.g. `configmaps`. */
  resource: string;
  name: string;
  /** '' for a cluster-scoped object. */
  namespace: string;
}

export interface JsonPath {
  name: string;
  path: string;
}

export interface ManifestConfigOption {
  resourceIdentifier: ResourceIdentifier;
  feedbackRules?: { type: 'JSONPaths'; jsonPaths: JsonPath[] }[];
  updateStrategy?: { type: 'Update' | 'CreateOnly' | 'ServerSideApply' | 'ReadOnly' };
}

export interface DeleteOption {
  propagationPolicy: 'Foreground' | 'Orphan' | 'SelectivelyOrphan';
  selectivelyOrphans?: { orphaningRules: ResourceIdentifier[] };
}

export interface ManifestWork extends KubernetesObject {
  apiVersion: typeof MANIFEST_WORK_API_VERSION;
  kind: typeof MANIFEST_WORK_KIND;
  spec: {
    workload: { manifests: KubernetesObject[] };
    deleteOption?: DeleteOption;
    manifestConfigs?: ManifestConfigOption[];
  };
}

/**
 * Plural resource names of the kinds KubeCell puts into a ManifestWork. The work agent maps a
 * manifest to its resource through discovery; a ResourceIdentifier names the resource itself.
 */
const RESOURCES: Readonly<Record<string, string>> = Object.freeze({
  Namespace: 'namespaces',
  ServiceAccount: 'serviceaccounts',
  ConfigMap: 'configmaps',
  Secret: 'secrets',
  Service: 'services',
  ResourceQuota: 'resourcequotas',
  LimitRange: 'limitranges',
  Deployment: 'deployments',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  NetworkPolicy: 'networkpolicies',
  Cluster: 'clusters',
});

/** The ResourceIdentifier of a manifest: its group, plural resource, name and namespace. */
export function identifierOf(manifest: KubernetesObject): ResourceIdentifier {
  const resource = RESOURCES[manifest.kind];
  if (resource === undefined) throw new Error(`no resource name known for kind ${manifest.kind}`);
  const slash = manifest.apiVersion.indexOf('/');
  return {
    group: slash === -1 ? '' : manifest.apiVersion.slice(0, slash),
    resource,
    name: manifest.metadata.name,
    namespace: manifest.metadata.namespace ?? '',
  };
}

/** A manifest applied as usual (`Update`) whose `paths` come back as feedback. */
export function feedbackOf(manifest: KubernetesObject, paths: JsonPath[]): ManifestConfigOption {
  return {
    resourceIdentifier: identifierOf(manifest),
    feedbackRules: [{ type: 'JSONPaths', jsonPaths: paths }],
  };
}

/**
 * A manifest created once and never updated (Metacontroller's `OnDelete`), whose `paths` come
 * back as feedback (the work agent reads feedback whatever the update strategy).
 */
export function createOnly(
  manifest: KubernetesObject,
  paths: JsonPath[] = [],
): ManifestConfigOption {
  return {
    resourceIdentifier: identifierOf(manifest),
    ...(paths.length === 0 ? {} : { feedbackRules: [{ type: 'JSONPaths', jsonPaths: paths }] }),
    updateStrategy: { type: 'CreateOnly' },
  };
}

/** Delete every manifest with the work, but leave `orphans` on the managed cluster. */
export function orphaning(orphans: readonly KubernetesObject[]): DeleteOption {
  return {
    propagationPolicy: 'SelectivelyOrphan',
    selectivelyOrphans: { orphaningRules: orphans.map(identifierOf) },
  };
}

/** A work of `manifests`, with what to orphan and what to feed back. */
export function manifestWork(
  metadata: KubernetesObject['metadata'],
  manifests: KubernetesObject[],
  options: { deleteOption?: DeleteOption; manifestConfigs?: ManifestConfigOption[] },
): ManifestWork {
  return {
    apiVersion: MANIFEST_WORK_API_VERSION,
    kind: MANIFEST_WORK_KIND,
    metadata,
    spec: {
      workload: { manifests },
      ...(options.deleteOption ? { deleteOption: options.deleteOption } : {}),
      ...(options.manifestConfigs && options.manifestConfigs.length > 0
        ? { manifestConfigs: options.manifestConfigs }
        : {}),
    },
  };
}

// --- reading ---

/** One of a work's own conditions, as OCM's metav1.Condition carries it (the fields read). */
export interface WorkCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** A work as Metacontroller observed it: nothing past its envelope is trusted. */
export type ObservedManifestWork = KubernetesObject & { spec?: unknown; status?: unknown };

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
  work: ObservedManifestWork | undefined,
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
  work: ObservedManifestWork | undefined,
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

/** One of the work's own conditions (`Applied`, `Available`), when it is well formed. */
export function workCondition(work: ObservedManifestWork, type: string): WorkCondition | undefined {
  const status = isJsonObject(work.status) ? work.status : undefined;
  const conditions = status?.['conditions'];
  if (!Array.isArray(conditions)) return undefined;
  return conditions.find(
    (condition): condition is WorkCondition =>
      isJsonObject(condition) &&
      condition['type'] === type &&
      typeof condition['status'] === 'string',
  );
}
