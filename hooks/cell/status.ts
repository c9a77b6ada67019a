import type { Cell, CellStatus, VirtualCluster } from '../generated/types/index.js';
import { reconcileConditions, type ConditionVerdict } from '../status/conditions.js';
import type { CellControllerConfig } from './config.js';
import {
  accountNode,
  committedEntitlements,
  computeInventory,
  nodeIsReady,
  podsByNode,
  unscheduledDemand,
} from './inventory.js';
import { assessLiveness, type Liveness } from './liveness.js';
import { countNodePorts } from './node-ports.js';
import { virtualClustersResolvedTo, type CellObservation } from './observe.js';
import { assessProvider, missingProviderParts, providerReady } from './provider.js';
import { CELL_REASONS, type CellPhase } from './reasons.js';
import { computeStorageInventory } from './storage.js';

/** Lets an operator accept a replaced ManagedCluster: its value is the new UID to record. */
export const ACCEPT_MANAGED_CLUSTER_UID_ANNOTATION = 'kubecell.io/accept-managed-cluster-uid';

export interface CellStatusResult {
  status: CellStatus;
  resyncAfterSeconds: number;
  /** VirtualClusters resolved to the Cell, as namespace/name; undefined when not observed. */
  resolvedBy?: string[];
}

interface Assessment {
  liveness: Liveness;
  missingSources: string[];
  missingDevices: string[];
  missingProvider: string[];
  resolvedBy?: string[];
}

function sourcesNotObserved(observation: CellObservation): string[] {
  const sources: [string, unknown][] = [
    ['Nodes', observation.nodes],
    ['Pods', observation.pods],
    ['host Namespaces', observation.hostNamespaces],
    ['VirtualClusters', observation.virtualClusters],
    ['Services', observation.services],
    ['PersistentVolumes', observation.persistentVolumes],
  ];
  return sources.filter(([, observed]) => observed === undefined).map(([name]) => name);
}

function verdict(type: string, holds: boolean, reason: string, message: string): ConditionVerdict {
  return { type, status: holds ? 'True' : 'False', reason, message };
}

/** First match wins, in the order the design gives. */
export function cellPhase(
  cell: Cell,
  assessment: Assessment,
): { phase: CellPhase; reason: string; message: string } {
  const { liveness } = assessment;
  const cluster = liveness.status;
  if (cell.metadata.deletionTimestamp) {
    return {
      phase: 'Deleting',
      reason: CELL_REASONS.deleting,
      message: 'the Cell is being deleted',
    };
  }
  if (liveness.replaced) {
    return {
      phase: 'Failed',
      reason: CELL_REASONS.managedClusterReplaced,
      message: `ManagedCluster ${cluster.name} was replaced (recorded UID ${cluster.uid}); set the annotation ${ACCEPT_MANAGED_CLUSTER_UID_ANNOTATION} to the new UID once the VirtualClusters on it are checked`,
    };
  }
  if (!cluster.joined) {
    return {
      phase: 'Pending',
      reason: joinedVerdict(assessment, cell).reason,
      message: joinedVerdict(assessment, cell).message,
    };
  }
  if (!cluster.leaseFresh) {
    return {
      phase: 'Degraded',
      reason: leaseVerdict(liveness).reason,
      message: leaseVerdict(liveness).message,
    };
  }
  if (assessment.missingSources.length > 0) {
    return {
      phase: 'Degraded',
      reason: CELL_REASONS.inventorySourceUnavailable,
      message: `not observed: ${assessment.missingSources.join(', ')}`,
    };
  }
  if (assessment.missingProvider.length > 0) {
    return {
      phase: 'Provisioning',
      reason: CELL_REASONS.providerNotReady,
      message: `not ready: ${assessment.missingProvider.join(', ')}`,
    };
  }
  return {
    phase: 'Ready',
    reason: CELL_REASONS.ready,
    message: 'the Cell can host VirtualClusters',
  };
}

function joinedVerdict({ liveness }: Assessment, cell: Cell): ConditionVerdict {
  const name = cell.spec.managedClusterRef.name;
  if (liveness.status.joined)
    return verdict(
      'Joined',
      true,
      CELL_REASONS.managedClusterJoined,
      `ManagedCluster ${name} is accepted and joined`,
    );
  if (liveness.observed === 'absent') {
    return verdict(
      'Joined',
      false,
      CELL_REASONS.managedClusterNotFound,
      `ManagedCluster ${name} does not exist on the hub`,
    );
  }
  if (liveness.observed === 'notAccepted') {
    return verdict(
      'Joined',
      false,
      CELL_REASONS.managedClusterNotAccepted,
      `ManagedCluster ${name} is not accepted: set spec.hubAcceptsClient (clusteradm accept --clusters ${name})`,
    );
  }
  return verdict(
    'Joined',
    false,
    CELL_REASONS.managedClusterNotJoined,
    `ManagedCluster ${name} has not joined (condition ManagedClusterJoined is not True)`,
  );
}

function leaseVerdict(liveness: Liveness): ConditionVerdict {
  const renewed = liveness.status.leaseRenewTime;
  if (liveness.status.leaseFresh)
    return verdict('LeaseFresh', true, CELL_REASONS.leaseRenewed, `lease renewed at ${renewed}`);
  if (!renewed)
    return verdict(
      'LeaseFresh',
      false,
      CELL_REASONS.leaseNotFound,
      `lease managed-cluster-lease not found in namespace ${liveness.status.name}`,
    );
  return verdict(
    'LeaseFresh',
    false,
    CELL_REASONS.leaseStale,
    `lease last renewed at ${renewed}, more than 5 lease durations ago`,
  );
}

