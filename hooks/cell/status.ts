/**
 * The Cell's status from its assessment, Cluster API style: each condition is computed by its
 * own small function (conditions.ts), the phase is the first
 * condition that does not hold (in the order the design gives), and Ready summarises it. Pure;
 * transition times are carried forward by `reconcileConditions`, so the same input gives
 * byte-identical status. No message carries a time that moves: a message change is a status
 * write, which re-syncs every VirtualCluster on the Cell. status.observedAt is added by the
 * publication phase (publication.ts).
 */
import type { Cell, CellNode, CellStatus } from '../generated/types/index.js';
import { reconcileConditions, verdict, type ConditionVerdict } from '../status/conditions.js';
import type { CellAssessment } from './assess.js';
import { cellConditions } from './conditions.js';
import { ACCEPT_MANAGED_CLUSTER_UID_ANNOTATION, type Liveness } from './liveness.js';
import type { NodeDetail } from './node-detail.js';
import type { NodeReading, NodeSummary } from './nodes.js';
import { REASONS, type CellPhase } from './reasons.js';

export interface PhaseVerdict {
  phase: CellPhase;
  reason: string;
  message: string;
}

export function cellStatus(cell: Cell, assessment: CellAssessment, now: Date): CellStatus {
  const generation = cell.metadata.generation;
  const conditions = cellConditions(cell, assessment);
  const phase = cellPhase(cell, assessment.liveness, conditions);
  return {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    phase: phase.phase,
    conditions: reconcileConditions(
      cell.status?.conditions,
      [...conditions, readyCondition(phase)],
      now,
      generation,
    ),
    managedCluster: assessment.liveness.status,
    provider: assessment.provider,
    ...nodeStatusParts(assessment.nodes, assessment.nodeDetail),
    inventory: assessment.inventory,
    storageInventory: {
      ...assessment.storageInventory,
      ...(assessment.nodeDetail ? { perNode: assessment.nodeDetail.perNode } : {}),
    },
    nodePorts: assessment.nodePorts,
    resolvedBy: assessment.resolvedBy?.length ?? cell.status?.resolvedBy ?? 0,
  };
}

/**
 * The Node parts of the status, with the per-Node detail when the source carries it; without it
 * every Node counts as omitted.
 */
function nodeStatusParts(
  reading: NodeReading,
  detail: NodeDetail | undefined,
): NodeSummary & { nodes?: CellNode[] } {
  const { nodeCount, notReadyNodes, nodeAddresses } = reading;
  return {
    nodeCount: { ...nodeCount, omitted: detail?.omitted ?? nodeCount.total ?? 0 },
    ...(detail ? { nodes: detail.nodes } : {}),
    notReadyNodes,
    nodeAddresses,
  };
}

/** The phase a condition that does not hold puts the Cell in; first match wins. */
const BLOCKING_CONDITIONS: ReadonlyArray<[type: string, phase: CellPhase]> = [
  ['Joined', 'Pending'],
  ['LeaseFresh', 'Degraded'],
  ['InventoryFresh', 'Degraded'],
  ['ProviderReady', 'Provisioning'],
];

/** Deleting, then Failed (a replaced ManagedCluster), then the first blocking condition. */
export function cellPhase(
  cell: Cell,
  liveness: Liveness,
  conditions: readonly ConditionVerdict[],
): PhaseVerdict {
  if (cell.metadata.deletionTimestamp) {
    return { phase: 'Deleting', reason: REASONS.Deleting, message: 'the Cell is being deleted' };
  }
  if (liveness.replaced) {
    const { name, uid } = liveness.status;
    return {
      phase: 'Failed',
      reason: REASONS.ManagedClusterReplaced,
      message: `ManagedCluster ${name} was replaced (recorded UID ${uid}); set the annotation ${ACCEPT_MANAGED_CLUSTER_UID_ANNOTATION} to the new UID once the VirtualClusters on it are checked`,
    };
  }
  for (const [type, phase] of BLOCKING_CONDITIONS) {
    const condition = conditions.find((candidate) => candidate.type === type);
    if (condition && condition.status !== 'True') {
      // A remote Cell whose agent has not reported yet is still being set up, not degraded.
      const setUp = condition.reason === REASONS.AgentReportMissing;
      return {
        phase: setUp ? 'Provisioning' : phase,
        reason: condition.reason,
        message: condition.message,
      };
    }
  }
  return { phase: 'Ready', reason: REASONS.Ready, message: 'the Cell can host VirtualClusters' };
}

export function readyCondition(phase: PhaseVerdict): ConditionVerdict {
  return verdict('Ready', phase.phase === 'Ready', phase.reason, phase.message);
}
