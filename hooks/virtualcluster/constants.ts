/**
 * Platform constants of the kubecell-virtualcluster controller: every fixed value a
 * VirtualCluster's children are rendered with. They are not API fields (DESIGN §1: a field
 * with a single safe value is a constant), and docs/concepts.md ("VirtualCluster") lists them.
 *
 * Changing a value here changes what new VirtualClusters get. Existing ones keep theirs where
 * it matters: the k3k Cluster is applied with `updateStrategy: OnDelete`, so its spec is never
 * rewritten; the ResourceQuota and LimitRange are `InPlace` and do follow a new value.
 */
import { LABELS } from '../kube/labels.js';

export const K3K_API_VERSION = 'k3k.io/v1beta1';

/** k3k's own labels on its server pods: `cluster=<name>, role=server`. */
export const K3K_SERVER_POD_LABELS = { cluster: 'cluster', role: 'role' } as const;
export const K3K_SERVER_ROLE = 'server';
/** The port the k3s API server listens on inside the server pod. */
export const K3K_SERVER_PORT = 6443;
/** The key k3k and KubeCell both store the kubeconfig under. */
export const KUBECONFIG_KEY = 'kubeconfig.yaml';

/** The name of the API Service port (the NodePort the tenant's kubeconfig points at). */
export const API_PORT_NAME = 'https';

/**
 * The k3k Cluster's control plane: one server (k3k's default), its etcd data on a PVC of the
 * class's storage class, and explicit requests so the server pod is scheduled with what a k3s
 * server needs whatever the LimitRange says.
 */
export const K3K_SERVERS = 1;
export const K3K_STORAGE_REQUEST_SIZE = '2Gi';
export const K3K_SERVER_REQUESTS = Object.freeze({ cpu: '500m', memory: '512Mi' });

/**
 * LimitRange of the host namespace. `defaultRequest` is always set: a ResourceQuota on cpu or
 * memory refuses any pod that does not state requests for them, and k3k's own shared-mode
 * agent pod states none (a CPU quota without defaults breaks k3k cluster creation). `default`
 * (the default limit) of a resource is set only when the class limits `limits.<resource>`,
 * for the same reason on the limits side; otherwise pods keep running without limits.
 */
export const LIMIT_RANGE_DEFAULT_REQUEST = Object.freeze({ cpu: '100m', memory: '128Mi' });
export const LIMIT_RANGE_DEFAULT_LIMIT = Object.freeze({ cpu: '1', memory: '1Gi' });

/**
 * The control-plane reserve: added to the class entitlement in the host namespace's
 * ResourceQuota, so that the k3k control plane does not eat into what the tenant was
 * promised. It covers what k3k (v1.1, shared mode) itself runs in the host namespace:
 *
 * - the server pod (requests `K3K_SERVER_REQUESTS`, default limits) and the shared-mode agent
 *   pod (LimitRange defaults): 2 pods, 600m cpu and 640Mi memory of requests rounded up to
 *   1 cpu and 1Gi, and 2 × the default limit (2 cpu, 2Gi) of limits;
 * - the server's etcd PVC: 1 claim of `K3K_STORAGE_REQUEST_SIZE` (also counted against the
 *   class's storage class, see `storageClassReserve`);
 * - its Services: k3k's server Service, headless Service and agent Service, plus the KubeCell
 *   API NodePort Service: 4 Services, 1 of them a NodePort.
 *
 * A reserve is added only to a key the entitlement already limits: adding a key the class
 * does not name would newly restrict the tenant. Keys not listed here (configmaps, secrets,
 * count/<other>, extended resources such as requests.nvidia.com/gpu) get no reserve: the
 * control plane uses no accelerators.
 */
export const CONTROL_PLANE_RESERVE: Readonly<Record<string, string>> = Object.freeze({
  'requests.cpu': '1',
  cpu: '1',
  'limits.cpu': '2',
  'requests.memory': '1Gi',
  memory: '1Gi',
  'limits.memory': '2Gi',
  pods: '2',
  'count/pods': '2',
  persistentvolumeclaims: '1',
  'count/persistentvolumeclaims': '1',
  'requests.storage': K3K_STORAGE_REQUEST_SIZE,
  services: '4',
  'count/services': '4',
  'services.nodeports': '1',
});

/** The reserve on the class's own storage class keys (the etcd PVC uses that class). */
export function storageClassReserve(storageClassName: string): Record<string, string> {
  const prefix = `${storageClassName}.storageclass.storage.k8s.io`;
  return {
    [`${prefix}/requests.storage`]: K3K_STORAGE_REQUEST_SIZE,
    [`${prefix}/persistentvolumeclaims`]: '1',
  };
}

/** Labels every child carries (Metacontroller adds its own `controller-uid`). */
export const CHILD_LABELS = {
  managedBy: 'app.kubernetes.io/managed-by',
  virtualCluster: 'kubecell.io/virtualcluster',
  cell: LABELS.cell,
  class: LABELS.class,
} as const;
export const MANAGED_BY = 'kubecell';
