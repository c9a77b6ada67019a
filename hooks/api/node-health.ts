/**
 * A GPUCellPool's health verdict on a Node, as the pool writes it (annotations on the Node) and as
 * a Cell and its VirtualClusters read it back (status.nodes[].health/healthReason, the liveness
 * record's unhealthyNodes). One closed set for the writer and every reader.
 *
 * Only a cell that is not Healthy marks its Node: a healthy Node carries no annotation, so
 * nothing changes for healthy Nodes and no Node is rewritten on upgrade. The annotations are
 * bytes anyone who may patch Nodes could write: `readNodeHealth` accepts only a state and a reason
 * of the closed sets, both present, and otherwise reads no verdict.
 */
import { compareStrings } from '../json/compare.js';
import { ANNOTATIONS } from '../kube/labels.js';

/** The states a Node is marked with (status.cells[].health but Healthy). */
export const NODE_HEALTH_STATES = ['Unhealthy', 'Remediating'] as const;
export type NodeHealthState = (typeof NODE_HEALTH_STATES)[number];

/**
 * The reasons a Node is marked with: the unhealthy ones of status.cells[].healthReason, whose
 * tokens belong to hooks/gpucellpool/reasons.ts (CELL_HEALTH_REASONS, where the documents are
 * checked against them; a test checks that each unhealthy one is here).
 */
export const NODE_HEALTH_CAUSES = [
  'UnhealthyNode',
  'NodeStartupTimeout',
  'NodeDeleted',
  'MachineFailed',
  'ReplacementRequested',
] as const;
export type NodeHealthReason = (typeof NODE_HEALTH_CAUSES)[number];

export interface NodeHealth {
  health: NodeHealthState;
  reason: NodeHealthReason;
}

function isState(value: unknown): value is NodeHealthState {
  return NODE_HEALTH_STATES.includes(value as NodeHealthState);
}

function isReason(value: unknown): value is NodeHealthReason {
  return NODE_HEALTH_CAUSES.includes(value as NodeHealthReason);
}

/** The verdict as the pool writes it: state and reason, or undefined for one that is Healthy. */
export function nodeHealthOf(
  health: string | undefined,
  reason: string | undefined,
): NodeHealth | undefined {
  return isState(health) && isReason(reason) ? { health, reason } : undefined;
}

/** The annotations that mark a Node with a verdict. */
export function nodeHealthAnnotations(verdict: NodeHealth): Record<string, string> {
  return {
    [ANNOTATIONS.cellHealth]: verdict.health,
    [ANNOTATIONS.cellHealthReason]: verdict.reason,
  };
}

/** The verdict a Node's annotations carry; undefined when none, or not one the pool writes. */
export function readNodeHealth(
  annotations: Readonly<Record<string, unknown>> | null | undefined,
): NodeHealth | undefined {
  const health = annotations?.[ANNOTATIONS.cellHealth];
  const reason = annotations?.[ANNOTATIONS.cellHealthReason];
  return typeof health === 'string' && typeof reason === 'string'
    ? nodeHealthOf(health, reason)
    : undefined;
}

// --- a list of unhealthy Nodes in one string (the liveness record) ---

/** How many Nodes the list names; the others are counted. */
export const UNHEALTHY_NODES_LIMIT = 16;

export interface UnhealthyNode extends NodeHealth {
  name: string;
}

export interface UnhealthyNodes {
  /** The first UNHEALTHY_NODES_LIMIT by name. */
  nodes: UnhealthyNode[];
  /** Those left out. */
  more: number;
}

/** A Node's name as the apiserver allows it (a DNS-1123 subdomain). */
const NODE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function isNodeName(value: string): boolean {
  return value.length <= 253 && NODE_NAME.test(value);
}

/** The Nodes of a status.nodes list that carry a verdict (one of the closed sets). */
export function unhealthyNodesOf(
  nodes: readonly { name: string; health?: string; healthReason?: string }[],
): UnhealthyNode[] {
  return nodes.flatMap((node) => {
    const health = nodeHealthOf(node.health, node.healthReason);
    return health === undefined || !isNodeName(node.name) ? [] : [{ name: node.name, ...health }];
  });
}

/** The Nodes sorted by name and bounded. */
export function boundUnhealthyNodes(nodes: readonly UnhealthyNode[]): UnhealthyNodes {
  const sorted = [...nodes].sort((a, b) => compareStrings(a.name, b.name));
  return {
    nodes: sorted.slice(0, UNHEALTHY_NODES_LIMIT),
    more: Math.max(0, sorted.length - UNHEALTHY_NODES_LIMIT),
  };
}

/**
 * `name=State:Reason` per Node, joined by commas, then `+N` when N more are left out; '' when
 * every Node is healthy.
 */
export function formatUnhealthyNodes(list: UnhealthyNodes): string {
  const entries = list.nodes.map((node) => `${node.name}=${node.health}:${node.reason}`);
  return [...entries, ...(list.more > 0 ? [`+${list.more}`] : [])].join(',');
}

const MORE = /^\+([1-9][0-9]{0,5})$/;

/** The list `formatUnhealthyNodes` writes, or undefined when the string is not one it writes. */
export function parseUnhealthyNodes(text: string): UnhealthyNodes | undefined {
  if (text === '') return { nodes: [], more: 0 };
  const parts = text.split(',');
  const last = MORE.exec(parts[parts.length - 1] ?? '');
  const entries = last === null ? parts : parts.slice(0, -1);
  if (entries.length > UNHEALTHY_NODES_LIMIT) return undefined;
  if (last !== null && entries.length < UNHEALTHY_NODES_LIMIT) return undefined;
  const nodes: UnhealthyNode[] = [];
  for (const entry of entries) {
    const [name = '', verdict = '', ...extra] = entry.split('=');
    const [health, reason, ...rest] = verdict.split(':');
    const read = nodeHealthOf(health, reason);
    if (extra.length > 0 || rest.length > 0 || read === undefined || !isNodeName(name)) {
      return undefined;
    }
    const previous = nodes[nodes.length - 1];
    if (previous !== undefined && compareStrings(previous.name, name) >= 0) return undefined;
    nodes.push({ name, ...read });
  }
  return { nodes, more: last === null ? 0 : Number(last[1]) };
}

/** How many Nodes a condition message names; the others are counted. */
export const MESSAGE_NODES_LIMIT = 8;

/** `node-a (UnhealthyNode, being replaced), node-b (MachineFailed) and 3 more`. */
export function describeUnhealthyNodes(list: UnhealthyNodes): string {
  const named = list.nodes
    .slice(0, MESSAGE_NODES_LIMIT)
    .map(
      (node) =>
        `${node.name} (${node.reason}${node.health === 'Remediating' ? ', being replaced' : ''})`,
    );
  const more = list.more + Math.max(0, list.nodes.length - MESSAGE_NODES_LIMIT);
  return `${named.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}
