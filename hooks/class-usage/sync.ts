/**
 * The kubecell-class-usage sync hook: `status.usedBy` of a VirtualNodeClass. Status only: no
 * attachments, no labels, no annotations.
 *
 * Metacontroller posts `{controller, object, attachments, related, finalizing}` to sync (the
 * request check hands the class over as `parent`). It sends the VirtualCluster group whenever
 * the customize answer has the rule, empty when no VirtualCluster matches (`GetRelatedObjects`,
 * pkg/controller/common/customize/manager.go). A request without the group did not observe the
 * VirtualClusters: the answer then has no status, which Metacontroller reads as "leave .status
 * as it is" (`syncParentObject`, pkg/controller/decorator/controller.go), instead of a made-up
 * zero.
 */
import type { VirtualNodeClass } from '../generated/types/index.js';
import { TYPE_KEYS } from '../kube/objects.js';
import type { DecoratorSyncRequest, DecoratorSyncResponse } from '../metacontroller/protocol.js';
import { classUsageRelatedResources } from './customize.js';
import { computeClassUsage } from './usage.js';

export function syncClassUsage(
  request: DecoratorSyncRequest<VirtualNodeClass>,
): DecoratorSyncResponse {
  if (!usageObserved(request)) return { attachments: [] };
  return { status: computeClassUsage(request.parent, request.related), attachments: [] };
}

/**
 * Whether the request shows which VirtualClusters use the class: their group was delivered, or
 * the class relates nothing (its name is no label value), so no VirtualCluster can use it.
 */
function usageObserved(request: DecoratorSyncRequest<VirtualNodeClass>): boolean {
  return (
    request.related[TYPE_KEYS.virtualCluster] !== undefined ||
    classUsageRelatedResources(request.parent).length === 0
  );
}
