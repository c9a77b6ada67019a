/**
 * What the Cell's inventory counts: the scheduler's view of each profile Node (the requests of
 * the pods bound to it), the sums over the Ready ones, the unscheduled demand of host namespaces,
 * the entitlements of the VirtualClusters resolved to the Cell, and from them the inventory per
 * resource. Quantities are parsed here, where they are counted (the validation layer has already
 * checked that each one parses).
 */
import type { Cell, ResourceInventory } from '../generated/types/index.js';
import type { Container, Pod } from '../kube/objects.js';
import {
  addQuantities,
  compareQuantities,
  formatQuantity,
  maxQuantity,
  parseQuantity,
  subtractQuantities,
  ZERO_QUANTITY,
  type ParsedQuantity,
} from '../quantity/quantity.js';
import { capacityRequirements } from '../feasibility/resources.js';
import type { ObservedNode } from './observe-nodes.js';
import type { ObservedPods, ResolvedVirtualCluster } from './observe.js';

/** Resource name → exact amount. */
export type Amounts = Map<string, ParsedQuantity>;

/**
 * These run once per pod and container of a Cell's request (20,000 pods at 1,000 Nodes), so they
 * add wire lists straight into the sums: no Map per container, no entry arrays or iterators.
 * Allocation per Node is what pushed the Cell's sync past the young generation and into
 * promoting the request body (issue 25).
 */
function addOne(target: Amounts, resource: string, amount: ParsedQuantity): void {
  const sum = target.get(resource);
  target.set(resource, sum ? addQuantities(sum, amount) : amount);
}

/** Adds amounts (or a wire resource list) into `target`, resource by resource. */
function addInto(
  target: Amounts,
  source: Amounts | Readonly<Record<string, string | number | undefined>>,
): Amounts {
  if (source instanceof Map) {
    source.forEach((amount, resource) => addOne(target, resource, amount));
    return target;
  }
  // Every value is parsed before any is added, so a bad quantity leaves `target` as it was.
  const resources = Object.keys(source);
  const amounts: (ParsedQuantity | undefined)[] = [];
  for (const resource of resources) {
    const value = source[resource];
    amounts.push(value === undefined ? undefined : parseQuantity(value));
  }
  for (let i = 0; i < resources.length; i++) {
    const amount = amounts[i];
    if (amount !== undefined) addOne(target, resources[i] as string, amount);
  }
  return target;
}

/**
 * What the scheduler reserves for a pod: per resource, the larger of the biggest init container
 * and the sum of the app containers, plus the pod overhead (RuntimeClass).
 */
function effectiveRequests(pod: Pod): Amounts {
  const total: Amounts = new Map();
  for (const container of pod.spec?.containers ?? []) addRequests(total, container);
  for (const init of pod.spec?.initContainers ?? []) {
    const requests = init.resources?.requests ?? {};
    for (const resource of Object.keys(requests)) {
      const amount = parseQuantity(requests[resource] as string | number);
      const containers = total.get(resource);
      if (!containers || compareQuantities(amount, containers) > 0) total.set(resource, amount);
    }
  }
  return addInto(total, pod.spec?.overhead ?? {});
}

/** A container's requests added into `total`; a value that is not a quantity throws. */
function addRequests(total: Amounts, container: Container): void {
  const requests = container.resources?.requests ?? {};
  for (const resource of Object.keys(requests)) {
    addOne(total, resource, parseQuantity(requests[resource] as string | number));
  }
}

/** What one profile Node adds to the inventory (kept in memory, not in the status). */
export interface NodeAccounting {
  node: ObservedNode;
  /** Requests of the running pods bound to the Node. */
  active: Amounts;
  /** Requests of the pods bound to the Node that are not running yet. */
  pending: Amounts;
}

/** Sums over the Ready profile Nodes (what the cell agent reports for a remote Cell). */
export interface NodeTotals {
  capacity: Amounts;
  allocatable: Amounts;
  /** Requests of the non-terminal pods bound to those Nodes, running or not. */
  requested: Amounts;
}

/** A cluster's profile Nodes and pods, counted. */
export interface ClusterAccounting {
  /** One per Node, in the order given. */
  nodes: NodeAccounting[];
  totals: NodeTotals;
  /** Requests of the host namespaces' pods that no Node runs yet. */
  unscheduled: Amounts;
}

export function accountCluster(
  nodes: readonly ObservedNode[],
  pods: ObservedPods | undefined,
): ClusterAccounting {
  const accounted = nodes.map((node) => accountNode(node, pods?.byNode.get(node.name) ?? []));
  const unscheduled: Amounts = new Map();
  for (const pod of pods?.unscheduled ?? []) addInto(unscheduled, effectiveRequests(pod));
  return { nodes: accounted, totals: sumReadyNodes(accounted), unscheduled };
}

function accountNode(node: ObservedNode, pods: readonly Pod[]): NodeAccounting {
  const active: Amounts = new Map();
  const pending: Amounts = new Map();
  for (const pod of pods)
    addInto(pod.status?.phase === 'Running' ? active : pending, effectiveRequests(pod));
  return { node, active, pending };
}

function sumReadyNodes(nodes: readonly NodeAccounting[]): NodeTotals {
  const totals: NodeTotals = { capacity: new Map(), allocatable: new Map(), requested: new Map() };
  for (const { node, active, pending } of nodes) {
    if (!node.ready) continue;
    addInto(totals.capacity, node.capacity);
    addInto(totals.allocatable, node.allocatable);
    addInto(totals.requested, active);
    addInto(totals.requested, pending);
  }
  return totals;
}

function committedEntitlements(resolved: readonly ResolvedVirtualCluster[]): Amounts {
  const committed: Amounts = new Map();
  for (const vc of resolved) {
    // The same key mapping the feasibility evaluation uses, so a Cell and a plan count a class alike.
    addInto(committed, capacityRequirements(vc.workloadHard).required);
  }
  return committed;
}

export interface InventoryInputs {
  cell: Cell;
  totals: NodeTotals;
  unscheduled: Amounts;
  /** The VirtualClusters resolved to the Cell, whose entitlements are committed on it. */
  resolved: readonly ResolvedVirtualCluster[];
}

/**
 * Per resource over the Ready profile Nodes: availableEstimate = allocatable − max(requested +
 * pending, committed). Requested counts every non-terminal pod bound to those Nodes, whatever its
 * namespace, because the scheduler counts them too.
 */
export function cellInventory({
  cell,
  totals,
  unscheduled,
  resolved,
}: InventoryInputs): Record<string, ResourceInventory> {
  const committed = committedEntitlements(resolved);
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
