/**
 * The Cell's conditions but Ready, each computed by its own small function from the assessment:
 * the bound ManagedCluster's liveness (Joined, Available as its own word, LeaseFresh as KubeCell
 * and OCM's hub judge it), then what its cluster offers (ProviderReady, InventoryFresh observed
 * on the hub or reported by its cell agent, CapabilityMismatch, NodeAddressesValid,
 * NodeDetailTruncated, NodesHealthy) and who uses it (InUse). status.ts derives the phase and Ready from them.
 */
import {
  boundUnhealthyNodes,
  describeUnhealthyNodes,
  unhealthyNodesOf,
} from '../api/node-health.js';
import type { Cell } from '../generated/types/index.js';
import { echo } from '../json/echo.js';
import { AGENT_WORK_NAME } from '../remote/contract.js';
import type { RefusedNodeAddresses } from '../remote/report.js';
import { verdict, type ConditionVerdict } from '../status/conditions.js';
import { REPORT_MAX_AGE_SECONDS, type AgentReportReading } from './assess-report.js';
import type { CellAssessment } from './assess.js';
import { LEASE_GRACE_DURATIONS, type Liveness } from './liveness.js';
import { NODE_DETAIL_BUDGET_BYTES, type NodeDetail } from './node-detail.js';
import {
  AVAILABLE_CONDITION,
  LEASE_UPDATE_STOPPED,
  MANAGED_CLUSTER_LEASE,
} from './observe-managed-cluster.js';
import { REASONS } from './reasons.js';

/** Every condition but Ready, in the order the status lists them. */
export function cellConditions(cell: Cell, assessment: CellAssessment): ConditionVerdict[] {
  return [
    joinedCondition(cell, assessment.liveness),
    availableCondition(assessment.liveness),
    leaseFreshCondition(assessment.liveness),
    providerReadyCondition(assessment.missingProvider),
    assessment.agentReport
      ? reportFreshCondition(assessment.agentReport, assessment.missingSources)
      : inventoryFreshCondition(assessment.missingSources),
    capabilityMismatchCondition(assessment.missingDevices),
    nodeAddressesCondition(
      assessment.nodes.refusedNodeAddresses,
      assessment.agentReport !== undefined,
    ),
    nodeDetailCondition(assessment.nodes.nodeCount.total ?? 0, assessment.nodeDetail),
    nodesHealthyCondition(assessment.nodeDetail),
    inUseCondition(assessment.resolvedBy),
  ];
}

export function joinedCondition(cell: Cell, liveness: Liveness): ConditionVerdict {
  const name = cell.spec.managedClusterRef.name;
  if (liveness.status.joined) {
    return verdict(
      'Joined',
      true,
      REASONS.ManagedClusterJoined,
      `ManagedCluster ${name} is accepted and joined`,
    );
  }
  if (liveness.observed === 'absent') {
    return verdict(
      'Joined',
      false,
      REASONS.ManagedClusterNotFound,
      `ManagedCluster ${name} does not exist on the hub`,
    );
  }
  if (liveness.observed === 'notAccepted') {
    return verdict(
      'Joined',
      false,
      REASONS.ManagedClusterNotAccepted,
      `ManagedCluster ${name} is not accepted: set spec.hubAcceptsClient (clusteradm accept --clusters ${name})`,
    );
  }
  return verdict(
    'Joined',
    false,
    REASONS.ManagedClusterNotJoined,
    `ManagedCluster ${name} has not joined (condition ManagedClusterJoined is not True)`,
  );
}

/** Informational: liveness comes from LeaseFresh, not from the cluster's own word. */
export function availableCondition(liveness: Liveness): ConditionVerdict {
  return liveness.status.available
    ? verdict(
        'Available',
        true,
        REASONS.ManagedClusterAvailable,
        'the ManagedCluster reports itself available (informational: liveness comes from the lease, LeaseFresh)',
      )
    : verdict(
        'Available',
        false,
        REASONS.ManagedClusterUnavailable,
        'the ManagedCluster does not report ManagedClusterConditionAvailable=True',
      );
}

