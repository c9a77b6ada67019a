/**
 * The admission webhook's side of the HTTP benchmark: the AdmissionReviews the apiserver sends
 * when a tenant creates samples/51-virtualcluster-full.yaml with `kubectl apply` (team-a in
 * tenant-a, on cell1 with class small), and the objects the webhook reads back from the
 * apiserver for it (hooks/admission/cross-object.ts: the Namespace, the VirtualClusters of the
 * namespace, the Cell and the class: four live lookups per review, none once the webhook's
 * watch cache has listed the same objects, hooks/admission/cached-lookup.ts).
 *
 * The apiserver calls the mutating webhook first, with the object as decoded and its
 * managedFields; the validating webhook then sees the mutated object (its kubecell.io labels)
 * once the registry has set uid, creationTimestamp and generation (k8s.io/apiserver
 * pkg/endpoints/handlers/create.go runs the mutating admission, then the store's create,
 * pkg/registry/generic/registry/store.go: FillObjectMetaSystemFields, rest.BeforeCreate, then
 * the validating admission).
 */
import type { KubernetesObject } from '../hooks/metacontroller/protocol.js';
import { sample } from '../hooks/admission/testing.js';
import { reportedCell, uid } from './bodies.js';
import { hostNamespaceOf, storedClass } from './bodies-virtualcluster.js';
import { applied, asStored, pick, type Json } from './stored.js';

export type Webhook = 'validate' | 'mutate';

const CREATED = '2026-11-29T12:00:00Z';
const CONTROLLER_NAMESPACE = 'kubecell-system';

/** The VirtualCluster of samples/51-virtualcluster-full.yaml as the apiserver decoded it. */
function createdVirtualCluster(webhook: Webhook): Json {
  const object = sample('51-virtualcluster-full.yaml') as Json & { metadata: Json; spec: Json };
  object.metadata.annotations = {
    'kubectl.kubernetes.io/last-applied-configuration': `${JSON.stringify(object)}\n`,
  };
  const fields = { metadata: pick(object.metadata, ['annotations']), spec: object.spec };
  if (webhook === 'validate') {
    object.metadata.labels = { 'kubecell.io/cell': 'cell1', 'kubecell.io/class': 'small' };
    Object.assign(object.metadata, {
      uid: uid('review-vc-team-a'),
      generation: 1,
      creationTimestamp: CREATED,
    });
  }
  const stored = asStored(object, [
    { manager: 'kubectl-client-side-apply', operation: 'Update', fields, time: CREATED },
  ]);
  if (webhook === 'mutate') {
    for (const key of ['uid', 'resourceVersion', 'creationTimestamp']) delete stored.metadata[key];
  } else delete stored.metadata.resourceVersion;
  return stored;
}

/** An `admission.k8s.io/v1` AdmissionReview of the create, for one webhook. */
export function virtualClusterCreateReview(webhook: Webhook): Json {
  const gvk = { group: 'kubecell.io', version: 'v1alpha1', kind: 'VirtualCluster' };
  const gvr = { group: 'kubecell.io', version: 'v1alpha1', resource: 'virtualclusters' };
  return {
    kind: 'AdmissionReview',
    apiVersion: 'admission.k8s.io/v1',
    request: {
      uid: uid(`review-${webhook}`),
      kind: gvk,
      resource: gvr,
      requestKind: gvk,
      requestResource: gvr,
      name: 'team-a',
      namespace: 'tenant-a',
      operation: 'CREATE',
      userInfo: {
        username: 'alice@example.com',
        uid: uid('user-alice'),
        groups: ['tenant-a:admins', 'system:authenticated'],
      },
      object: createdVirtualCluster(webhook),
      oldObject: null,
      dryRun: false,
      options: {
        kind: 'CreateOptions',
        apiVersion: 'meta.k8s.io/v1',
        fieldManager: 'kubectl-client-side-apply',
        fieldValidation: 'Strict',
      },
    },
  };
}

function appliedSample(file: string, extra: Json = {}): Json {
  return applied({ ...sample(file), ...extra });
}

const LIST_VERSION = '812345';

function list(apiVersion: string, kind: string, items: unknown[]): Json {
  return { apiVersion, kind, metadata: { resourceVersion: LIST_VERSION }, items };
}

/**
 * What the webhook reads for the review, by request path. Its live lookups
 * (hooks/admission/lookup.ts): GET the Namespace, LIST the VirtualClusters of the namespace (none
 * yet), GET the Cell (the sample, with the status its controller reports for the benchmark's 10
 * Nodes) and GET the class (the sample, with its usedBy). Its watch cache
 * (hooks/admission/cached-lookup.ts) lists, then watches, the same objects' collections: the
 * Namespaces, the Cells of the controller namespace, the classes and every VirtualCluster.
 */
export function webhookLookups(now: Date): Record<string, unknown> {
  const namespace = hostNamespaceOf('tenant-a');
  const cell = appliedSample('11-cell-full.yaml', { status: reportedCell(now, 10).status });
  const klass = appliedSample('21-virtualnodeclass-full.yaml', {
    status: (storedClass(1) as KubernetesObject & { status: unknown }).status,
  });
  const api = '/apis/kubecell.io/v1alpha1';
  const group = 'kubecell.io/v1alpha1';
  return {
    '/api/v1/namespaces/tenant-a': namespace,
    [`${api}/namespaces/tenant-a/virtualclusters`]: list(group, 'VirtualClusterList', []),
    [`${api}/namespaces/${CONTROLLER_NAMESPACE}/cells/cell1`]: cell,
    [`${api}/virtualnodeclasses/small`]: klass,
    '/api/v1/namespaces': list('v1', 'NamespaceList', [namespace]),
    [`${api}/namespaces/${CONTROLLER_NAMESPACE}/cells`]: list(group, 'CellList', [cell]),
    [`${api}/virtualnodeclasses`]: list(group, 'VirtualNodeClassList', [klass]),
    [`${api}/virtualclusters`]: list(group, 'VirtualClusterList', []),
  };
}
