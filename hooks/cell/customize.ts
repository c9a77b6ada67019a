import { API_VERSION } from '../api/kinds.js';
import type { Cell } from '../generated/types/index.js';
import { LABELS } from '../kube/labels.js';
import type {
  CustomizeHookRequest,
  CustomizeHookResponse,
  RelatedResourceRule,
} from '../metacontroller/protocol.js';
import { AGENT_WORK_NAME } from '../remote/contract.js';
import { MANIFEST_WORK_API_VERSION, MANIFEST_WORK_RESOURCE } from '../remote/manifest-work.js';
import type { CellControllerConfig, NamespacedName } from './config.js';
import { MANAGED_CLUSTER_LEASE } from './observe-managed-cluster.js';

/**
 * What the Cell's status is computed from. Metacontroller caches this answer per generation, so
 * it depends on the spec alone. With v2 hooks a label-selector rule spans all namespaces and
 * cluster-scoped kinds, which is what lets a Cell in kubecell-system see Nodes and tenants' pods.
 */
export function cellRelatedResources(
  cell: Cell,
  config: CellControllerConfig,
): RelatedResourceRule[] {
  if (cell.spec.delivery === 'ManifestWork') {
    return [
      ...managedClusterRules(cell.spec.managedClusterRef.name),
      virtualClustersRule(cell),
      agentWorkRule(cell.spec.managedClusterRef.name),
    ];
  }
  return [
    ...managedClusterRules(cell.spec.managedClusterRef.name),
    ...workloadRules(cell, config),
    ...providerRules(config),
  ];
}

/**
 * A ManifestWork Cell's cluster is not the hub: its Nodes, pods, Services and provider baseline
 * come from the cell agent's report, fed back through this work in the ManagedCluster's hub
 * namespace (v2 hooks may relate an object in another namespace by namespace and names).
 */
function agentWorkRule(clusterName: string): RelatedResourceRule {
  return {
    apiVersion: MANIFEST_WORK_API_VERSION,
    resource: MANIFEST_WORK_RESOURCE,
    namespace: clusterName,
    names: [AGENT_WORK_NAME],
  };
}

function virtualClustersRule(cell: Cell): RelatedResourceRule {
  return {
    apiVersion: API_VERSION,
    resource: 'virtualclusters',
    labelSelector: { matchLabels: { [LABELS.cell]: cell.metadata.name } },
  };
}

export function customizeCell(
  request: CustomizeHookRequest<Cell>,
  config: CellControllerConfig,
): CustomizeHookResponse {
  return { relatedResources: cellRelatedResources(request.parent, config) };
}

/**
 * The bound ManagedCluster and its Lease managed-cluster-lease, in the namespace named after the
 * cluster, for liveness (liveness.ts). A renewal every leaseDurationSeconds (60 s by default)
 * syncs the Cell once; nothing else relates to the Cell, so it re-syncs nothing further.
 */
function managedClusterRules(clusterName: string): RelatedResourceRule[] {
  return [
    {
      apiVersion: 'cluster.open-cluster-management.io/v1',
      resource: 'managedclusters',
      names: [clusterName],
    },
    {
      apiVersion: 'coordination.k8s.io/v1',
      resource: 'leases',
      namespace: clusterName,
      names: [MANAGED_CLUSTER_LEASE],
    },
  ];
}

/** What the inventory is counted from: Nodes, pods, host namespaces, VirtualClusters, ... */
function workloadRules(cell: Cell, config: CellControllerConfig): RelatedResourceRule[] {
  const everything = { labelSelector: {} };
  return [
    {
      apiVersion: 'v1',
      resource: 'nodes',
      labelSelector: { matchLabels: { [LABELS.machineProfile]: cell.spec.machineProfile.name } },
    },
    // Pods on the profile Nodes can be in any namespace, and a pod not yet scheduled carries no
    // Node name to select on, so the hook filters all pods itself.
    { apiVersion: 'v1', resource: 'pods', ...everything },
    {
      apiVersion: 'v1',
      resource: 'namespaces',
      labelSelector: { matchLabels: { [LABELS.hostNamespace]: 'true' } },
    },
    { apiVersion: 'v1', resource: 'namespaces', names: [config.k3kNamespace] },
    virtualClustersRule(cell),
    { apiVersion: 'v1', resource: 'services', ...everything },
    { apiVersion: 'v1', resource: 'persistentvolumes', ...everything },
  ];
}

/** The provider baseline: k3k's CRDs and controller, the CNI and TopoLVM DaemonSets. */
function providerRules(config: CellControllerConfig): RelatedResourceRule[] {
  const named = (apiVersion: string, resource: string, where: NamespacedName) => ({
    apiVersion,
    resource,
    namespace: where.namespace,
    names: [where.name],
  });
  return [
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      resource: 'customresourcedefinitions',
      names: config.k3kCRDs,
    },
    named('apps/v1', 'deployments', config.k3kController),
    named('apps/v1', 'daemonsets', config.cniDaemonSet),
    named('apps/v1', 'daemonsets', config.topolvmNodeDaemonSet),
  ];
}
