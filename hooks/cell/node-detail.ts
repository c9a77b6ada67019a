/**
 * The per-Node detail of a Cell's status: one entry per profile Node in `nodes`, and its storage
 * in `storageInventory.perNode`, sorted by name and bounded by size.
 *
 * Both lists are atomic (the schema's x-kubernetes-list-type), so the Cell's managedFields hold one
 * entry for each whatever the number of Nodes. The bound keeps the stored Cell well under etcd's
 * 1.5 MiB object limit: past NODE_DETAIL_BUDGET_BYTES of JSON the last Nodes by name are left out
 * and counted (`omitted`), and the condition NodeDetailTruncated says so. The inventory's totals
 * still count every Node. Quantities are written anew from their parsed values, never the Node's
 * own bytes.
 */
import { createHash } from 'node:crypto';
import type { CellNode, CellNodeStorage, ResourceList } from '../generated/types/index.js';
import { compareStrings } from '../json/compare.js';
import { LABELS } from '../kube/labels.js';
import type { Node, PersistentVolume } from '../kube/objects.js';
import { formatQuantity, parseQuantity, ZERO_QUANTITY } from '../quantity/quantity.js';
import type { NodeAccounting } from './inventory.js';
import { readinessReasons } from './nodes.js';
import { allocatedByNode, topolvmFreeCapacity } from './storage.js';
import type { Amounts } from './pod-requests.js';

/**
 * JSON bytes the per-Node entries may take (nodes and perNode together), observedAt aside.
 * Measured (hooks/cell/node-detail.test.ts): a GPU Node of 6 resources with a running and a
 * pending pod and a 39-character name takes 612 bytes with its storage entry, so the detail is
 * truncated from about 1,360 such Nodes on, and the status stays near 0.8 MB, about half of
 * etcd's 1.5 MiB object limit.
 */
export const NODE_DETAIL_BUDGET_BYTES = 768 * 1024;

export interface NodeDetail {
  nodes: CellNode[];
  perNode: CellNodeStorage[];
  /** Profile Nodes left out because the budget was reached. */
  omitted: number;
}

/** One profile Node with what the inventory counted on it and its storage. */
export interface NodeFacts {
  node: Node;
  accounting: NodeAccounting;
  /** TopoLVM's free capacity on the Node, when it reports it. */
  freeStorage?: string;
  /** Capacity of the topolvm.io PersistentVolumes on the Node. */
  allocatedStorage: string;
}

export function nodeDetail(facts: readonly NodeFacts[], profile: string): NodeDetail {
  return boundNodeDetail(
    facts.map((fact) => ({ node: nodeEntry(fact, profile), storage: storageEntry(fact) })),
  );
}

/** One Node's entry and its storage entry, as the status lists them. */
export interface NodeDetailEntry {
  node: CellNode;
  storage: CellNodeStorage;
}

/**
 * The entries sorted by name, the first ones within NODE_DETAIL_BUDGET_BYTES, the rest counted,
 * each as stored (`storedNode`).
 */
export function boundNodeDetail(entries: readonly NodeDetailEntry[]): NodeDetail {
  const sorted = [...entries].sort((a, b) => compareStrings(a.node.name, b.node.name));
  const detail: NodeDetail = { nodes: [], perNode: [], omitted: 0 };
  let bytes = 0;
  for (const entry of sorted) {
    const node = storedNode(entry.node);
    const { storage } = entry;
    bytes += JSON.stringify(node).length + JSON.stringify(storage).length + 2;
    if (bytes > NODE_DETAIL_BUDGET_BYTES) {
      detail.omitted = sorted.length - detail.nodes.length;
      break;
    }
    detail.nodes.push(node);
    detail.perNode.push(storage);
  }
  return detail;
}

/**
 * A Node's entry without its empty request maps and reason list: absent means none, as
 * Kubernetes' own omitempty fields do. Most Nodes of an idle Cell have all three empty, and the
 * 63 bytes they would take are what kept a 50-Node Cell over 0.6 KB per Node (issue 24).
 */
function storedNode(node: CellNode): CellNode {
  const { activeRequested, pendingRequested, readinessReasons: reasons, ...rest } = node;
  return {
    ...rest,
    ...(activeRequested && Object.keys(activeRequested).length > 0 ? { activeRequested } : {}),
    ...(pendingRequested && Object.keys(pendingRequested).length > 0 ? { pendingRequested } : {}),
    ...(reasons && reasons.length > 0 ? { readinessReasons: reasons } : {}),
  };
}

function nodeEntry({ node, accounting }: NodeFacts, profile: string): CellNode {
  return {
    name: node.metadata.name,
    profile: node.metadata.labels?.[LABELS.machineProfile] ?? profile,
    ready: accounting.ready,
    labelHash: labelHash(node.metadata.labels ?? {}),
    capacity: resourceList(accounting.capacity),
    allocatable: resourceList(accounting.allocatable),
    activeRequested: amountList(accounting.active),
    pendingRequested: amountList(accounting.pending),
    readinessReasons: readinessReasons(node),
  };
}

function storageEntry({ node, freeStorage, allocatedStorage }: NodeFacts): CellNodeStorage {
  return {
    node: node.metadata.name,
    ...(freeStorage === undefined ? {} : { freeCapacity: freeStorage }),
    allocatedPV: allocatedStorage,
  };
}

/** Each profile Node with what the inventory counted on it and its storage (Local Cell or agent). */
export function nodeFactsOf(
  nodes: readonly Node[],
  accounted: readonly NodeAccounting[],
  volumes: readonly PersistentVolume[] | undefined,
): NodeFacts[] {
  const allocated = allocatedByNode(volumes);
  return nodes.map((node, index) => {
    const free = topolvmFreeCapacity(node);
    return {
      node,
      accounting: accounted[index] as NodeAccounting,
      ...(free === undefined ? {} : { freeStorage: formatQuantity(free) }),
      allocatedStorage: formatQuantity(allocated.get(node.metadata.name) ?? ZERO_QUANTITY),
    };
  });
}

/** SHA-256 over the sorted `key=value` lines, first 16 hex digits. */
export function labelHash(labels: Readonly<Record<string, string>>): string {
  const lines = Object.keys(labels)
    .sort(compareStrings)
    .map((key) => `${key}=${labels[key]}\n`)
    .join('');
  return createHash('sha256').update(lines).digest('hex').slice(0, 16);
}

/** A resource map written anew from its parsed quantities, keys sorted. */
export function resourceList(
  map: Readonly<Record<string, string | number | undefined>>,
): ResourceList {
  const list: ResourceList = {};
  for (const key of Object.keys(map).sort(compareStrings)) {
    const value = map[key];
    if (value !== undefined) list[key] = formatQuantity(parseQuantity(value));
  }
  return list;
}

function amountList(amounts: Amounts): ResourceList {
  const list: ResourceList = {};
  for (const key of [...amounts.keys()].sort(compareStrings)) {
    list[key] = formatQuantity(amounts.get(key) as NonNullable<ReturnType<Amounts['get']>>);
  }
  return list;
}
