/**
 * The publication phase of a Cell sync: when the status is written, and its observedAt times.
 *
 * Every sync computes the whole status; this phase decides what is returned, as a pure function of
 * the previous status, the new one and now, so the same inputs give the same bytes:
 *
 * - **Unchanged**: the previous observedAt is kept while it is younger than HEARTBEAT_SECONDS, so
 *   an idle Cell is not rewritten on every sync; after that it becomes now (the heartbeat, which
 *   lets a reader tell a live Cell controller from a dead one).
 * - **Only pod requests changed** (POD_REQUEST_FIELDS): the previous status is returned as it
 *   was until the hold ends (holdMs), and the Cell asks for a sync then. Pods come and go every
 *   second on a busy Cell; without the hold each one would be a write. While the lease is renewed
 *   on time the hold lasts until the next renewal is due, so the pods ride on the renewal's write
 *   instead of a write of their own just before it. Anything else (a Node, the lease, a committed
 *   entitlement, a condition) is written at once.
 * - **Anything else changed**: written with observedAt now.
 *
 * The per-Node, storage and NodePort observedAt times of a Local Cell are the status's own:
 * everything in it was observed at that write, or confirmed unchanged since (the heartbeat). The
 * conditions compared are the reconciled ones, which carry lastTransitionTime forward, so they
 * compare equal when their verdicts do. Readers (a plan, a VirtualCluster being placed) judge the
 * inventory's age by status.observedAt, with twice the heartbeat as their limit.
 */
import { isDeepStrictEqual } from 'node:util';
import type { CellStatus } from '../generated/types/index.js';
import { formatTime } from '../status/conditions.js';

/** Longest an unchanged status keeps its observedAt. */
export const HEARTBEAT_SECONDS = 300;
/**
 * Shortest time from the last write to one that only changes pod requests: OCM's default lease
 * period (the idle benchmark measured 2.5 writes a minute with a 30-s hold).
 */
export const POD_REQUEST_HOLD_SECONDS = 60;
/** Longest time from the last write to one that only changes pod requests, whatever the lease. */
export const POD_REQUEST_HOLD_MAX_SECONDS = 120;
/**
 * OCM's agent renews every leaseDurationSeconds plus a jitter of up to 25 % (liveness.ts,
 * RENEWAL_OVERDUE_DURATIONS), so the next renewal is due by renewTime + 1.25 durations.
 */
const RENEWAL_DUE_DURATIONS = 1.25;
/**
 * Allowed for a renewal to reach the Cell's sync: the Lease event, Metacontroller's queue and a
 * busy Cell's previous sync. A 60-s hold that ended at the renewal itself measured 2.5 writes a
 * minute under 1 pod/s of churn (idle benchmark, issue 25): pods written just before each renewal.
 */
const RENEWAL_DELIVERY_SECONDS = 15;

export interface Publication {
  status: CellStatus;
  /** Seconds until the next write may fall due (heartbeat or the end of a hold). */
  dueInSeconds: number;
}

/** The status to return (see the module comment). */
export function publish(
  previous: CellStatus | undefined,
  next: CellStatus,
  now: Date,
): Publication {
  const kept = previous?.observedAt;
  const age = kept === undefined ? NaN : now.getTime() - Date.parse(kept);
  const young = (seconds: number) => kept !== undefined && age >= 0 && age < seconds * 1000;
  if (previous && young(HEARTBEAT_SECONDS) && sameContent(previous, next)) {
    return { status: stamped(next, kept as string), dueInSeconds: dueIn(age, HEARTBEAT_SECONDS) };
  }
  const hold = kept === undefined ? NaN : holdMs(next, now.getTime() - age);
  if (previous && age >= 0 && age < hold && samePlacement(previous, next)) {
    return { status: previous, dueInSeconds: dueIn(age, hold / 1000) };
  }
  return { status: stamped(next, formatTime(now)), dueInSeconds: HEARTBEAT_SECONDS };
}

