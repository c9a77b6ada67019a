/**
 * The observe phase of a Cell sync: what Metacontroller delivered, each object narrowed to a type
 * once (the ManagedCluster and its Lease, the profile Nodes, pods, Services, PersistentVolumes,
 * the provider baseline, the VirtualClusters, a ManifestWork Cell's agent report), so the later
 * phases read types and never the request. The validation layer (hooks/controllers) has already
 * checked the shapes the apiserver guarantees and that every quantity parses (the cell agent reads
 * its objects from its cluster's apiserver); what is left here is to find the objects that matter
 * and keep what the Cell reads of them.
 *
 * A group that Metacontroller did not deliver at all stays `undefined`: the source was not
 * observed, which is not the same as observed and empty.
 */
import type {
  Cell,
  CellProviderStatus,
  Entitlement,
  VirtualCluster,
} from '../generated/types/index.js';
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
import { addQuantities, ZERO_QUANTITY, type ParsedQuantity } from '../quantity/quantity.js';
import { AGENT_WORK_NAME } from '../remote/contract.js';
import { MANIFEST_WORK_TYPE_KEY, type ObservedManifestWork } from '../remote/manifest-work.js';
import type { CellControllerConfig, NamespacedName } from './config.js';
import {
  MANAGED_CLUSTER_LEASE,
  observeLiveness,
  type ObservedLease,
  type ObservedManagedCluster,
} from './observe-managed-cluster.js';
import { observeNode, type ObservedNode } from './observe-nodes.js';
import { observeProvider } from './observe-provider.js';
import { observeReport, type ObservedReport } from './observe-report.js';

export const TOPOLVM_PROVISIONER = 'topolvm.io';
const TOPOLVM_NODE_KEY = 'topology.topolvm.io/node';

/** The non-terminal pods, sorted by where they run. */
export interface ObservedPods {
  /** By the Node they are bound to (spec.nodeName), whatever their namespace. */
  byNode: Map<string, Pod[]>;
  /** Those of host namespaces that no Node runs yet: demand the Cell must be ready for. */
  unscheduled: Pod[];
}

/**
 * What one cluster shows about a machine profile. The Cell observes it on the hub (a Local Cell)
 * and the cell agent on a managed cluster (hooks/agent), both through `observeCluster`.
 */
export interface ClusterObservation {
  /** The profile Nodes. */
  nodes?: ObservedNode[];
  pods?: ObservedPods;
  /** The host namespaces' names. */
  hostNamespaces?: ReadonlySet<string>;
  /** Ports the apiserver gave a NodePort, across every Service of the cluster. */
  nodePorts?: number;
  /** Capacity of the TopoLVM PersistentVolumes on each Node (from the PersistentVolumes). */
  topolvmVolumes?: Map<string, ParsedQuantity>;
  provider: CellProviderStatus;
}

/** A VirtualCluster whose resolved snapshot names this Cell (by name: a tenant's claim wins). */
export interface ResolvedVirtualCluster {
  /** `namespace/name` */
  name: string;
  /** What its class commits on the Cell: status.resolved.class.entitlement.workloadHard. */
  workloadHard: Entitlement['workloadHard'];
}

/** What Metacontroller delivered for one Cell. */
export interface CellObservation {
  managedCluster?: ObservedManagedCluster;
  lease: ObservedLease;
  /** The VirtualClusters resolved to this Cell; undefined when VirtualClusters were not observed. */
  virtualClusters?: ResolvedVirtualCluster[];
  /**
   * Where the Cell's cluster is seen: on the hub (a Local Cell), or in its cell agent's report
   * (a ManifestWork Cell, whose cluster objects are on another cluster).
   */
  source:
    | { delivery: 'Local'; cluster: ClusterObservation }
    | { delivery: 'ManifestWork'; report: ObservedReport };
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
  const managedCluster = group<ManagedCluster>(related, TYPE_KEYS.managedCluster)?.find(
    (cluster) => cluster.metadata.name === clusterName,
  );
  const leases = group<Lease>(related, TYPE_KEYS.lease);
  const lease = named(leases, { namespace: clusterName, name: MANAGED_CLUSTER_LEASE });
  const virtualClusters = group<VirtualCluster>(related, TYPE_KEYS.virtualCluster);
  return {
    ...observeLiveness(managedCluster, lease, leases !== undefined),
    ...(virtualClusters ? { virtualClusters: resolvedTo(cell, virtualClusters) } : {}),
    source: observeSource(cell, related, config),
  };
}

function observeSource(
  cell: Cell,
  related: ObjectMap,
  config: CellControllerConfig,
): CellObservation['source'] {
  if (cell.spec.delivery !== 'ManifestWork') {
    return {
      delivery: 'Local',
      cluster: observeCluster(related, cell.spec.machineProfile.name, config),
    };
  }
  const works = group<ObservedManifestWork>(related, MANIFEST_WORK_TYPE_KEY);
  const where = { namespace: cell.spec.managedClusterRef.name, name: AGENT_WORK_NAME };
  return { delivery: 'ManifestWork', report: observeReport(cell, works, named(works, where)) };
}

