/**
 * The kubecell-cell sync and finalize hooks: observe → assess → status → heartbeat. A Cell owns
 * no children: it only reports on what it observes. For the same request and the same `now` the
 * answer is byte-identical, and while nothing it reports changes the status stays the same until
 * the heartbeat falls due (heartbeat.ts).
 */
import type { Cell, CellStatus } from '../generated/types/index.js';
import type { CompositeSyncRequest, CompositeSyncResponse } from '../metacontroller/protocol.js';
import { readAgentReport } from './agent-report.js';
import { assessCell } from './assess.js';
import type { CellControllerConfig } from './config.js';
import { resyncAfter, withHeartbeat } from './heartbeat.js';
import { observeCell } from './observe.js';
import { cellStatus } from './status.js';

export function syncCell(
  request: CompositeSyncRequest<Cell>,
  config: CellControllerConfig,
  now: Date,
): CompositeSyncResponse {
  const { status, resyncAfterSeconds } = reportOn(request, config, now);
  // metacontroller/cell.yaml's resyncPeriodSeconds already syncs every Cell that often; a second
  // timer would double the idle syncs. Only a heartbeat due sooner asks for its own.
  const sooner = resyncAfterSeconds < config.resyncSeconds;
  return { status, children: [], ...(sooner ? { resyncAfterSeconds } : {}) };
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
  const { status, resyncAfterSeconds, resolvedBy } = reportOn(request, config, now);
  const finalized = resolvedBy?.length === 0;
  return { status, children: [], finalized, ...(finalized ? {} : { resyncAfterSeconds }) };
}

interface CellReport {
  status: CellStatus;
  resyncAfterSeconds: number;
  /** VirtualClusters resolved to the Cell; undefined when they were not observed. */
  resolvedBy?: string[];
}

/**
 * The steps both hooks take: observe → (a ManifestWork Cell: read its agent's report) → assess →
 * status → heartbeat, and when to look again.
 */
function reportOn(
  request: CompositeSyncRequest<Cell>,
  config: CellControllerConfig,
  now: Date,
): CellReport {
  // Every quantity it reads was parsed by the validation layer (hooks/controllers/).
  const observation = observeCell(request.parent, request.related, config);
  // A ManifestWork Cell reads its cluster from its agent's report, judged against now.
  const agentReport =
    request.parent.spec.delivery === 'ManifestWork'
      ? readAgentReport(request.parent, observation, now)
      : undefined;
  const assessment = assessCell(request.parent, observation, config, agentReport);
  const status = withHeartbeat(
    request.parent.status,
    cellStatus(request.parent, assessment, now),
    now,
  );
  return {
    status,
    resyncAfterSeconds: resyncAfter(status, now, config.resyncSeconds),
    ...(assessment.resolvedBy ? { resolvedBy: assessment.resolvedBy } : {}),
  };
}
