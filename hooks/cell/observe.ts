import type { Cell, VirtualCluster } from '../generated/types/index.js';
import {
  TYPE_KEYS,
  type CustomResourceDefinition,
  type DaemonSet,
  type Deployment,
  type Lease,
  type ManagedCluster,
  type Namespace,
  type Node,
  type PersistentVolume,
  type Pod,
  type Service,
} from '../kube/objects.js';
import { LABELS } from '../kube/labels.js';
import type { KubernetesObject, ObjectMap } from '../metacontroller/protocol.js';
import { AGENT_WORK_NAME } from '../remote/contract.js';
import { MANIFEST_WORK_TYPE_KEY, type ObservedManifestWork } from '../remote/manifest-work.js';
import type { CellControllerConfig, NamespacedName } from './config.js';
import { MANAGED_CLUSTER_LEASE } from './liveness.js';

/**
 * What one cluster shows about a machine profile: its Nodes, the pods, host namespaces, Services
 * and PersistentVolumes, and the provider baseline. The Cell observes it on the hub (a Local Cell)
 * and the cell agent on a managed cluster (hooks/agent), both through `observeCluster`. A list is
 * `undefined` when its group is missing altogether: the source was not observed, which is not
 * the same as observed and empty.
 */
export interface ClusterObservation {
  nodes?: Node[];
  pods?: Pod[];
  hostNamespaces?: Set<string>;
  services?: Service[];
  persistentVolumes?: PersistentVolume[];
  k3kNamespace?: Namespace;
  k3kCRDs: CustomResourceDefinition[];
  k3kController?: Deployment;
  cniDaemonSet?: DaemonSet;
  topolvmDaemonSet?: DaemonSet;
}

/**
 * What Metacontroller delivered for one Cell, sorted into the inputs the status is computed
 * from. For a Cell with delivery ManifestWork the cluster parts are not related (they are on
 * another cluster): the cell agent's work carries its report instead.
 */
export interface CellObservation extends ClusterObservation {
  managedCluster?: ManagedCluster;
  /** The Lease managed-cluster-lease in the cluster's namespace, the liveness signal. */
  lease?: Lease;
  /** Whether Metacontroller delivered the Lease group at all. */
  leaseObserved: boolean;
  virtualClusters?: VirtualCluster[];
  /** The kubecell-cell-agent ManifestWork (delivery ManifestWork); see agentWorkObserved. */
  agentWork?: ObservedManifestWork;
  /** Whether Metacontroller delivered the ManifestWork group at all. */
  agentWorkObserved?: boolean;
}

function group<T extends KubernetesObject>(related: ObjectMap, key: string): T[] | undefined {
  const objects = related[key];
  if (!objects) return undefined;
  return Object.keys(objects)
    .sort()
    .map((name) => objects[name] as T);
}

function named<T extends KubernetesObject>(
  objects: T[] | undefined,
  where: NamespacedName,
): T | undefined {
  return objects?.find(
    (object) =>
      object.metadata.name === where.name && object.metadata.namespace === where.namespace,
  );
}

export function observeCell(
  cell: Cell,
  related: ObjectMap,
  config: CellControllerConfig,
): CellObservation {
  const clusterName = cell.spec.managedClusterRef.name;
  const leases = group<Lease>(related, TYPE_KEYS.lease);
  const observation: CellObservation = {
    managedCluster: group<ManagedCluster>(related, TYPE_KEYS.managedCluster)?.find(
      (cluster) => cluster.metadata.name === clusterName,
    ),
    lease: named(leases, { namespace: clusterName, name: MANAGED_CLUSTER_LEASE }),
    leaseObserved: leases !== undefined,
    virtualClusters: group<VirtualCluster>(related, TYPE_KEYS.virtualCluster),
    ...observeCluster(related, cell.spec.machineProfile.name, config),
  };
  if (cell.spec.delivery !== 'ManifestWork') return observation;
  const works = group<ObservedManifestWork>(related, MANIFEST_WORK_TYPE_KEY);
  return {
    ...observation,
    agentWork: named(works, { namespace: clusterName, name: AGENT_WORK_NAME }),
    agentWorkObserved: works !== undefined,
  };
}

/** The cluster parts of `related` for `profile` (see ClusterObservation). */
export function observeCluster(
  related: ObjectMap,
  profile: string,
  config: CellControllerConfig,
): ClusterObservation {
  const namespaces = group<Namespace>(related, TYPE_KEYS.namespace);
  const daemonSets = group<DaemonSet>(related, TYPE_KEYS.daemonSet);
  return {
    // The rule selects by label already; filtering again keeps a stale or foreign entry out.
    nodes: group<Node>(related, TYPE_KEYS.node)?.filter(
      (node) => node.metadata.labels?.[LABELS.machineProfile] === profile,
    ),
    pods: group<Pod>(related, TYPE_KEYS.pod),
    hostNamespaces:
      namespaces &&
      new Set(
        namespaces
          .filter((namespace) => namespace.metadata.labels?.[LABELS.hostNamespace] === 'true')
          .map((namespace) => namespace.metadata.name),
      ),
    services: group<Service>(related, TYPE_KEYS.service),
    persistentVolumes: group<PersistentVolume>(related, TYPE_KEYS.persistentVolume),
    k3kNamespace: namespaces?.find((namespace) => namespace.metadata.name === config.k3kNamespace),
    k3kCRDs: (
      group<CustomResourceDefinition>(related, TYPE_KEYS.customResourceDefinition) ?? []
    ).filter((crd) => config.k3kCRDs.includes(crd.metadata.name)),
    k3kController: named(group<Deployment>(related, TYPE_KEYS.deployment), config.k3kController),
    cniDaemonSet: named(daemonSets, config.cniDaemonSet),
    topolvmDaemonSet: named(daemonSets, config.topolvmNodeDaemonSet),
  };
}

/** The VirtualClusters whose resolved snapshot names this Cell (by name: a tenant's claim wins). */
export function virtualClustersResolvedTo(
  cell: Cell,
  virtualClusters: VirtualCluster[],
): VirtualCluster[] {
  return virtualClusters.filter((vc) => vc.status?.resolved?.cell?.name === cell.metadata.name);
}