/** The snapshot's shape is the CRD's (the validation layer checked it); only its presence varies. */
function resolvedTo(cell: Cell, virtualClusters: VirtualCluster[]): ResolvedVirtualCluster[] {
  const resolved: ResolvedVirtualCluster[] = [];
  for (const vc of virtualClusters) {
    const placement = vc.status?.resolved;
    if (placement === undefined || placement.cell.name !== cell.metadata.name) continue;
    resolved.push({
      name: `${vc.metadata.namespace}/${vc.metadata.name}`,
      workloadHard: placement.class.entitlement.workloadHard,
    });
  }
  return resolved;
}

/** The cluster parts of `related` for `profile` (see ClusterObservation). */
export function observeCluster(
  related: ObjectMap,
  profile: string,
  config: CellControllerConfig,
): ClusterObservation {
  const namespaces = group<Namespace>(related, TYPE_KEYS.namespace);
  const daemonSets = group<DaemonSet>(related, TYPE_KEYS.daemonSet);
  const hostNamespaces =
    namespaces &&
    new Set(
      namespaces
        .filter((namespace) => namespace.metadata.labels?.[LABELS.hostNamespace] === 'true')
        .map((namespace) => namespace.metadata.name),
    );
  const nodes = group<Node>(related, TYPE_KEYS.node);
  const pods = group<Pod>(related, TYPE_KEYS.pod);
  const services = group<Service>(related, TYPE_KEYS.service);
  const volumes = group<PersistentVolume>(related, TYPE_KEYS.persistentVolume);
  return {
    // The rule selects by label already; filtering again keeps a stale or foreign entry out.
    ...(nodes
      ? {
          nodes: nodes
            .filter((node) => node.metadata.labels?.[LABELS.machineProfile] === profile)
            .map(observeNode),
        }
      : {}),
    ...(pods ? { pods: observePods(pods, hostNamespaces) } : {}),
    ...(hostNamespaces ? { hostNamespaces } : {}),
    ...(services ? { nodePorts: countNodePorts(services) } : {}),
    ...(volumes ? { topolvmVolumes: allocatedByNode(volumes) } : {}),
    provider: observeProvider(
      {
        k3kNamespace: namespaces?.find(
          (namespace) => namespace.metadata.name === config.k3kNamespace,
        ),
        k3kCRDs: (
          group<CustomResourceDefinition>(related, TYPE_KEYS.customResourceDefinition) ?? []
        ).filter((crd) => config.k3kCRDs.includes(crd.metadata.name)),
        k3kController: named(
          group<Deployment>(related, TYPE_KEYS.deployment),
          config.k3kController,
        ),
        cniDaemonSet: named(daemonSets, config.cniDaemonSet),
        topolvmDaemonSet: named(daemonSets, config.topolvmNodeDaemonSet),
      },
      config,
    ),
  };
}

/** Succeeded and Failed pods hold nothing; everything else, terminating included, still does. */
function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** In one pass over all pods: the cost stays linear in pods + Nodes. */
function observePods(
  pods: readonly Pod[],
  hostNamespaces: ReadonlySet<string> | undefined,
): ObservedPods {
  const observed: ObservedPods = { byNode: new Map(), unscheduled: [] };
  for (const pod of pods) {
    if (isTerminal(pod)) continue;
    const nodeName = pod.spec?.nodeName;
    if (nodeName) {
      const list = observed.byNode.get(nodeName);
      if (list) list.push(pod);
      else observed.byNode.set(nodeName, [pod]);
    } else if (hostNamespaces?.has(pod.metadata.namespace ?? '')) {
      observed.unscheduled.push(pod);
    }
  }
  return observed;
}

/** NodePorts in use across the cluster: every port of every Service the apiserver gave one. */
function countNodePorts(services: readonly Service[]): number {
  let allocated = 0;
  for (const service of services) {
    for (const port of service.spec?.ports ?? []) if (port.nodePort) allocated += 1;
  }
  return allocated;
}

/** The Node a TopoLVM volume lives on, from its required node affinity. */
function volumeNode(volume: PersistentVolume): string | undefined {
  for (const term of volume.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? []) {
    for (const expression of term.matchExpressions ?? []) {
      if (expression.key === TOPOLVM_NODE_KEY && expression.operator === 'In')
        return expression.values?.[0];
    }
  }
  return undefined;
}

/** Capacity of the topolvm.io PersistentVolumes on each Node. */
function allocatedByNode(volumes: readonly PersistentVolume[]): Map<string, ParsedQuantity> {
  const allocated = new Map<string, ParsedQuantity>();
  for (const volume of volumes) {
    if (volume.spec?.csi?.driver !== TOPOLVM_PROVISIONER) continue;
    const node = volumeNode(volume);
    const size = volume.spec.capacity?.['storage'];
    if (!node || size === undefined) continue;
    allocated.set(node, addQuantities(allocated.get(node) ?? ZERO_QUANTITY, size));
  }
  return allocated;
}
