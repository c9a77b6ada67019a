/**
 * The kubecell-cell sync and finalize hooks: refuse a stale copy (stale-copy.ts) → observe
 * (observe.ts: every observed object narrowed once, a ManifestWork Cell's agent report included)
 * → assess (assess.ts) → status (status.ts) → publish (publication.ts), and two children from the
 * published status: the Cell's liveness record (hooks/api/cell-liveness-record.ts) and the status
 * marker (stale-copy.ts). For the same request and the same `now` the answer is byte-identical;
 * while nothing it reports changes the status stays the same until the heartbeat falls due, and a
 * change to pod requests alone waits for the hold (publication.ts). The answer asks for the next
 * sync when something judged against the clock falls due (reportOn); the resync period is only a
 * safety net (config.ts).
 */
import { cellLivenessRecord } from '../api/cell-liveness-record.js';
import type { Cell, CellStatus } from '../generated/types/index.js';
import type { CompositeSyncRequest, CompositeSyncResponse } from '../metacontroller/protocol.js';
import { assessCell } from './assess.js';
import type { CellControllerConfig } from './config.js';
import { publish } from './publication.js';
import { observeCell } from './observe.js';
import { cellStatus } from './status.js';
import { refuseStaleCopy, statusMarker } from './stale-copy.js';

export function syncCell(
  request: CompositeSyncRequest<Cell>,
  config: CellControllerConfig,
  now: Date,
): CompositeSyncResponse {
  refuseStaleCopy(request.parent, request.children, now);
  const { status, resyncAfterSeconds } = reportOn(request, config, now);
  // metacontroller/cell.yaml's resyncPeriodSeconds (30 minutes) is only the safety net: what the
  // Cell judges against the clock asks for its own sync (reportOn), which is always sooner.
  const sooner = resyncAfterSeconds < config.resyncSeconds;
  return {
    status,
    children: [
      cellLivenessRecord(request.parent, status),
      statusMarker(request.parent, status, request.children),
    ],
    ...(sooner ? { resyncAfterSeconds } : {}),
  };
}

/**
 * Deletion waits while any VirtualCluster resolves to the Cell, and also while the
 * VirtualClusters cannot be seen at all: a tenant never loses a cluster because the Cell object
 * was removed.
 */
export function finalizeCell(
  request: CompositeSyncRequest<Cell>,
  config: CellControllerConfig,
  now: Date,
): CompositeSyncResponse {
  refuseStaleCopy(request.parent, request.children, now);
  const { status, resyncAfterSeconds, resolvedBy } = reportOn(request, config, now);
  const finalized = resolvedBy?.length === 0;
  // The liveness record stays while VirtualClusters still read it, and goes last.
  return {
    status,
    children: finalized
      ? []
      : [
          cellLivenessRecord(request.parent, status),
          statusMarker(request.parent, status, request.children),
        ],
    finalized,
    ...(finalized ? {} : { resyncAfterSeconds }),
  };
}

interface Outcome {
  status: CellStatus;
  resyncAfterSeconds: number;
  /** VirtualClusters resolved to the Cell; undefined when they were not observed. */
  resolvedBy?: string[];
}

/**
 * The phases both hooks take, and when to look again: the first instant a verdict judged against
 * the clock may change (the status heartbeat or the end of a hold, the lease's expiry, the agent
 * report's age limit: assessment.lookAgainAt), or the resync period if that came first.
 * Metacontroller keeps the earliest instant asked of a Cell (client-go's delaying queue) and fires
 * it whatever came between, so each of them is one that later syncs only move on: a renewal moves
 * the lease's expiry, a report its age limit, a write the heartbeat.
 */
function reportOn(
  request: CompositeSyncRequest<Cell>,
  config: CellControllerConfig,
  now: Date,
): Outcome {
  const cell = request.parent;
  const observation = observeCell(cell, request.related, config);
  const assessment = assessCell(cell, observation, config, now);
  const { status, dueInSeconds } = publish(cell.status, cellStatus(cell, assessment, now), now);
  return {
    status,
    resyncAfterSeconds: Math.min(
      config.resyncSeconds,
      dueInSeconds,
      secondsUntil(assessment.lookAgainAt, now),
    ),
    ...(assessment.resolvedBy ? { resolvedBy: assessment.resolvedBy } : {}),
  };
}

/** Whole seconds from now until `at`, at least 1 (Infinity without one). */
function secondsUntil(at: Date | undefined, now: Date): number {
  return at ? Math.max(1, Math.ceil((at.getTime() - now.getTime()) / 1000)) : Infinity;
}
