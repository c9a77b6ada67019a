/**
 * The heartbeat phase of a Cell sync: status.observedAt, the one time in the Cell's status.
 *
 * A Cell status write re-syncs every VirtualCluster that relates the Cell, so the status must not
 * change while nothing it reports does. observedAt is a pure function of the previous status, the
 * new status (without observedAt) and now: the previous observedAt is kept while everything else
 * is unchanged and it is younger than HEARTBEAT_SECONDS; otherwise it becomes now. The conditions
 * compared are the reconciled ones, which carry lastTransitionTime forward, so they compare equal
 * when their verdicts do. Readers (a plan, a VirtualCluster being placed) judge the inventory's age
 * by observedAt, with twice the heartbeat as their limit.
 */
import { isDeepStrictEqual } from 'node:util';
import type { CellStatus } from '../generated/types/index.js';
import { formatTime } from '../status/conditions.js';

/** Longest an unchanged status keeps its observedAt. */
export const HEARTBEAT_SECONDS = 300;

/** The status with its observedAt: kept from `previous`, or now (see the module comment). */
export function withHeartbeat(
  previous: CellStatus | undefined,
  next: CellStatus,
  now: Date,
): CellStatus {
  const kept = previous?.observedAt;
  const age = kept === undefined ? NaN : now.getTime() - Date.parse(kept);
  const keep =
    kept !== undefined &&
    age >= 0 &&
    age < HEARTBEAT_SECONDS * 1000 &&
    sameContent(previous ?? {}, next);
  return { ...withoutObservedAt(next), observedAt: keep ? kept : formatTime(now) };
}

/**
 * Seconds until the next sync: the configured resync, or sooner when the heartbeat falls due
 * first, so an unchanged Cell still refreshes observedAt every HEARTBEAT_SECONDS.
 */
export function resyncAfter(status: CellStatus, now: Date, resyncSeconds: number): number {
  const stamped = status.observedAt === undefined ? NaN : Date.parse(status.observedAt);
  if (Number.isNaN(stamped)) return resyncSeconds;
  const due = Math.ceil((stamped + HEARTBEAT_SECONDS * 1000 - now.getTime()) / 1000);
  return Math.max(1, Math.min(resyncSeconds, due));
}

function withoutObservedAt(status: CellStatus): CellStatus {
  const copy = { ...status };
  delete copy.observedAt;
  return copy;
}

/**
 * Equal apart from observedAt, whatever the key order: the previous status arrives as the
 * apiserver stored it (Metacontroller's Go encoding sorts keys), the new one as built here; the
 * JSON round trip drops undefined members, as the wire does.
 */
function sameContent(previous: CellStatus, next: CellStatus): boolean {
  const wire = (status: CellStatus): unknown =>
    JSON.parse(JSON.stringify(withoutObservedAt(status)));
  return isDeepStrictEqual(wire(previous), wire(next));
}
