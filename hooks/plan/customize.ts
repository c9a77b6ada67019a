/**
 * The kubecell-plan customize hook: which objects the sync hook needs to see.
 *
 * Metacontroller caches this answer per plan UID and generation (20 minutes), so it depends
 * on the plan's spec and its (immutable) namespace only, never on status. The rules rely on
 * `version: v2`: a namespaced parent then receives related objects from another namespace
 * (the Cell in the controller namespace) and cluster-scoped ones (the class, the Namespace);
 * with v1 they would be silently missing.
 *
 * 1. the Cell `spec.cellRef.name` in the controller namespace (its status carries the capacity
 *    already committed to its VirtualClusters, `inventory[r].committed`), or, with
 *    `spec.cellSelector`, the placement index there (every Cell as a placement reads it; the
 *    selector is applied to its entries, selection.ts);
 * 2. the VirtualNodeClass `spec.classRef.name` (cluster-scoped);
 * 3. the VirtualClusters in the plan's namespace, which the target namespace would share;
 * 4. the plan's Namespace, for its `kubecell.io/host-namespace` label.
 *
 * The VirtualClusters of the Cell are not related (feasibility/related.ts says why).
 *
 * Each rule also makes Metacontroller call sync again when a matching object changes
 * (pkg/controller/common/customize/manager.go, onRelatedAdd/onRelatedUpdate →
 * notifyRelatedParents, Metacontroller v4.17.2). A conclusion (Accepted, Rejected) is not
 * refreshed by that, so those calls only re-check expiry; an Unknown plan is evaluated again
 * (phases.ts, nextEvaluation): that is how a class created after the plan is seen.
 */
import type { VirtualClusterPlan } from '../generated/types/index.js';
import type { CustomizeHookRequest, CustomizeHookResponse } from '../metacontroller/protocol.js';
import { placementIndexRule, placementRelatedResources } from '../feasibility/related.js';
import type { PlanConfig } from './config.js';

export function customizePlan(
  request: CustomizeHookRequest<VirtualClusterPlan>,
  config: Pick<PlanConfig, 'cellNamespace'>,
): CustomizeHookResponse {
  const plan = request.parent;
  const cellName = plan.spec?.cellRef?.name ?? '';
  const className = plan.spec?.classRef?.name ?? '';
  const namespace = plan.metadata.namespace ?? '';
  const selecting = plan.spec?.cellSelector !== undefined;
  const placement = placementRelatedResources({
    cellNamespace: config.cellNamespace,
    cellName,
    className,
    namespace,
  });
  const rules = [
    // With a selector, every Cell is read from the placement index (selection.ts).
    ...(selecting
      ? placement.map((rule) =>
          rule.resource === 'cells' ? placementIndexRule(config.cellNamespace) : rule,
        )
      : placement),
    { apiVersion: 'v1', resource: 'namespaces', names: [namespace] },
  ];
  return { relatedResources: rules };
}
