import type { Cell } from '../generated/types/index.js';
import { LABELS } from '../kube/labels.js';
import type {
  CustomizeHookRequest,
  CustomizeHookResponse,
  RelatedResourceRule,
} from '../metacontroller/protocol.js';
import type { CellControllerConfig } from './config.js';

export const MANAGED_CLUSTER_LEASE = 'managed-cluster-lease';

/**
 * What the Cell's status is computed from. Metacontroller caches this answer per generation, so
 * it depends on the spec alone. With v2 hooks a label-selector rule spans all namespaces and
 * cluster-scoped kinds, which is what lets a Cell in kubecell-system see Nodes and tenants' pods.
 */
export function cellRelatedResources(
  cell: Cell,
  config: CellControllerConfig,
): RelatedResourceRule[] {
  const clusterName = cell.spec.managedClusterRef.name;
  const everything = { labelSelector: {} };
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
    {
      apiVersion: 'kubecell.io/v1alpha1',
      resource: 'virtualclusters',
      labelSelector: { matchLabels: { [LABELS.cell]: cell.metadata.name } },
    },
    { apiVersion: 'v1', resource: 'services', ...everything },
    { apiVersion: 'v1', resource: 'persistentvolumes', ...everything },
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      resource: 'customresourcedefinitions',
      names: config.k3kCRDs,
    },
    {
      apiVersion: 'apps/v1',
      resource: 'deployments',
      namespace: config.k3kController.namespace,
      names: [config.k3kController.name],
    },
    {
      apiVersion: 'apps/v1',
      resource: 'daemonsets',
      namespace: config.cniDaemonSet.namespace,
      names: [config.cniDaemonSet.name],
    },
    {
      apiVersion: 'apps/v1',
      resource: 'daemonsets',
      namespace: config.topolvmNodeDaemonSet.namespace,
      names: [config.topolvmNodeDaemonSet.name],
    },
  ];
}

export function customizeCell(config: CellControllerConfig) {
  return (request: CustomizeHookRequest<Cell>): CustomizeHookResponse => ({
    relatedResources: cellRelatedResources(request.parent, config),
  });
}