/** Whether the lease is renewed, as KubeCell and OCM's hub judge it (judgeLease in liveness.ts). */
export function leaseFreshCondition(liveness: Liveness): ConditionVerdict {
  const { name, leaseDurationSeconds } = liveness.status;
  const lease = `the Lease ${MANAGED_CLUSTER_LEASE} in namespace ${name}`;
  const threshold = `${LEASE_GRACE_DURATIONS} × leaseDurationSeconds (${LEASE_GRACE_DURATIONS * (leaseDurationSeconds ?? 0)} s)`;
  switch (liveness.lease) {
    case 'LeaseRenewed':
      return verdict(
        'LeaseFresh',
        true,
        REASONS.LeaseRenewed,
        `${lease} was renewed within ${threshold}`,
      );
    case 'LeaseStale':
      return verdict(
        'LeaseFresh',
        false,
        REASONS.LeaseStale,
        `${lease} was not renewed for ${threshold}, whatever ${AVAILABLE_CONDITION} says: the registration agent of ManagedCluster ${name} stopped renewing it, or cannot reach the hub`,
      );
    case 'LeaseUpdateStopped':
      return verdict(
        'LeaseFresh',
        false,
        REASONS.LeaseUpdateStopped,
        `OCM's hub set ${AVAILABLE_CONDITION} of ManagedCluster ${name} to Unknown with reason ${LEASE_UPDATE_STOPPED}: it found the lease not renewed (the stricter verdict wins)`,
      );
    case 'LeaseMissing':
      return verdict(
        'LeaseFresh',
        false,
        REASONS.LeaseMissing,
        liveness.observed === 'absent'
          ? `ManagedCluster ${name} does not exist on the hub: no lease to judge`
          : `${lease} does not exist or has no spec.renewTime: the registration agent has not renewed it since the join`,
      );
    default:
      return verdict(
        'LeaseFresh',
        'Unknown',
        REASONS.LeaseNotObserved,
        `Leases were not observed (not in the sync request): the lease of ManagedCluster ${name} cannot be judged`,
      );
  }
}

export function providerReadyCondition(missingProvider: readonly string[]): ConditionVerdict {
  return missingProvider.length === 0
    ? verdict(
        'ProviderReady',
        true,
        REASONS.ProviderBaselineReady,
        'k3k, its CRDs and controller, the CNI and TopoLVM are ready',
      )
    : verdict(
        'ProviderReady',
        false,
        REASONS.ProviderBaselineNotReady,
        `not ready: ${missingProvider.join(', ')}`,
      );
}

export function inventoryFreshCondition(missingSources: readonly string[]): ConditionVerdict {
  return missingSources.length === 0
    ? verdict(
        'InventoryFresh',
        true,
        REASONS.InventoryObserved,
        'Nodes, pods, Services, PersistentVolumes and VirtualClusters observed',
      )
    : verdict(
        'InventoryFresh',
        false,
        REASONS.InventorySourceUnavailable,
        `not observed: ${missingSources.join(', ')}`,
      );
}

/** InventoryFresh of a ManifestWork Cell: its sources observed, and its agent's report fresh. */
export function reportFreshCondition(
  reading: AgentReportReading,
  missingSources: readonly string[],
): ConditionVerdict {
  const notObserved = [
    ...missingSources,
    ...(reading.state === 'notObserved' ? [`ManifestWork ${AGENT_WORK_NAME}`] : []),
  ];
  if (notObserved.length > 0 || reading.state === 'notObserved') {
    return verdict(
      'InventoryFresh',
      false,
      REASONS.InventorySourceUnavailable,
      `not observed: ${notObserved.join(', ')}`,
    );
  }
  switch (reading.state) {
    case 'fresh':
      return verdict(
        'InventoryFresh',
        true,
        REASONS.InventoryReported,
        `the cell agent's report is at most ${REPORT_MAX_AGE_SECONDS}s old`,
      );
    case 'missing':
      return verdict('InventoryFresh', 'Unknown', REASONS.AgentReportMissing, reading.message);
    case 'unparsable':
      return verdict('InventoryFresh', false, REASONS.AgentReportUnparsable, reading.message);
    case 'outdated':
      return verdict('InventoryFresh', false, REASONS.AgentReportOutdated, reading.message);
  }
}

export function capabilityMismatchCondition(missingDevices: readonly string[]): ConditionVerdict {
  return missingDevices.length > 0
    ? verdict(
        'CapabilityMismatch',
        true,
        REASONS.DeviceNotOffered,
        `declared devices with no allocatable on any Ready profile Node: ${missingDevices.join(', ')}`,
      )
    : verdict(
        'CapabilityMismatch',
        false,
        REASONS.DevicesOffered,
        'every declared device is allocatable on the Ready profile Nodes',
      );
}

/**
 * Informational, like CapabilityMismatch: a Node left out of nodeAddresses does not stop the
 * others from serving. Names the Nodes, never their addresses (bytes from outside the hook
 * server's trust, issue 23).
 */
