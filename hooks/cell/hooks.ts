import type { Cell } from '../generated/types/index.js';
import { InvalidHookInputError } from '../metacontroller/invalid-input.js';
import type { CompositeSyncRequest, CompositeSyncResponse } from '../metacontroller/protocol.js';
import { QuantityError } from '../quantity/quantity.js';
import type { CompositeHooks } from '../metacontroller/controller-hooks.js';
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

/**
 * The apiserver validates every quantity it stores, so one that does not parse means the request
 * is not what Metacontroller sends: answer 400 (nothing changes) rather than fail with a 500.
 */
function refusingBadQuantities(
  request: CompositeSyncRequest<Cell>,
  compute: () => CompositeSyncResponse,
): CompositeSyncResponse {
  try {
    return compute();
  } catch (err) {
    if (!(err instanceof QuantityError)) throw err;
    const { namespace, name } = request.parent.metadata;
    throw new InvalidHookInputError(
      `Cell ${namespace ?? ''}/${name}: an observed Node, Pod or PersistentVolume has an ${err.message}; the apiserver never stores one, so the request is not acted on`,
    );
  }
}

export function cellHooks(config: CellControllerConfig, clock: Clock): CompositeHooks<Cell> {
  return {
    customize: customizeCell(config),
    sync: (request) => refusingBadQuantities(request, () => syncCell(request, config, clock())),
    finalize: (request) =>
      refusingBadQuantities(request, () => finalizeCell(request, config, clock())),
  };
}
