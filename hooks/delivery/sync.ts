/**
 * The kubecell-delivery sync hook: observe (observe.ts) → render (render.ts). It answers
 * attachments only: no labels, annotations or status on the ManagedCluster, which is OCM's
 * (a DecoratorController's `status: null`/absent leaves it unchanged and writes nothing:
 * `syncParentObject`, metacontroller v4.17.2 `pkg/controller/decorator/controller.go`). There
 * is no finalize hook, so Metacontroller puts no finalizer on the ManagedCluster
 * (`finalizer.NewManager(..., dc.Spec.Hooks.Finalize != nil)`, same file).
 *
 * Metacontroller posts `{controller, object, attachments, related, finalizing}`
 * (`DecoratorHookRequest`, `pkg/controller/decorator/api/v2/hooks.go`) and reads back
 * `{labels, annotations, status, attachments, resyncAfterSeconds, finalized}`
 * (`DecoratorHookResponse`, same file); the request check hands the handler `object` as `parent`
 * and `attachments` as `children` (DecoratorSyncRequest, metacontroller/protocol.ts). The
 * ManagedCluster is cluster-scoped, so Metacontroller lists its attachments in every namespace
 * (`getChildren`, controller.go) and a work may live in the cluster's namespace; it sets each
 * work's controller ownerReference to the ManagedCluster (`claimOwnership`,
 * `pkg/controller/common/manage_children.go`).
 */
import type { KubernetesObject } from '../metacontroller/protocol.js';
import type { DecoratorSyncRequest, DecoratorSyncResponse } from '../metacontroller/protocol.js';
import type { DeliveryConfig } from './config.js';
import { observeDelivery } from './observe.js';
import { renderDelivery } from './render.js';

export function syncDelivery(
  request: DecoratorSyncRequest<KubernetesObject>,
  config: DeliveryConfig,
): DecoratorSyncResponse {
  const observation = observeDelivery(request.parent, request.related, request.children, config);
  return { attachments: renderDelivery(observation, config) };
}
