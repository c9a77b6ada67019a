/**
 * What the Cell publishes about its profile Nodes besides their detail (node-detail.ts): counts,
 * the first 16 not-Ready Nodes, and the first 16 endpoint candidates a VirtualCluster chooses its
 * address from.
 */
import type {
  CellNode,
  CellNodeAddress,
  CellNodeCount,
  CellNotReadyNode,
} from '../generated/types/index.js';
import type { NodeDetail } from './node-detail.js';
import { compareStrings } from '../json/compare.js';
import { echo } from '../json/echo.js';
import { isIpAddress } from '../kube/addresses.js';
import type { Node } from '../kube/objects.js';
import type { RefusedNodeAddresses } from '../remote/report.js';
import { nodeIsReady } from './inventory.js';

/** How many entries status.notReadyNodes and status.nodeAddresses keep (the schema's maxItems). */
export const NODE_LIST_LIMIT = 16;
/** How many reasons one not-Ready Node keeps, and how long each may be (the schema's bounds). */
const REASONS_LIMIT = 8;
const REASON_CHARS = 127;

const PRESSURE_CONDITIONS = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'];

/** The Node parts of a Cell's status. */
export interface NodeSummary {
  nodeCount: CellNodeCount;
  notReadyNodes: CellNotReadyNode[];
  nodeAddresses: CellNodeAddress[];
}

/**
 * The status parts, and the Nodes whose InternalIP is not an IP address (isIpAddress) when there
 * are any. Those addresses are never kept, not even in a message: they are bytes from outside the
 * hook server's trust (issue 23).
 */
export type NodeReading = NodeSummary & { refusedNodeAddresses?: RefusedNodeAddresses };

export function summariseNodes(nodes: readonly Node[]): NodeReading {
  const byName = [...nodes].sort((a, b) => compareStrings(a.metadata.name, b.metadata.name));
  const ready = byName.filter(nodeIsReady);
  const { addresses, refused } = nodeAddresses(ready);
  return {
    nodeCount: { total: byName.length, ready: ready.length },
    notReadyNodes: byName
      .filter((node) => !nodeIsReady(node))
      .slice(0, NODE_LIST_LIMIT)
      .map((node) => ({ name: node.metadata.name, reasons: readinessReasons(node) })),
    nodeAddresses: addresses,
    ...(refused.length === 0
      ? {}
      : {
          refusedNodeAddresses: {
            count: refused.length,
            nodes: refused.slice(0, NODE_LIST_LIMIT),
          },
        }),
  };
}

/**
 * The status parts of a reading (what a Cell's status and nothing else holds), with the per-Node
 * detail when the source carries it; without it every Node counts as omitted.
 */
export function nodeStatusParts(
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

/** Why a Node is not Ready, as short tokens from its conditions, sorted. */
export function readinessReasons(node: Node): string[] {
  const conditions = node.status?.conditions ?? [];
  const ready = conditions.find((condition) => condition.type === 'Ready');
  const reasons = new Set<string>();
  if (!ready) reasons.add('ReadyConditionMissing');
  else if (ready.status !== 'True')
    reasons.add(echo(ready.reason || `Ready${ready.status}`, REASON_CHARS));
  for (const condition of conditions) {
    if (PRESSURE_CONDITIONS.includes(condition.type) && condition.status === 'True')
      reasons.add(condition.type);
  }
  if (node.spec?.unschedulable) reasons.add('Unschedulable');
  return [...reasons].sort(compareStrings).slice(0, REASONS_LIMIT);
}

/** The first InternalIP a Node lists, if any. */
function internalIP(node: Node): string | undefined {
  return node.status?.addresses?.find(
    (address) => address.type === 'InternalIP' && typeof address.address === 'string',
  )?.address;
}

/**
 * The endpoint candidates a VirtualCluster chooses from: the Ready Nodes (given sorted by name)
 * that are not cordoned (spec.unschedulable) and list an InternalIP that is an IP address; the
 * first 16. The names of those whose InternalIP is not one are `refused`, all of them, so the
 * count does not depend on where the 16 stop.
 */
function nodeAddresses(readyByName: readonly Node[]): {
  addresses: CellNodeAddress[];
  refused: string[];
} {
  const addresses: CellNodeAddress[] = [];
  const refused: string[] = [];
  for (const node of readyByName) {
    if (node.spec?.unschedulable === true) continue;
    const address = internalIP(node);
    if (address === undefined || address === '') continue;
    if (!isIpAddress(address)) refused.push(node.metadata.name);
    else if (addresses.length < NODE_LIST_LIMIT) {
      addresses.push({ node: node.metadata.name, address });
    }
  }
  return { addresses, refused };
}
