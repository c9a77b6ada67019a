/**
 * The CellLive condition of a VirtualCluster, and what else its Cell says about the cluster's
 * health (inventory lost, Cell or ManagedCluster replaced, and the CellNodesHealthy condition: the
 * Nodes of the Cell its GPUCellPool marked unhealthy).
 *
 * Before resolution it is read from the Cell itself (the placement reads the Cell anyway). Once
 * resolved, from the Cell's liveness record (hooks/api/cell-liveness-record.ts), which changes only
 * when the Cell's liveness does: the Cell is no longer related (customize.ts, decision D36).
 */
import { cellLivenessRecordName, type CellLivenessRecord } from '../api/cell-liveness-record.js';
import {
  boundUnhealthyNodes,
  describeUnhealthyNodes,
  unhealthyNodesOf,
  type UnhealthyNodes,
} from '../api/node-health.js';
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
  /**
   * CellNodesHealthy: informational, Ready and the phase do not depend on it (a tenant cluster
   * with one unhealthy GPU Node still serves, and the pool replaces the Node without eviction).
   */
  nodes: Verdict;
}

function cellLive(status: Verdict['status'], reason: string, message: string): Verdict {
  return verdict('CellLive', status, reason, message);
}

const HEALTHY = { inventoryGone: false, replaced: false, managedClusterReplaced: false };

function cellNodes(status: Verdict['status'], reason: string, message: string): Verdict {
  return verdict('CellNodesHealthy', status, reason, message);
}

/** CellNodesHealthy Unknown: the Cell's Nodes cannot be judged, for the reason CellLive gives. */
function nodesUnknown(cellName: string, live: Verdict): Verdict {
  return cellNodes(
    'Unknown',
    REASONS.CellNodesUnknown,
    `The health of Cell ${cellName}'s Nodes cannot be read (CellLive ${live.reason}).`,
  );
}

/** Without a verdict on the Nodes: CellNodesHealthy Unknown, saying why CellLive is what it is. */
function withoutNodes(cellName: string, rest: Omit<CellLiveness, 'nodes'>): CellLiveness {
  return { ...rest, nodes: nodesUnknown(cellName, rest.verdict) };
}

/**
 * CellNodesHealthy from the unhealthy Nodes of the Cell (undefined: the source does not say). No
 * time in the messages: the same Nodes and verdicts give the same bytes.
 */
function nodesCondition(
  cellName: string,
  unhealthy: UnhealthyNodes | undefined,
  unknown: { reason: string; message: string },
): Verdict {
  if (unhealthy === undefined) return cellNodes('Unknown', unknown.reason, unknown.message);
  if (unhealthy.nodes.length === 0) {
    return cellNodes(
      'True',
      REASONS.CellNodesHealthy,
      `Every Node of Cell ${cellName} is healthy (none is marked unhealthy by its GPUCellPool).`,
    );
  }
  const count = unhealthy.nodes.length + unhealthy.more;
  return cellNodes(
    'False',
    REASONS.CellNodesUnhealthy,
    `${count} Node(s) of Cell ${cellName} are unhealthy or being replaced: ${describeUnhealthyNodes(unhealthy)}. Their GPUCellPool replaces a cell it remediates without evicting pods: the Node is cordoned and goes once no pod holds its GPU, so pods on it keep running until they finish or are moved. The VirtualCluster keeps serving (informational).`,
  );
}

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
  if (resolved === undefined && cellName === '') {
    // A selector's VirtualCluster before resolution: there is no Cell to judge yet.
    const message =
      'No Cell is chosen yet: spec.cellSelector chooses one at resolution (see the Resolved condition).';
    return withoutNodes(cellName, {
      ...HEALTHY,
      verdict: cellLive('Unknown', REASONS.CellNotObserved, message),
    });
  }
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
    return withoutNodes(cellName, {
      ...HEALTHY,
      verdict: cellLive('Unknown', REASONS.CellNotObserved, message),
    });
  }
  if (cell === undefined) {
    const message = `Cell ${cellName} does not exist.`;
    return withoutNodes(cellName, {
      ...HEALTHY,
      verdict: cellLive('False', REASONS.CellNotFound, message),
    });
  }
  if (resolved !== undefined && cell.metadata.uid !== resolved.cell.uid) {
    return replacedCell(cellName, cell.metadata.uid, resolved);
  }
  const status = cell.status;
  if (status === undefined) {
    const message = `Cell ${cellName} has no status yet: the kubecell-cell controller has not observed it.`;
    return withoutNodes(cellName, {
      ...HEALTHY,
      verdict: cellLive('Unknown', REASONS.CellStatusMissing, message),
    });
  }
  const inventory = findCondition(status.conditions, 'InventoryFresh');
  const fresh = status.managedCluster?.leaseFresh;
  const unhealthy =
    status.nodes === undefined ? undefined : boundUnhealthyNodes(unhealthyNodesOf(status.nodes));
  return fromVerdicts(cellName, {
    leaseFresh: fresh === undefined ? 'Unknown' : fresh ? 'True' : 'False',
    inventoryGone: inventory !== undefined && inventory.status !== 'True',
    managedClusterReplaced:
      status.phase === 'Failed' &&
      findCondition(status.conditions, 'Ready')?.reason === REASONS.ManagedClusterReplaced,
    nodes: nodesCondition(cellName, unhealthy, {
      reason: REASONS.CellNodesNotListed,
      message: `Cell ${cellName} lists no Nodes (status.nodes is absent: its cell agent is older than the hub), so their health is not known.`,
    }),
  });
}

function replacedCell(
  cellName: string,
  uid: string | undefined,
  resolved: ResolvedPlacement,
): CellLiveness {
  const message = `Cell ${cellName} has UID ${uid ?? '(none)'}, but this VirtualCluster resolved to UID ${resolved.cell.uid}: the Cell was deleted and recreated.`;
  return withoutNodes(cellName, {
    ...HEALTHY,
    replaced: true,
    verdict: cellLive('False', REASONS.CellReplaced, message),
  });
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
    nodes: nodesCondition(cellName, read.unhealthyNodes, {
      reason: REASONS.CellNodeHealthNotRecorded,
      message: `The liveness record of Cell ${cellName}, ConfigMap ${cellLivenessRecordName(cellName)}, has no unhealthyNodes: it was written by a kubecell-cell controller older than this one, or the Cell lists no Nodes (its cell agent is older than the hub); the Nodes' health is not known until it is rewritten.`,
    }),
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
  return withoutNodes(cellName, {
    ...HEALTHY,
    verdict: cellLive('Unknown', REASONS.CellLivenessUnreadable, message),
  });
}

/**
 * CellLive from the Cell's verdicts. No time in the messages: a time that moves would rewrite this
 * status on every Cell change.
 */
function fromVerdicts(
  cellName: string,
  verdicts: Pick<CellLiveness, 'inventoryGone' | 'managedClusterReplaced' | 'nodes'> & {
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
