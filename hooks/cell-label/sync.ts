/**
 * The kubecell-cell-label sync hook: a VirtualCluster that chose its Cell by `spec.cellSelector`
 * gets the label `kubecell.io/cell=<the Cell of status.resolved>` once resolved (D49). The Cell
 * counts the VirtualClusters so labelled (hooks/cell/customize.ts): their committed capacity,
 * `resolvedBy`, InUse. A VirtualCluster with `spec.cellRef` carries the label from its creation
 * (the mutating webhook copies the ref), so the controller never sees it: it selects only
 * VirtualClusters without the label (metacontroller/cell-label.yaml), and stops seeing each one
 * once labelled.
 *
 * Labels only: no attachments, no annotations, and no status, which Metacontroller reads as
 * "leave .status as it is" (`syncParentObject`, pkg/controller/decorator/controller.go, v4.17.2).
 * Before resolution the answer asks for nothing, so Metacontroller writes nothing.
 */
import type { VirtualCluster } from '../generated/types/index.js';
import { isLabelValue, LABELS } from '../kube/labels.js';
import type { DecoratorSyncRequest, DecoratorSyncResponse } from '../metacontroller/protocol.js';

export function syncCellLabel(
  request: DecoratorSyncRequest<VirtualCluster>,
): DecoratorSyncResponse {
  const cell = request.parent.status?.resolved?.cell.name;
  if (cell === undefined || !isLabelValue(cell)) return { attachments: [] };
  return { labels: { [LABELS.cell]: cell }, attachments: [] };
}
