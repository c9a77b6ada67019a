import type { Cell } from '../generated/types/index.js';
import type { CompositeSyncRequest, CompositeSyncResponse } from '../metacontroller/protocol.js';
import type { CompositeHooks } from '../server/registry.js';
import type { Clock } from '../status/clock.js';
import type { CellControllerConfig } from './config.js';
import { customizeCell } from './customize.js';
import { observeCell } from './observe.js';
import { computeCellStatus } from './status.js';

/** A Cell owns no children: it only reports on what it observes. */
export function syncCell(
  request: CompositeSyncRequest<Cell>,
  config: CellControllerConfig,
  now: Date,
): CompositeSyncResponse {
  const observation = observeCell(request.parent, request.related, config);
  const { status, resyncAfterSeconds } = computeCellStatus(
    request.parent,
    observation,
    config,
    now,
  );
  return { status, children: [], resyncAfterSeconds };
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
  const observation = observeCell(request.parent, request.related, config);
  const { status, resyncAfterSeconds, resolvedBy } = computeCellStatus(
    request.parent,
    observation,
    config,
    now,
  );
  const finalized = resolvedBy !== undefined && resolvedBy.length === 0;
  return { status, children: [], finalized, ...(finalized ? {} : { resyncAfterSeconds }) };
}

export function cellHooks(config: CellControllerConfig, clock: Clock): CompositeHooks<Cell> {
  return {
    customize: customizeCell(config),
    sync: (request) => syncCell(request, config, clock()),
    finalize: (request) => finalizeCell(request, config, clock()),
  };
}
