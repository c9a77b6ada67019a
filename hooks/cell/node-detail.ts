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
import { compareStrings } from '../feasibility/resources.js';
import { LABELS } from '../kube/labels.js';
import type { Node, ResourceMap } from '../kube/objects.js';
import { formatQuantity, parseQuantity } from '../quantity/quantity.js';
import type { NodeAccounting } from './inventory.js';
import { readinessReasons } from './nodes.js';
import type { Amounts } from './pod-requests.js';

/**
 * JSON bytes the per-Node entries may take (nodes and perNode together), observedAt aside.
 * Measured (hooks/cell/node-detail.test.ts): a GPU Node of 6 resources with a running and a
 * pending pod and a 39-character name takes 634 bytes with its storage entry, so the detail is
 * truncated from about 1,300 such Nodes on, and the status stays near 0.8 MB, about half of
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
  const sorted = [...facts].sort((a, b) =>
    compareStrings(a.node.metadata.name, b.node.metadata.name),
  );
  const detail: NodeDetail = { nodes: [], perNode: [], omitted: 0 };
  let bytes = 0;
  for (const fact of sorted) {
    const entry = nodeEntry(fact, profile);
    const storage = storageEntry(fact);
    bytes += JSON.stringify(entry).length + JSON.stringify(storage).length + 2;
    if (bytes > NODE_DETAIL_BUDGET_BYTES) {
      detail.omitted = sorted.length - detail.nodes.length;
      break;
    }
    detail.nodes.push(entry);
    detail.perNode.push(storage);
  }
  return detail;
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

/** SHA-256 over the sorted `key=value` lines, first 16 hex digits. */
export function labelHash(labels: Readonly<Record<string, string>>): string {
  const lines = Object.keys(labels)
    .sort(compareStrings)
    .map((key) => `${key}=${labels[key]}\n`)
    .join('');
  return createHash('sha256').update(lines).digest('hex').slice(0, 16);
}

function resourceList(map: ResourceMap): ResourceList {
  const list: ResourceList = {};
  for (const key of Object.keys(map).sort(compareStrings)) {
    list[key] = formatQuantity(parseQuantity(map[key] as string | number));
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