export function nodeAddressesCondition(
  refused: RefusedNodeAddresses | undefined,
  reported: boolean,
): ConditionVerdict {
  if (refused === undefined) {
    return verdict(
      'NodeAddressesValid',
      true,
      REASONS.NodeAddressesValid,
      'every Ready, schedulable profile Node that lists an InternalIP lists an IP address',
    );
  }
  const shown = refused.nodes.slice(0, MAX_NAMED).map((name) => echo(name));
  // A report is not trusted to count its own list.
  const count = Math.max(refused.count, refused.nodes.length);
  const more = count - shown.length;
  const where = reported ? ' (as the cell agent reports them)' : '';
  return verdict(
    'NodeAddressesValid',
    false,
    REASONS.NodeAddressInvalid,
    `left out of status.nodeAddresses, so no VirtualCluster takes them as its endpoint: ${count} Ready, schedulable profile Node(s)${where} whose InternalIP is not an IPv4 or IPv6 address (no brackets, no zone): ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}. Correct the Node's status.addresses (set by the kubelet's --node-ip or the cloud provider)`,
  );
}

/** Informational: whether status.nodes lists every profile Node (node-detail.ts bounds it). */
export function nodeDetailCondition(
  total: number,
  detail: NodeDetail | undefined,
): ConditionVerdict {
  if (detail === undefined) {
    return verdict(
      'NodeDetailTruncated',
      true,
      REASONS.NodeDetailNotReported,
      `the cell agent's report carries no per-Node detail (an agent older than the hub): status.nodes is absent, nodeCount and the inventory still count all ${total} profile Node(s)`,
    );
  }
  return detail.omitted > 0
    ? verdict(
        'NodeDetailTruncated',
        true,
        REASONS.NodeDetailTruncated,
        `status.nodes lists the first ${detail.nodes.length} of ${total} profile Nodes by name: the per-Node detail reached its size bound (${NODE_DETAIL_BUDGET_BYTES / 1024} KiB of JSON, to stay well under etcd's 1.5 MiB object limit); nodeCount.omitted counts the other ${detail.omitted}, and the inventory still counts them. kubectl get nodes -l kubecell.io/machine-profile=<profile> lists them all`,
      )
    : verdict(
        'NodeDetailTruncated',
        false,
        REASONS.NodeDetailComplete,
        `status.nodes lists every profile Node (${total})`,
      );
}

/**
 * Informational: whether a profile Node carries its GPUCellPool's verdict that its cell is not
 * Healthy (status.nodes[].health). Nodes of no pool carry none. No time in the message: the same
 * Nodes and verdicts give the same bytes.
 */
export function nodesHealthyCondition(detail: NodeDetail | undefined): ConditionVerdict {
  if (detail === undefined) {
    return verdict(
      'NodesHealthy',
      'Unknown',
      REASONS.NodeHealthNotReported,
      "the cell agent's report carries no per-Node detail (an agent older than the hub): the Nodes' health is not known",
    );
  }
  const unhealthy = boundUnhealthyNodes(unhealthyNodesOf(detail.nodes));
  if (unhealthy.nodes.length === 0) {
    return verdict(
      'NodesHealthy',
      true,
      REASONS.NodesHealthy,
      'no profile Node is marked unhealthy by its GPUCellPool',
    );
  }
  return verdict(
    'NodesHealthy',
    false,
    REASONS.NodesUnhealthy,
    `${unhealthy.nodes.length + unhealthy.more} profile Node(s) marked unhealthy by their GPUCellPool: ${describeUnhealthyNodes(unhealthy)}; the pool replaces a Remediating cell without evicting its pods (its Node is cordoned, its machine goes once no pod holds its GPU)`,
  );
}

export function inUseCondition(resolvedBy: readonly string[] | undefined): ConditionVerdict {
  if (resolvedBy === undefined) {
    return verdict(
      'InUse',
      'Unknown',
      REASONS.InventorySourceUnavailable,
      'VirtualClusters were not observed',
    );
  }
  return resolvedBy.length > 0
    ? verdict(
        'InUse',
        true,
        REASONS.VirtualClustersResolved,
        `resolved by: ${namedFew(resolvedBy)}`,
      )
    : verdict('InUse', false, REASONS.NoVirtualClusters, 'no VirtualCluster resolves to this Cell');
}

/** Most names a condition message lists: every VirtualCluster receives the Cell, whatever its size. */
const MAX_NAMED = 10;

/** `a, b, c` or, past MAX_NAMED, the first ten and `and N more` (status.resolvedBy counts them). */
function namedFew(names: readonly string[]): string {
  const shown = names.slice(0, MAX_NAMED).join(', ');
  const more = names.length - MAX_NAMED;
  return more > 0 ? `${shown} and ${more} more` : shown;
}
