/**
 * The conditions on what the Cell's cluster offers: its provider baseline, whether its inventory
 * is fresh (observed on the hub, or reported by its cell agent), its declared devices, its Node
 * addresses and per-Node detail, and which VirtualClusters use it.
 */
import { echo } from '../json/echo.js';
import { AGENT_WORK_NAME } from '../remote/contract.js';
import type { RefusedNodeAddresses } from '../remote/report.js';
import { verdict, type ConditionVerdict } from '../status/conditions.js';
import { REPORT_MAX_AGE_SECONDS, type AgentReportReading } from './assess-report.js';
import { NODE_DETAIL_BUDGET_BYTES, type NodeDetail } from './node-detail.js';
import { REASONS } from './reasons.js';

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