/**
 * How long (ms) a change to pod requests alone is held after the last write at `writtenAt` (ms):
 * POD_REQUEST_HOLD_SECONDS, or, while the lease is renewed on time, once the next renewal
 * is due and has had time to arrive (it writes the pods with it), but never later than
 * POD_REQUEST_HOLD_MAX_SECONDS after the last write. Read from the new status alone (the lease as
 * this sync judged it), so the answer stays a pure function of its inputs.
 */
function holdMs(next: CellStatus, writtenAt: number): number {
  const shortest = POD_REQUEST_HOLD_SECONDS * 1000;
  const lease = next.managedCluster;
  const renewedAt = lease?.leaseFresh === true ? Date.parse(lease.leaseRenewTime ?? '') : NaN;
  if (Number.isNaN(renewedAt) || lease?.leaseDurationSeconds === undefined) return shortest;
  const renewalArrives =
    renewedAt +
    (RENEWAL_DUE_DURATIONS * lease.leaseDurationSeconds + RENEWAL_DELIVERY_SECONDS) * 1000;
  return Math.max(
    shortest,
    Math.min(POD_REQUEST_HOLD_MAX_SECONDS * 1000, renewalArrives - writtenAt),
  );
}

function dueIn(ageMs: number, seconds: number): number {
  return Math.max(1, Math.ceil((seconds * 1000 - ageMs) / 1000));
}

/** The status with observedAt `time`, and the same time on the parts observed with it. */
function stamped(status: CellStatus, time: string): CellStatus {
  return {
    ...status,
    ...(status.nodes ? { nodes: status.nodes.map((node) => ({ ...node, observedAt: time })) } : {}),
    ...(status.storageInventory
      ? { storageInventory: { ...status.storageInventory, observedAt: time } }
      : {}),
    ...(status.nodePorts ? { nodePorts: { ...status.nodePorts, observedAt: time } } : {}),
    observedAt: time,
  };
}

/** The fields that follow pods alone: held back for POD_REQUEST_HOLD_SECONDS. */
const POD_REQUEST_FIELDS = {
  inventory: ['requested', 'pending', 'availableEstimate'],
  nodes: ['activeRequested', 'pendingRequested'],
} as const;

/**
 * The status as it travels (the JSON round trip drops undefined members, as the wire does),
 * without its observedAt times, and without the pod request fields when `withoutPods`. Key order
 * does not matter: isDeepStrictEqual compares members, and the previous status arrives as the
 * apiserver stored it (Metacontroller's Go encoding sorts keys).
 */
function comparable(status: CellStatus, withoutPods: boolean): unknown {
  const wire = JSON.parse(JSON.stringify(status)) as Record<string, unknown> & CellStatus;
  delete wire.observedAt;
  for (const node of wire.nodes ?? []) {
    delete node.observedAt;
    if (withoutPods) for (const field of POD_REQUEST_FIELDS.nodes) delete node[field];
  }
  if (wire.storageInventory) delete wire.storageInventory.observedAt;
  if (wire.nodePorts) delete wire.nodePorts.observedAt;
  if (withoutPods) {
    for (const resource of Object.values(wire.inventory ?? {})) {
      if (!resource) continue;
      for (const field of POD_REQUEST_FIELDS.inventory) delete resource[field];
    }
  }
  return wire;
}

function sameContent(previous: CellStatus, next: CellStatus): boolean {
  return isDeepStrictEqual(comparable(previous, false), comparable(next, false));
}

/** Whether the pod request fields differ between two statuses (the rest aside). */
export function podRequestsChanged(previous: CellStatus | undefined, next: CellStatus): boolean {
  if (previous === undefined) return true;
  const podsOnly = (status: CellStatus) => [
    Object.values(status.inventory ?? {}).map((resource) =>
      POD_REQUEST_FIELDS.inventory.map((field) => resource?.[field]),
    ),
    (status.nodes ?? []).map((node) => POD_REQUEST_FIELDS.nodes.map((field) => node[field])),
  ];
  return !isDeepStrictEqual(podsOnly(previous), podsOnly(next));
}

function samePlacement(previous: CellStatus, next: CellStatus): boolean {
  return isDeepStrictEqual(comparable(previous, true), comparable(next, true));
}
