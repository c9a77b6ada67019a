/**
 * The CellLive condition of a VirtualCluster, and what else its resolved Cell says about the
 * cluster's health (inventory lost, Cell or ManagedCluster replaced).
 */
import type { Cell, ResolvedPlacement } from '../generated/types/index.js';
import { findCondition, verdict } from '../status/conditions.js';
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

/** The CellLive condition and what else the Cell says about the VirtualCluster's health. */
export function assessCell(
  cellName: string,
  cellObserved: boolean,
  cell: Cell | undefined,
  resolved: ResolvedPlacement | undefined,
): CellLiveness {
  const base = { inventoryGone: false, replaced: false, managedClusterReplaced: false };
  if (!cellObserved) {
    const message = `Cell ${cellName} was not observed (no Cells in the request); wait for the next sync.`;
    return { ...base, verdict: cellLive('Unknown', REASONS.CellNotObserved, message) };
  }
  if (cell === undefined) {
    const message = `Cell ${cellName} does not exist.`;
    return { ...base, verdict: cellLive('False', REASONS.CellNotFound, message) };
  }
  if (resolved !== undefined && cell.metadata.uid !== resolved.cell.uid) {
    const message = `Cell ${cellName} has UID ${cell.metadata.uid ?? '(none)'}, but this VirtualCluster resolved to UID ${resolved.cell.uid}: the Cell was deleted and recreated.`;
    return { ...base, replaced: true, verdict: cellLive('False', REASONS.CellReplaced, message) };
  }
  const status = cell.status;
  const inventory = findCondition(status?.conditions, 'InventoryFresh');
  return {
    ...base,
    managedClusterReplaced:
      status?.phase === 'Failed' &&
      findCondition(status.conditions, 'Ready')?.reason === REASONS.ManagedClusterReplaced,
    inventoryGone: inventory !== undefined && inventory.status !== 'True',
    verdict: cellLeaseCondition(cellName, status),
  };
}

/**
 * CellLive of the resolved Cell: whether its ManagedCluster's lease is fresh, as the Cell reports
 * it. No time in the messages: a time that moves would rewrite this status on every Cell change.
 */
function cellLeaseCondition(cellName: string, status: Cell['status']): Verdict {
  if (status === undefined) {
    const message = `Cell ${cellName} has no status yet: the kubecell-cell controller has not observed it.`;
    return cellLive('Unknown', REASONS.CellStatusMissing, message);
  }
  const leaseFresh = status.managedCluster?.leaseFresh;
  if (leaseFresh === true) {
    const message = `The lease of Cell ${cellName}'s ManagedCluster is fresh.`;
    return cellLive('True', REASONS.LeaseFresh, message);
  }
  if (leaseFresh === false) {
    const message = `The lease of Cell ${cellName}'s ManagedCluster is stale: OCM's hub reports that its agent stopped renewing it. The ManagedCluster's agent must renew it.`;
    return cellLive('False', REASONS.LeaseStale, message);
  }
  const message = `The status of Cell ${cellName} does not say whether its ManagedCluster's lease is fresh.`;
  return cellLive('Unknown', REASONS.LeaseUnknown, message);
}
