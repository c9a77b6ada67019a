/**
 * The kubecell-delivery customize hook: the Cells of the controller namespace (which bind which
 * ManagedCluster, with which delivery and machine profile) and the VirtualClusters of every
 * namespace (which are placed on it). `version: v2` hooks let a cluster-scoped parent relate
 * objects of any namespace (metacontroller v4.17.2 `pkg/controller/common/customize/manager.go`:
 * `selectByNamespaceAndNames` for the Cells' namespace-only rule, `selectByLabels` over every
 * namespace for the empty selector). The answer depends on the settings only, never on the
 * ManagedCluster, so Metacontroller's cache of it never goes stale. Request `{controller,
 * parent}`, response `{relatedResources}` (`pkg/controller/common/customize/api/v2/hooks.go`).
 */
import { API_VERSION } from '../api/kinds.js';
import type { CustomizeHookResponse, RelatedResourceRule } from '../metacontroller/protocol.js';
import type { DeliveryConfig } from './config.js';

export function deliveryRelatedResources(
  config: Pick<DeliveryConfig, 'controllerNamespace'>,
): RelatedResourceRule[] {
  return [
    { apiVersion: API_VERSION, resource: 'cells', namespace: config.controllerNamespace },
    { apiVersion: API_VERSION, resource: 'virtualclusters', labelSelector: {} },
  ];
}

export function customizeDelivery(
  config: Pick<DeliveryConfig, 'controllerNamespace'>,
): CustomizeHookResponse {
  return { relatedResources: deliveryRelatedResources(config) };
}
