/**
 * The assess phase of a Cell sync: what the observation means, before any condition is written.
 * Pure: the Cell, what observe narrowed, the settings and the time in; the facts the status is
 * built from out (liveness, provider baseline, Nodes, inventory, what is missing, who uses it, and
 * when a verdict judged against the clock may change). Its cluster parts come from the hub's own
 * objects (cluster-parts.ts) or, for a ManifestWork Cell, from its agent's report
 * (assess-report.ts); the inventory is counted the same way from either (inventory.ts).
 */
import type {
  Cell,
  CellNodePortStatus,
  CellProviderStatus,
  CellStatus,
  CellStorageInventory,
  ResourceInventory,
} from '../generated/types/index.js';
import { assessReport, type AgentReportReading, type ReportAssessment } from './assess-report.js';
import { clusterParts, type ClusterParts } from './cluster-parts.js';
import type { CellControllerConfig } from './config.js';
import { cellInventory } from './inventory.js';
import {
  ACCEPT_MANAGED_CLUSTER_UID_ANNOTATION,
  assessLiveness,
  type Liveness,
} from './liveness.js';
import type { NodeDetail } from './node-detail.js';
import type { NodeReading } from './nodes.js';
import type { CellObservation } from './observe.js';

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
  /**
   * The first instant a verdict judged against the clock may change: the lease's (liveness.ts)
   * or the agent report's age limit (assess-report.ts); undefined when neither waits for one.
   */
  lookAgainAt?: Date;
}

export function assessCell(
  cell: Cell,
  observation: CellObservation,
  config: CellControllerConfig,
  now: Date,
): CellAssessment {
  const clusterName = cell.spec.managedClusterRef.name;
  const liveness = assessLiveness(
    { clusterName, cluster: observation.managedCluster, lease: observation.lease },
    livenessBaseline(cell, observation),
    now,
  );
  const {
    parts: { totals, unscheduled, ...parts },
    reading,
    outdatedAt,
  } = partsOf(cell, observation.source, config, now);
  const resolved = observation.virtualClusters ?? [];
  const inventory = cellInventory({ cell, totals, unscheduled, resolved });
  const resolvedBy = observation.virtualClusters?.map((vc) => vc.name).sort();
  const lookAgainAt = earliest(liveness.lookAgainAt, outdatedAt);
  return {
    liveness,
    ...parts,
    // Without a readable report nothing is known of the baseline, not even what is missing.
    missingProvider:
      reading && !('report' in reading)
        ? ['unknown: no readable report from the cell agent']
        : missingProviderParts(parts.provider),
    inventory,
    missingSources: sourcesNotObserved(observation),
    missingDevices: devicesNotOffered(cell, inventory),
    ...(reading ? { agentReport: reading } : {}),
    ...(resolvedBy ? { resolvedBy } : {}),
    ...(lookAgainAt ? { lookAgainAt } : {}),
  };
}

/** The cluster parts: from the hub's own objects, or from the agent's report as it reads. */
function partsOf(
  cell: Cell,
  source: CellObservation['source'],
  config: CellControllerConfig,
  now: Date,
): Partial<ReportAssessment> & { parts: ClusterParts } {
  if (source.delivery === 'Local') {
    return { parts: clusterParts(source.cluster, cell.spec.machineProfile.name) };
  }
  return assessReport(source.report, cell.spec.managedClusterRef.name, config, now);
}

/**
 * The previous status liveness compares with: an operator who accepts a replaced ManagedCluster
 * (the annotation names the UID now observed) makes that UID the recorded one.
 */
function livenessBaseline(cell: Cell, observation: CellObservation): CellStatus | undefined {
  const previous = cell.status;
  const acceptedUid = cell.metadata.annotations?.[ACCEPT_MANAGED_CLUSTER_UID_ANNOTATION];
  return acceptedUid && acceptedUid === observation.managedCluster?.uid
    ? { ...previous, managedCluster: { ...previous?.managedCluster, uid: acceptedUid } }
    : previous;
}

function earliest(...instants: (Date | undefined)[]): Date | undefined {
  let first: Date | undefined;
  for (const at of instants) if (at && (!first || at.getTime() < first.getTime())) first = at;
  return first;
}

/** The baseline parts that are not ready, in a fixed order, for the condition message. */
function missingProviderParts(provider: CellProviderStatus): string[] {
  const parts: [keyof CellProviderStatus, string][] = [
    ['namespaceReady', 'k3k namespace'],
    ['k3kCRDsReady', 'k3k CRDs'],
    ['controllerReady', 'k3k controller'],
    ['cniReady', 'CNI DaemonSet'],
    ['topolvmReady', 'TopoLVM node DaemonSet'],
  ];
  return parts.filter(([field]) => !provider[field]).map(([, label]) => label);
}

/** For a ManifestWork Cell only the VirtualClusters are hub sources: the rest is reported. */
function sourcesNotObserved({ source, virtualClusters }: CellObservation): string[] {
  const cluster = source.delivery === 'Local' ? source.cluster : undefined;
  const sources: [string, unknown][] = cluster
    ? [
        ['Nodes', cluster.nodes],
        ['Pods', cluster.pods],
        ['host Namespaces', cluster.hostNamespaces],
        ['VirtualClusters', virtualClusters],
        ['Services', cluster.nodePorts],
        ['PersistentVolumes', cluster.topolvmVolumes],
      ]
    : [['VirtualClusters', virtualClusters]];
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
