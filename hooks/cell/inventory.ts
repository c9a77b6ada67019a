import type { Cell, ResourceInventory, VirtualCluster } from '../generated/types/index.js';
import { conditionIsTrue, type Node, type Pod, type ResourceMap } from '../kube/objects.js';
import {
  addQuantities,
  formatQuantity,
  maxQuantity,
  subtractQuantities,
  ZERO_QUANTITY,
} from '../quantity/quantity.js';
import { capacityRequirements } from '../feasibility/resources.js';
import { addInto, effectiveRequests, isTerminal, type Amounts } from './pod-requests.js';

export function nodeIsReady(node: Node): boolean {
  return conditionIsTrue(node.status?.conditions, 'Ready');
}

/** Pods bound to each Node, in one pass over all pods: the cost stays linear in pods + Nodes. */
export function podsByNode(pods: readonly Pod[]): Map<string, Pod[]> {
  const byNode = new Map<string, Pod[]>();
  for (const pod of pods) {
    const nodeName = pod.spec?.nodeName;
    if (!nodeName || isTerminal(pod)) continue;
    const list = byNode.get(nodeName);
    if (list) list.push(pod);
    else byNode.set(nodeName, [pod]);
  }
  return byNode;
}

/** What one profile Node adds to the inventory (kept in memory, not in the status). */
export interface NodeAccounting {
  ready: boolean;
  capacity: ResourceMap;
  allocatable: ResourceMap;
  /** Requests of the running pods bound to the Node. */
  active: Amounts;
  /** Requests of the pods bound to the Node that are not running yet. */
  pending: Amounts;
}

export function accountNode(node: Node, pods: readonly Pod[]): NodeAccounting {
  const active: Amounts = new Map();
  const pending: Amounts = new Map();
  for (const pod of pods)
    addInto(pod.status?.phase === 'Running' ? active : pending, effectiveRequests(pod));
  return {
    ready: nodeIsReady(node),
    capacity: node.status?.capacity ?? {},
    allocatable: node.status?.allocatable ?? {},
    active,
    pending,
  };
}

/** Requests of host-namespace pods that no Node runs yet: demand the Cell must be ready for. */
export function unscheduledDemand(
  pods: readonly Pod[],
  hostNamespaces: ReadonlySet<string>,
): Amounts {
  const demand: Amounts = new Map();
  for (const pod of pods) {
    if (pod.spec?.nodeName || isTerminal(pod)) continue;
    if (hostNamespaces.has(pod.metadata.namespace ?? '')) addInto(demand, effectiveRequests(pod));
  }
  return demand;
}

export function committedEntitlements(resolved: readonly VirtualCluster[]): Amounts {
  const committed: Amounts = new Map();
  for (const vc of resolved) {
    // The same key mapping the feasibility evaluation uses, so a Cell and a plan count a class alike.
    addInto(
      committed,
      capacityRequirements(vc.status?.resolved?.class?.entitlement?.workloadHard).required,
    );
  }
  return committed;
}

/** Sums over the Ready profile Nodes (what the cell agent reports for a remote Cell). */
export interface NodeTotals {
  capacity: Amounts;
  allocatable: Amounts;
  /** Requests of the non-terminal pods bound to those Nodes, running or not. */
  requested: Amounts;
}

export function sumReadyNodes(nodes: readonly NodeAccounting[]): NodeTotals {
  const totals: NodeTotals = { capacity: new Map(), allocatable: new Map(), requested: new Map() };
  for (const node of nodes) {
    if (!node.ready) continue;
    addInto(totals.capacity, node.capacity);
    addInto(totals.allocatable, node.allocatable);
    addInto(totals.requested, node.active);
    addInto(totals.requested, node.pending);
  }
  return totals;
}

export interface InventoryInputs {
  cell: Cell;
  nodes: readonly NodeAccounting[];
  unscheduled: Amounts;
  committed: Amounts;
}

/**
 * Per resource over the Ready profile Nodes: availableEstimate = allocatable − max(requested +
 * pending, committed). Requested counts every non-terminal pod bound to those Nodes, whatever its
 * namespace, because the scheduler counts them too.
 */
export function computeInventory({
  cell,
  nodes,
  unscheduled,
  committed,
}: InventoryInputs): Record<string, ResourceInventory> {
  return inventoryFrom({ cell, totals: sumReadyNodes(nodes), unscheduled, committed });
}

/** The inventory from the Nodes' sums, the unscheduled demand and the committed entitlements. */
export function inventoryFrom({
  cell,
  totals,
  unscheduled,
  committed,
}: Omit<InventoryInputs, 'nodes'> & { totals: NodeTotals }): Record<string, ResourceInventory> {
  const { capacity, allocatable, requested } = totals;
  const resources = new Set([
    ...allocatable.keys(),
    ...committed.keys(),
    ...(cell.spec.machineProfile.devices ?? []).map((device) => device.resourceName),
  ]);
  const inventory: Record<string, ResourceInventory> = {};
  for (const resource of [...resources].sort()) {
    const amount = (amounts: Amounts) => amounts.get(resource) ?? ZERO_QUANTITY;
    const demand = addQuantities(amount(requested), amount(unscheduled));
    inventory[resource] = {
      capacity: formatQuantity(amount(capacity)),
      allocatable: formatQuantity(amount(allocatable)),
      requested: formatQuantity(amount(requested)),
      pending: formatQuantity(amount(unscheduled)),
      committed: formatQuantity(amount(committed)),
      availableEstimate: formatQuantity(
        subtractQuantities(amount(allocatable), maxQuantity(demand, amount(committed))),
      ),
    };
  }
  return inventory;
}
