/**
 * What one cluster shows about a machine profile, in the terms of a Cell's status: computed from
 * the hub's own objects for a Local Cell (assess.ts), and by the cell agent from its managed
 * cluster's for a remote one (cluster-report.ts), which the hub reads back into the same parts
 * (assess-report.ts).
 */
import type {
  CellNodePortStatus,
  CellProviderStatus,
  CellStorageInventory,
} from '../generated/types/index.js';
import { accountCluster, type Amounts, type NodeTotals } from './inventory.js';
import { nodeDetail, type NodeDetail } from './node-detail.js';
import { summariseNodes, type NodeReading } from './nodes.js';
import type { ClusterObservation } from './observe.js';
import { computeStorageInventory } from './storage.js';

export interface ClusterParts {
  provider: CellProviderStatus;
  /** The Node parts of the status, and the Nodes whose InternalIP was refused. */
  nodes: NodeReading;
  /**
   * One entry per profile Node and its storage, bounded by size (node-detail.ts); undefined when
   * the source carries none (a cell agent older than the hub).
   */
  nodeDetail?: NodeDetail;
  /** Sums over the Ready profile Nodes, and the unscheduled demand: what the inventory counts. */
  totals: NodeTotals;
  unscheduled: Amounts;
  storageInventory: CellStorageInventory;
  nodePorts: CellNodePortStatus;
}

/** The parts from a cluster's own objects: with the per-Node detail. */
export function clusterParts(
  observation: ClusterObservation,
  profile: string,
): ClusterParts & { nodeDetail: NodeDetail } {
  const nodes = observation.nodes ?? [];
  const accounting = accountCluster(nodes, observation.pods);
  const volumes = observation.topolvmVolumes;
  return {
    provider: observation.provider,
    nodes: summariseNodes(nodes),
    nodeDetail: nodeDetail(accounting.nodes, volumes, profile),
    totals: accounting.totals,
    unscheduled: accounting.unscheduled,
    storageInventory: computeStorageInventory(nodes, volumes),
    nodePorts: {
      allocated: observation.nodePorts ?? 0,
      fresh: observation.nodePorts !== undefined,
    },
  };
}
