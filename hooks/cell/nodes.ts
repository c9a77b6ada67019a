/**
 * What the Cell publishes about its profile Nodes: counts and two short lists, each bounded, so
 * the Cell object (which every VirtualCluster on it receives) does not grow with the Nodes. The
 * per-Node detail stays on the Nodes themselves.
 */
import type { CellNodeAddress, CellNodeCount, CellNotReadyNode } from '../generated/types/index.js';
import { compareStrings } from '../feasibility/resources.js';
import { echo } from '../json/echo.js';
import type { Node } from '../kube/objects.js';
import { nodeIsReady } from './inventory.js';

/** How many entries status.notReadyNodes and status.nodeAddresses keep (the schema's maxItems). */
export const NODE_LIST_LIMIT = 16;
/** How many reasons one not-Ready Node keeps, and how long each may be (the schema's bounds). */
const REASONS_LIMIT = 8;
const REASON_CHARS = 127;
/** Longer than any IP address: such an entry is not one, and the schema would refuse it. */
const ADDRESS_CHARS = 64;

const PRESSURE_CONDITIONS = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'];

export interface NodeSummary {
  nodeCount: CellNodeCount;
  notReadyNodes: CellNotReadyNode[];
  nodeAddresses: CellNodeAddress[];
}

export function summariseNodes(nodes: readonly Node[]): NodeSummary {
  const byName = [...nodes].sort((a, b) => compareStrings(a.metadata.name, b.metadata.name));
  const ready = byName.filter(nodeIsReady);
  return {
    nodeCount: { total: byName.length, ready: ready.length },
    notReadyNodes: byName
      .filter((node) => !nodeIsReady(node))
      .slice(0, NODE_LIST_LIMIT)
      .map((node) => ({ name: node.metadata.name, reasons: readinessReasons(node) })),
    nodeAddresses: nodeAddresses(ready),
  };
}

/** Why a Node is not Ready, as short tokens from its conditions, sorted. */
function readinessReasons(node: Node): string[] {
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
 * that are not cordoned (spec.unschedulable) and list an InternalIP; the first 16.
 */
function nodeAddresses(readyByName: readonly Node[]): CellNodeAddress[] {
  const addresses: CellNodeAddress[] = [];
  for (const node of readyByName) {
    if (addresses.length === NODE_LIST_LIMIT) break;
    if (node.spec?.unschedulable === true) continue;
    const address = internalIP(node);
    if (address === undefined || address === '' || address.length > ADDRESS_CHARS) continue;
    addresses.push({ node: node.metadata.name, address });
  }
  return addresses;
}
