/**
 * What the Cell publishes about its profile Nodes besides their detail (node-detail.ts): counts,
 * the first 16 not-Ready Nodes, and the first 16 endpoint candidates a VirtualCluster chooses its
 * address from.
 */
import type { CellNodeAddress, CellNodeCount, CellNotReadyNode } from '../generated/types/index.js';
import { compareStrings } from '../json/compare.js';
import { isIpAddress } from '../kube/addresses.js';
import type { RefusedNodeAddresses } from '../remote/report.js';
import type { ObservedNode } from './observe-nodes.js';

/** How many entries status.notReadyNodes and status.nodeAddresses keep (the schema's maxItems). */
const NODE_LIST_LIMIT = 16;

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

export function summariseNodes(nodes: readonly ObservedNode[]): NodeReading {
  const byName = [...nodes].sort((a, b) => compareStrings(a.name, b.name));
  const ready = byName.filter((node) => node.ready);
  const { addresses, refused } = nodeAddresses(ready);
  return {
    nodeCount: { total: byName.length, ready: ready.length },
    notReadyNodes: byName
      .filter((node) => !node.ready)
      .slice(0, NODE_LIST_LIMIT)
      .map((node) => ({ name: node.name, reasons: node.readinessReasons })),
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
 * The endpoint candidates a VirtualCluster chooses from: the Ready Nodes (given sorted by name)
 * that are not cordoned (spec.unschedulable) and list an InternalIP that is an IP address; the
 * first 16. The names of those whose InternalIP is not one are `refused`, all of them, so the
 * count does not depend on where the 16 stop.
 */
function nodeAddresses(readyByName: readonly ObservedNode[]): {
  addresses: CellNodeAddress[];
  refused: string[];
} {
  const addresses: CellNodeAddress[] = [];
  const refused: string[] = [];
  for (const node of readyByName) {
    if (node.unschedulable) continue;
    const address = node.internalIP;
    if (address === undefined || address === '') continue;
    if (!isIpAddress(address)) refused.push(node.name);
    else if (addresses.length < NODE_LIST_LIMIT) {
      addresses.push({ node: node.name, address });
    }
  }
  return { addresses, refused };
}
