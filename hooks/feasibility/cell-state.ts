/**
 * The checks on the Cell's own state: CellLive (Ready, with a fresh ManagedCluster lease) and
 * InventoryFresh (its inventory is reported, True and recent enough to judge capacity on).
 */
import type { Cell, FeasibilityCheck } from '../generated/types/index.js';
import { findCondition } from '../status/conditions.js';
import { check } from './check.js';
import { Reason } from './reasons.js';

export function checkCellLive(cell: Cell): FeasibilityCheck {
  const status = cell.status;
  const phase = status?.phase;
  if (phase === undefined) {
    return check(
      'CellLive',
      'Unknown',
      Reason.CellNotObserved,
      'The Cell has no status yet: the kubecell-cell controller has not observed it. Wait for its first sync.',
    );
  }
  if (phase !== 'Ready') {
    return check(
      'CellLive',
      'Unknown',
      Reason.CellNotReady,
      // Unknown, not Fail: a Cell just created is Pending until it has joined and its
      // inventory is observed, and a placement is evaluated again when the Cell changes (D40).
      `The Cell's phase is ${phase}, not Ready; see the Cell's conditions for why. The placement is evaluated again when the Cell changes.`,
    );
  }
  // No time in these messages: a time that moves would rewrite the status of every placement
  // that reports them.
  const leaseFresh = status?.managedCluster?.leaseFresh;
  if (leaseFresh === false) {
    return check(
      'CellLive',
      'Fail',
      Reason.LeaseStale,
      "The ManagedCluster's lease is stale (the Cell's LeaseFresh condition says why): its registration agent stopped renewing it, or OCM's hub says so. The agent must renew it.",
    );
  }
  if (leaseFresh !== true) {
    return check(
      'CellLive',
      'Unknown',
      Reason.LeaseUnknown,
      "The Cell's status does not say whether the ManagedCluster's lease is fresh (the Cell controller did not observe its Lease); wait for the Cell controller.",
    );
  }
  return check(
    'CellLive',
    'Pass',
    Reason.CellLive,
    "The Cell is Ready and its ManagedCluster's lease is fresh.",
  );
}

/**
 * Whether capacity can be judged on the Cell's inventory: its InventoryFresh condition is True
 * and its `status.observedAt` (the Cell's heartbeat, refreshed at least every 300 s) is at most
 * `maxAgeSeconds` old at `now`. The messages name the limit, never a time or an age: either
 * would change on every evaluation of a pending placement and rewrite its status each time.
 */
export function checkInventoryFresh(
  cell: Cell,
  now: Date,
  maxAgeSeconds: number,
): FeasibilityCheck {
  const condition = findCondition(cell.status?.conditions, 'InventoryFresh');
  if (condition === undefined) {
    return check(
      'InventoryFresh',
      'Unknown',
      Reason.InventoryNotObserved,
      'The Cell has not reported its inventory yet (no InventoryFresh condition); wait for the Cell controller.',
    );
  }
  if (condition.status !== 'True') {
    return check(
      'InventoryFresh',
      'Unknown',
      Reason.InventoryStale,
      `The Cell's InventoryFresh condition is ${condition.status} (${condition.reason}${condition.message ? `: ${condition.message}` : ''}); capacity cannot be judged until it is True.`,
    );
  }
  return inventoryAge(cell, now, maxAgeSeconds);
}

/** InventoryFresh once the condition is True: how old the Cell's status.observedAt is. */
function inventoryAge(cell: Cell, now: Date, maxAgeSeconds: number): FeasibilityCheck {
  const stamp = cell.status?.observedAt;
  const observedAt = typeof stamp === 'string' ? Date.parse(stamp) : NaN;
  if (Number.isNaN(observedAt)) {
    return check(
      'InventoryFresh',
      'Unknown',
      Reason.InventoryNotObserved,
      "The Cell's status has no readable observedAt: the Cell controller has not confirmed its inventory yet; wait for its next sync.",
    );
  }
  if (now.getTime() - observedAt > maxAgeSeconds * 1000) {
    return check(
      'InventoryFresh',
      'Unknown',
      Reason.InventoryOutdated,
      `The Cell's inventory was last confirmed more than ${maxAgeSeconds}s ago (status.observedAt); the kubecell-cell controller may not be syncing it.`,
    );
  }
  return check(
    'InventoryFresh',
    'Pass',
    Reason.InventoryFresh,
    `The Cell's inventory is current (its status.observedAt is at most ${maxAgeSeconds}s old).`,
  );
}
