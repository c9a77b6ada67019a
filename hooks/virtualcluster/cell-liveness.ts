/**
 * The CellLive condition of a VirtualCluster, and what else its Cell says about the cluster's
 * health (inventory lost, Cell or ManagedCluster replaced).
 *
 * Before resolution it is read from the Cell itself (the placement reads the Cell anyway). Once
 * resolved, from the Cell's liveness record (hooks/api/cell-liveness-record.ts), which changes only
 * when the Cell's liveness does: the Cell is no longer related (customize.ts, decision D36).
 */
import { cellLivenessRecordName, type CellLivenessRecord } from '../api/cell-liveness-record.js';
import type { ResolvedPlacement } from '../generated/types/index.js';
import { findCondition, verdict } from '../status/conditions.js';
import type { VirtualClusterObservation } from './observe.js';
import { REASONS } from './reasons.js';
import type { Verdict } from './status.js';

export interface CellLiveness {
  verdict: Verdict;
  /** The Cell lost its inventory (its InventoryFresh condition is not True). */
  inventoryGone: boolean;
  /** The observed Cell is another object than the resolved one. */
  replaced: boolean;
  /** The Cell reports its ManagedCluster replaced (Cell phase Failed). */
  managedClusterReplaced: boolean;
}

function cellLive(status: Verdict['status'], reason: string, message: string): Verdict {
  return verdict('CellLive', status, reason, message);
}

const HEALTHY = { inventoryGone: false, replaced: false, managedClusterReplaced: false };

/**
 * The CellLive condition and what else the Cell says about the VirtualCluster's health: from the
 * liveness record once resolved, else (or while the record cannot be read and the Cell is in the
 * request, as it is for up to 20 minutes after resolution, see customize.ts) from the Cell.
 */
export function assessCell(
  cellName: string,
  observation: Pick<VirtualClusterObservation, 'cellObserved' | 'cell' | 'cellRecord'>,
  resolved: ResolvedPlacement | undefined,
): CellLiveness {
  const record = resolved === undefined ? undefined : observation.cellRecord;
  const read = record?.observed ? record.read : undefined;
  if (resolved !== undefined && read !== undefined && !('invalid' in read)) {
    return fromRecord(cellName, read, resolved);
  }
  if (record !== undefined && !observation.cellObserved) {
    return unreadableRecord(cellName, record.observed, read as { invalid: string } | undefined);
  }
  return fromCell(cellName, observation, resolved);
}

function fromCell(
  cellName: string,
  { cellObserved, cell }: Pick<VirtualClusterObservation, 'cellObserved' | 'cell'>,
  resolved: ResolvedPlacement | undefined,
): CellLiveness {
  if (!cellObserved) {
    const message = `Cell ${cellName} was not observed (no Cells in the request); wait for the next sync.`;
    return { ...HEALTHY, verdict: cellLive('Unknown', REASONS.CellNotObserved, message) };
  }
  if (cell === undefined) {
    const message = `Cell ${cellName} does not exist.`;
    return { ...HEALTHY, verdict: cellLive('False', REASONS.CellNotFound, message) };
  }
  if (resolved !== undefined && cell.metadata.uid !== resolved.cell.uid) {
    return replacedCell(cellName, cell.metadata.uid, resolved);
  }
  const status = cell.status;
  if (status === undefined) {
    const message = `Cell ${cellName} has no status yet: the kubecell-cell controller has not observed it.`;
    return { ...HEALTHY, verdict: cellLive('Unknown', REASONS.CellStatusMissing, message) };
  }
  const inventory = findCondition(status.conditions, 'InventoryFresh');
  const fresh = status.managedCluster?.leaseFresh;
  return fromVerdicts(cellName, {
    leaseFresh: fresh === undefined ? 'Unknown' : fresh ? 'True' : 'False',
    inventoryGone: inventory !== undefined && inventory.status !== 'True',
    managedClusterReplaced:
      status.phase === 'Failed' &&
      findCondition(status.conditions, 'Ready')?.reason === REASONS.ManagedClusterReplaced,
  });
}

function replacedCell(
  cellName: string,
  uid: string | undefined,
  resolved: ResolvedPlacement,
): CellLiveness {
  const message = `Cell ${cellName} has UID ${uid ?? '(none)'}, but this VirtualCluster resolved to UID ${resolved.cell.uid}: the Cell was deleted and recreated.`;
  return { ...HEALTHY, replaced: true, verdict: cellLive('False', REASONS.CellReplaced, message) };
}

/** From a readable record: the Cell it names must be the resolved one. */
function fromRecord(
  cellName: string,
  read: CellLivenessRecord,
  resolved: ResolvedPlacement,
): CellLiveness {
  if (read.cellUID !== resolved.cell.uid) return replacedCell(cellName, read.cellUID, resolved);
  return fromVerdicts(cellName, {
    leaseFresh: read.leaseFresh,
    inventoryGone: read.inventoryFresh !== 'True',
    managedClusterReplaced: read.managedClusterReplaced,
  });
}

/**
 * Unknown, saying why: ConfigMaps not observed, the record absent (the Cell was deleted, or its
 * controller has not written the record yet, e.g. just after an upgrade), or not one the Cell
 * controller writes.
 */
function unreadableRecord(
  cellName: string,
  observed: boolean,
  read: { invalid: string } | undefined,
): CellLiveness {
  const name = cellLivenessRecordName(cellName);
  const why = !observed
    ? 'ConfigMaps were not observed (not in the sync request)'
    : read === undefined
      ? `its liveness record, ConfigMap ${name}, does not exist: the Cell was deleted, or the kubecell-cell controller has not written the record yet`
      : `its liveness record, ConfigMap ${name}, has an unexpected ${read.invalid}: the kubecell-cell controller rewrites it on its next sync`;
  const message = `The liveness of Cell ${cellName} cannot be read: ${why}.`;
  return { ...HEALTHY, verdict: cellLive('Unknown', REASONS.CellLivenessUnreadable, message) };
}

/**
 * CellLive from the Cell's verdicts. No time in the messages: a time that moves would rewrite this
 * status on every Cell change.
 */
function fromVerdicts(
  cellName: string,
  verdicts: Pick<CellLiveness, 'inventoryGone' | 'managedClusterReplaced'> & {
    leaseFresh: CellLivenessRecord['leaseFresh'];
  },
): CellLiveness {
  const { leaseFresh, ...rest } = verdicts;
  const base = { ...rest, replaced: false };
  if (leaseFresh === 'True') {
    const message = `The lease of Cell ${cellName}'s ManagedCluster is fresh.`;
    return { ...base, verdict: cellLive('True', REASONS.LeaseFresh, message) };
  }
  if (leaseFresh === 'False') {
    const message = `The lease of Cell ${cellName}'s ManagedCluster is stale (the Cell's LeaseFresh condition says why): its registration agent stopped renewing it.`;
    return { ...base, verdict: cellLive('False', REASONS.LeaseStale, message) };
  }
  const message = `The status of Cell ${cellName} does not say whether its ManagedCluster's lease is fresh.`;
  return { ...base, verdict: cellLive('Unknown', REASONS.LeaseUnknown, message) };
}