/**
 * The whole Cell status from one observation: a pure function of the Cell, what Metacontroller
 * observed, the previous status (for the recorded UID and transition times) and the clock.
 */
export function computeCellStatus(
  cell: Cell,
  observation: CellObservation,
  config: CellControllerConfig,
  now: Date,
): CellStatusResult {
  const previous = cell.status;
  const acceptedUid = cell.metadata.annotations?.[ACCEPT_MANAGED_CLUSTER_UID_ANNOTATION];
  const previousForLiveness =
    acceptedUid && acceptedUid === observation.managedCluster?.metadata.uid
      ? { ...previous, managedCluster: { ...previous?.managedCluster, uid: acceptedUid } }
      : previous;
  const liveness = assessLiveness(
    cell.spec.managedClusterRef.name,
    observation.managedCluster,
    observation.lease,
    previousForLiveness,
    now,
  );
  const provider = assessProvider(observation, config);

  const pods = observation.pods ?? [];
  const bound = podsByNode(pods);
  const nodes = (observation.nodes ?? []).map((node) =>
    accountNode(node, bound.get(node.metadata.name) ?? [], now),
  );
  const resolved: VirtualCluster[] | undefined =
    observation.virtualClusters && virtualClustersResolvedTo(cell, observation.virtualClusters);
  const inventory = computeInventory({
    cell,
    nodes,
    unscheduled: unscheduledDemand(pods, observation.hostNamespaces ?? new Set()),
    committed: committedEntitlements(resolved ?? []),
  });
  const readyNodes = (observation.nodes ?? []).filter(nodeIsReady);
  const missingDevices = (cell.spec.machineProfile.devices ?? [])
    .filter((device) => {
      const offered = inventory[device.resourceName]?.allocatable;
      return offered === undefined || offered === '0';
    })
    .map((device) => `${device.name} (${device.resourceName})`);
  const resolvedBy = resolved?.map((vc) => `${vc.metadata.namespace}/${vc.metadata.name}`).sort();

  const assessment: Assessment = {
    liveness,
    missingSources: sourcesNotObserved(observation),
    missingDevices,
    missingProvider: missingProviderParts(provider),
    ...(resolvedBy ? { resolvedBy } : {}),
  };
  const phase = cellPhase(cell, assessment);
  const verdicts: ConditionVerdict[] = [
    joinedVerdict(assessment, cell),
    verdict(
      'Available',
      liveness.status.available === true,
      liveness.status.available
        ? CELL_REASONS.managedClusterAvailable
        : CELL_REASONS.managedClusterUnavailable,
      liveness.status.available
        ? 'the ManagedCluster reports itself available (informational: liveness comes from the lease)'
        : 'the ManagedCluster does not report ManagedClusterConditionAvailable=True',
    ),
    leaseVerdict(liveness),
    verdict(
      'ProviderReady',
      providerReady(provider),
      providerReady(provider) ? CELL_REASONS.providerReady : CELL_REASONS.providerNotReady,
      providerReady(provider)
        ? 'k3k, its CRDs and controller, the CNI and TopoLVM are ready'
        : `not ready: ${assessment.missingProvider.join(', ')}`,
    ),
    verdict(
      'InventoryFresh',
      assessment.missingSources.length === 0,
      assessment.missingSources.length === 0
        ? CELL_REASONS.inventoryObserved
        : CELL_REASONS.inventorySourceUnavailable,
      assessment.missingSources.length === 0
        ? 'Nodes, pods, Services, PersistentVolumes and VirtualClusters observed'
        : `not observed: ${assessment.missingSources.join(', ')}`,
    ),
    verdict(
      'CapabilityMismatch',
      missingDevices.length > 0,
      missingDevices.length > 0 ? CELL_REASONS.deviceNotOffered : CELL_REASONS.devicesOffered,
      missingDevices.length > 0
        ? `declared devices with no allocatable on any Ready profile Node: ${missingDevices.join(', ')}`
        : 'every declared device is allocatable on the Ready profile Nodes',
    ),
    resolvedBy === undefined
      ? {
          type: 'InUse',
          status: 'Unknown',
          reason: CELL_REASONS.inventorySourceUnavailable,
          message: 'VirtualClusters were not observed',
        }
      : verdict(
          'InUse',
          resolvedBy.length > 0,
          resolvedBy.length > 0 ? CELL_REASONS.inUse : CELL_REASONS.notInUse,
          resolvedBy.length > 0
            ? `resolved by: ${resolvedBy.join(', ')}`
            : 'no VirtualCluster resolves to this Cell',
        ),
    verdict('Ready', phase.phase === 'Ready', phase.reason, phase.message),
  ];

  const status: CellStatus = {
    ...(cell.metadata.generation === undefined
      ? {}
      : { observedGeneration: cell.metadata.generation }),
    phase: phase.phase,
    conditions: reconcileConditions(previous?.conditions, verdicts, now, cell.metadata.generation),
    managedCluster: liveness.status,
    provider,
    nodes: nodes.map((node) => node.status),
    inventory,
    storageInventory: computeStorageInventory(readyNodes, observation.persistentVolumes, now),
    nodePorts: countNodePorts(observation.services, now),
    resolvedBy: resolvedBy?.length ?? previous?.resolvedBy ?? 0,
  };
  return {
    status,
    resyncAfterSeconds: Math.min(
      config.resyncSeconds,
      liveness.secondsUntilStale ?? config.resyncSeconds,
    ),
    ...(resolvedBy ? { resolvedBy } : {}),
  };
}
