/**
 * OCM's ManifestWork (work.open-cluster-management.io/v1), the fields KubeCell writes. Every
 * field name and value is checked against OCM v1.3.1's Go types
 * (`vendor/open-cluster-management.io/api/work/v1/types.go`: ManifestWorkSpec, ManifestsTemplate,
 * DeleteOption, SelectivelyOrphan, ResourceIdentifier, ManifestConfigOption, UpdateStrategy,
 * FeedbackRule, JsonPath) and its CRD (`work.open-cluster-management.io_manifestworks.yaml`).
 *
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
 */
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { MANIFEST_WORK_API_VERSION, MANIFEST_WORK_KIND } from '../remote/feedback.js';

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

/**
 * A ConfigMap the cell agent fills: the work creates it empty (give it `createOnly`) and the agent
 * only reads and updates it by name, since RBAC cannot name what may be created (agent-rbac.ts).
 */
export function agentConfigMap(
  name: string,
  namespace: string,
  labels: Readonly<Record<string, string>>,
): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, labels: { ...labels } },
  };
}

export function manifestWork(
  metadata: KubernetesObject['metadata'],
  manifests: KubernetesObject[],
  options: { deleteOption?: DeleteOption; manifestConfigs?: ManifestConfigOption[] },
): ManifestWork {
  return {
    apiVersion: MANIFEST_WORK_API_VERSION,
    kind: 'ManifestWork',
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
