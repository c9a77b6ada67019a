/**
 * A Cell sync built from a copy of the Cell older than the status write the controller just made
 * is refused (429, Retry-After 1: nothing changes, Metacontroller retries without a SyncError).
 *
 * Metacontroller reads the parent from its informer cache (metacontroller v4.17.2
 * pkg/controller/composite/controller.go `sync`) and writes the returned status over the latest
 * object (pkg/dynamic/clientset/clientset.go `AtomicStatusUpdate`). On a busy Cell the next sync
 * starts as soon as a write returns, before the cache has seen it: answered from the older copy,
 * it writes again (doubling the Cell's writes under pod churn) or, when a hold returns the
 * previous status, writes older values back.
 *
 * The evidence is a second child, the status marker: a ConfigMap `kubecell-cell-<name>.status`
 * holding the observedAt of the last status write that changed pod requests. Metacontroller
 * applies children before it writes the status, so the marker reaches its cache first. A copy
 * whose status.observedAt is older than the marker's, within STALE_COPY_GRACE_SECONDS of the
 * marker, predates that write. Past the grace the marker is not evidence (a status write that
 * failed after the marker was applied must not block the Cell).
 *
 * Only writes that change pod requests move the marker: a child's change syncs its parent again,
 * and a quiet Cell (lease renewals, a Node now and then) must not pay a second sync per write.
 * Pod requests change on a busy Cell, where pod events trigger syncs continuously, which is where
 * a sync meets the older copy.
 */
import {
  cellConfigMap,
  cellLivenessRecordName,
  type ConfigMapObject,
} from '../api/cell-liveness-record.js';
import type { Cell, CellStatus } from '../generated/types/index.js';
import { TYPE_KEYS } from '../kube/objects.js';
import { RetryLaterError } from '../metacontroller/retry-later.js';
import { findObject, type ObjectMap } from '../metacontroller/protocol.js';
import { podRequestsChanged } from './publication.js';

/** Longest a status write can take to reach Metacontroller's cache after its marker did. */
export const STALE_COPY_GRACE_SECONDS = 5;

export function statusMarkerName(cellName: string): string {
  return cellLivenessRecordName(`${cellName}.status`);
}

/**
 * The marker to return with `status`: its observedAt when this answer writes a status that changes
 * pod requests (podRequestsChanged from the copy's), else the marker as it is, or the status's
 * observedAt when there is none yet.
 */
export function statusMarker(cell: Cell, status: CellStatus, children: ObjectMap): ConfigMapObject {
  const kept = markerOf(cell, children)?.data?.['observedAt'];
  const writes = status.observedAt !== cell.status?.observedAt;
  const observedAt =
    kept === undefined || (writes && podRequestsChanged(cell.status, status))
      ? (status.observedAt ?? '')
      : kept;
  return cellConfigMap(
    cell,
    statusMarkerName(cell.metadata.name),
    'kubecell.io/cell-status-marker',
    {
      observedAt,
    },
  );
}

function markerOf(cell: Cell, children: ObjectMap): ConfigMapObject | undefined {
  return findObject<ConfigMapObject>(
    children,
    TYPE_KEYS.configMap,
    statusMarkerName(cell.metadata.name),
    cell.metadata.namespace,
  );
}

/** Throws a RetryLaterError when this copy of the Cell predates the last status write. */
export function refuseStaleCopy(cell: Cell, children: ObjectMap, now: Date): void {
  const marker = markerOf(cell, children);
  const written = Date.parse(marker?.data?.['observedAt'] ?? '');
  if (Number.isNaN(written)) return;
  if (now.getTime() - written >= STALE_COPY_GRACE_SECONDS * 1000) return;
  const copy = Date.parse(cell.status?.observedAt ?? '');
  if (!Number.isNaN(copy) && copy >= written) return;
  throw new RetryLaterError(
    `Cell ${cell.metadata.namespace ?? ''}/${cell.metadata.name}: this copy's status.observedAt (${cell.status?.observedAt ?? 'none'}) predates the status written at ${marker?.data?.['observedAt'] ?? ''} (ConfigMap ${statusMarkerName(cell.metadata.name)}): nothing is changed, and the next sync reads the written status.`,
  );
}
