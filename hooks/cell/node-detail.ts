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
import {
  formatQuantity,
  parseQuantity,
  ZERO_QUANTITY,
  type ParsedQuantity,
} from '../quantity/quantity.js';
import type { Amounts, NodeAccounting } from './inventory.js';
import type { ObservedNode } from './observe-nodes.js';

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

/**
 * One entry per profile Node, with what the inventory counted on it (`accounted`, one per Node in
 * the same order) and its storage: TopoLVM's free bytes on the Node and the capacity of the
 * TopoLVM PersistentVolumes on it (`volumes`, by Node).
 */
export function nodeDetail(
  accounted: readonly NodeAccounting[],
  volumes: ReadonlyMap<string, ParsedQuantity> | undefined,
  profile: string,
): NodeDetail {
  return boundNodeDetail(
    accounted.map((accounting) => ({
      node: nodeEntry(accounting, profile),
      storage: storageEntry(accounting.node, volumes),
    })),
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

function nodeEntry({ node, active, pending }: NodeAccounting, profile: string): CellNode {
  return {
    name: node.name,
    profile: node.labels[LABELS.machineProfile] ?? profile,
    ready: node.ready,
    labelHash: labelHash(node.labels),
    capacity: resourceList(node.capacity),
    allocatable: resourceList(node.allocatable),
    activeRequested: amountList(active),
    pendingRequested: amountList(pending),
    readinessReasons: node.readinessReasons,
    ...(node.health === undefined
      ? {}
      : { health: node.health.health, healthReason: node.health.reason }),
  };
}

function storageEntry(
  node: ObservedNode,
  volumes: ReadonlyMap<string, ParsedQuantity> | undefined,
): CellNodeStorage {
  return {
    node: node.name,
    ...(node.topolvmFree === undefined ? {} : { freeCapacity: formatQuantity(node.topolvmFree) }),
    allocatedPV: formatQuantity(volumes?.get(node.name) ?? ZERO_QUANTITY),
  };
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
