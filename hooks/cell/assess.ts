/**
 * The assess phase of a Cell sync: what the observation means, before any condition is written.
 * Pure: the Cell, what Metacontroller observed, the settings and the time in; the facts the status
 * is built from out (liveness, provider baseline, Nodes, inventory, what is missing, who uses it).
 * The time serves one judgement only: whether the lease expired (liveness.ts).
 */
import type {
  Cell,
  CellNodePortStatus,
  CellProviderStatus,
  CellStatus,
  CellStorageInventory,
  ResourceInventory,
} from '../generated/types/index.js';
import { reportedParts, type AgentReportReading, type ClusterParts } from './agent-report.js';
import type { CellControllerConfig } from './config.js';
import {
  accountNode,
  committedEntitlements,
  computeInventory,
  nodeIsReady,
  podsByNode,
  unscheduledDemand,
} from './inventory.js';
import {
  ACCEPT_MANAGED_CLUSTER_UID_ANNOTATION,
  assessLiveness,
  type Liveness,
} from './liveness.js';
import { countNodePorts } from './node-ports.js';
import { summariseNodes, type NodeReading } from './nodes.js';
import { virtualClustersResolvedTo, type CellObservation } from './observe.js';
import { assessProvider, missingProviderParts } from './provider.js';
import type { Amounts } from './pod-requests.js';
import { computeStorageInventory } from './storage.js';
import { nodeDetail, nodeFactsOf, type NodeDetail } from './node-detail.js';

export interface CellAssessment {
  liveness: Liveness;
  provider: CellProviderStatus;
  /** The provider baseline parts that are not ready, in a fixed order. */
  missingProvider: string[];
  /** The related groups Metacontroller did not deliver (not observed, not empty). */
  missingSources: string[];
  /** The Node parts of the status, and the Nodes whose InternalIP was refused. */
  nodes: NodeReading;
  /**
   * One entry per profile Node and its storage, bounded by size (node-detail.ts); undefined when
   * the source carries none (a cell agent's report).
   */
  nodeDetail?: NodeDetail;
  inventory: Record<string, ResourceInventory>;
  /** Declared devices no Ready profile Node offers, as `name (resourceName)`. */
  missingDevices: string[];
  storageInventory: CellStorageInventory;
  nodePorts: CellNodePortStatus;
  /** VirtualClusters resolved to the Cell, as namespace/name; undefined when not observed. */
  resolvedBy?: string[];
  /** A ManifestWork Cell's reading of its agent's report (the cluster parts come from it). */
  agentReport?: AgentReportReading;
}

export function assessCell(
  cell: Cell,
  observation: CellObservation,
  config: CellControllerConfig,
  now: Date,
  agentReport?: AgentReportReading,
): CellAssessment {
  const liveness = assessLiveness(
    {
      clusterName: cell.spec.managedClusterRef.name,
      cluster: observation.managedCluster,
      lease: observation.lease,
      leaseObserved: observation.leaseObserved,
    },
    livenessBaseline(cell, observation),
    now,
  );
  const resolved =
    observation.virtualClusters && virtualClustersResolvedTo(cell, observation.virtualClusters);
  const committed = committedEntitlements(resolved ?? []);
  const parts = agentReport
    ? reportedParts(cell, agentReport, committed, config)
    : localParts(cell, observation, config, committed);
  const resolvedBy = resolved?.map((vc) => `${vc.metadata.namespace}/${vc.metadata.name}`).sort();
  return {
    liveness,
    ...parts,
    missingSources: sourcesNotObserved(observation, agentReport !== undefined),
    missingDevices: devicesNotOffered(cell, parts.inventory),
    ...(agentReport ? { agentReport } : {}),
    ...(resolvedBy ? { resolvedBy } : {}),
  };
}

/** The cluster parts of a Local Cell, from the hub's own Nodes, pods, Services, ... */
function localParts(
  cell: Cell,
  observation: CellObservation,
  config: CellControllerConfig,
  committed: Amounts,
): ClusterParts {
  const provider = assessProvider(observation, config);
  const pods = observation.pods ?? [];
  const bound = podsByNode(pods);
  const nodes = observation.nodes ?? [];
  const accounted = nodes.map((node) => accountNode(node, bound.get(node.metadata.name) ?? []));
  return {
    provider,
    missingProvider: missingProviderParts(provider),
    nodes: summariseNodes(nodes),
    nodeDetail: nodeDetail(
      nodeFactsOf(nodes, accounted, observation.persistentVolumes),
      cell.spec.machineProfile.name,
    ),
    inventory: computeInventory({
      cell,
      nodes: accounted,
      unscheduled: unscheduledDemand(pods, observation.hostNamespaces ?? new Set()),
      committed,
    }),
    storageInventory: computeStorageInventory(
      nodes.filter(nodeIsReady),
      observation.persistentVolumes,
    ),
    nodePorts: countNodePorts(observation.services),
  };
}

/**
 * The previous status liveness compares with: an operator who accepts a replaced ManagedCluster
 * (the annotation names the UID now observed) makes that UID the recorded one.
 */
function livenessBaseline(cell: Cell, observation: CellObservation): CellStatus | undefined {
  const previous = cell.status;
  const acceptedUid = cell.metadata.annotations?.[ACCEPT_MANAGED_CLUSTER_UID_ANNOTATION];
  return acceptedUid && acceptedUid === observation.managedCluster?.metadata.uid
    ? { ...previous, managedCluster: { ...previous?.managedCluster, uid: acceptedUid } }
    : previous;
}

/** For a ManifestWork Cell only the VirtualClusters are hub sources: the rest is reported. */
function sourcesNotObserved(observation: CellObservation, reported: boolean): string[] {
  const sources: [string, unknown][] = reported
    ? [['VirtualClusters', observation.virtualClusters]]
    : [
        ['Nodes', observation.nodes],
        ['Pods', observation.pods],
        ['host Namespaces', observation.hostNamespaces],
        ['VirtualClusters', observation.virtualClusters],
        ['Services', observation.services],
        ['PersistentVolumes', observation.persistentVolumes],
      ];
  return sources.filter(([, observed]) => observed === undefined).map(([name]) => name);
}

function devicesNotOffered(cell: Cell, inventory: Record<string, ResourceInventory>): string[] {
  return (cell.spec.machineProfile.devices ?? [])
    .filter((device) => {
      const offered = inventory[device.resourceName]?.allocatable;
      return offered === undefined || offered === '0';
    })
    .map((device) => `${device.name} (${device.resourceName})`);
}
