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
      'Fail',
      Reason.CellNotReady,
      `The Cell's phase is ${phase}, not Ready; see the Cell's conditions for why.`,
    );
  }
  const lease = status?.managedCluster;
  if (lease?.leaseFresh === false) {
    return check(
      'CellLive',
      'Fail',
      Reason.LeaseStale,
      `The ManagedCluster's lease is stale (last renewed ${lease.leaseRenewTime ?? 'never'}); the cluster agent must renew it.`,
    );
  }
  if (lease?.leaseFresh !== true || lease.leaseRenewTime === undefined) {
    return check(
      'CellLive',
      'Unknown',
      Reason.LeaseUnknown,
      "The Cell's status does not say whether the ManagedCluster's lease is fresh; wait for the Cell controller to observe the lease.",
    );
  }
  return check(
    'CellLive',
    'Pass',
    Reason.CellLive,
    `The Cell is Ready and its lease was renewed at ${lease.leaseRenewTime}.`,
  );
}

/**
 * Whether capacity can be judged on the Cell's inventory: its InventoryFresh condition is True
 * and its newest observation is at most `maxAgeSeconds` old at `now`.
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
  const observedAt = newestObservation(cell);
  if (observedAt !== undefined) {
    const ageSeconds = Math.floor((now.getTime() - observedAt.getTime()) / 1000);
    if (ageSeconds > maxAgeSeconds) {
      return check(
        'InventoryFresh',
        'Unknown',
        Reason.InventoryOutdated,
        `The Cell's newest inventory observation is ${ageSeconds}s old (limit ${maxAgeSeconds}s); the kubecell-cell controller may not be syncing it.`,
      );
    }
  }
  // The message names the limit, never the observation time: the Cell stamps a new time on
  // every sync, and a pending VirtualCluster re-evaluates on every change of its Cell, so a time
  // here would change its status on every Cell sync, which re-syncs the Cell (it relates the
  // VirtualClusters placed on it): a loop between the two controllers.
  return check(
    'InventoryFresh',
    'Pass',
    Reason.InventoryFresh,
    observedAt === undefined
      ? "The Cell's inventory is current."
      : `The Cell's inventory is current (its newest observation is at most ${maxAgeSeconds}s old).`,
  );
}

/** The newest time the Cell stamped on an observation (storage, NodePorts, Nodes), if any. */
function newestObservation(cell: Cell): Date | undefined {
  const stamps = [
    cell.status?.storageInventory?.observedAt,
    cell.status?.nodePorts?.observedAt,
    ...(cell.status?.nodes ?? []).map((node) => node.observedAt),
  ];
  let newest: number | undefined;
  for (const stamp of stamps) {
    if (stamp === undefined) continue;
    const time = Date.parse(stamp);
    if (Number.isNaN(time)) continue;
    if (newest === undefined || time > newest) newest = time;
  }
  return newest === undefined ? undefined : new Date(newest);
}
