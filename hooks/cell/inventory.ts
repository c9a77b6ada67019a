import { createHash } from 'node:crypto';
import type {
  Cell,
  CellNodeStatus,
  ResourceInventory,
  VirtualCluster,
} from '../generated/types/index.js';
import { conditionIsTrue, type Node, type Pod } from '../kube/objects.js';
import { LABELS } from '../kube/labels.js';
import {
  addQuantities,
  formatQuantity,
  maxQuantity,
  subtractQuantities,
  ZERO_QUANTITY,
} from '../quantity/quantity.js';
import { capacityRequirements } from '../feasibility/resources.js';
import { formatTime } from '../status/conditions.js';
import { addInto, effectiveRequests, isTerminal, type Amounts } from './pod-requests.js';

const PRESSURE_CONDITIONS = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'];

export function nodeIsReady(node: Node): boolean {
  return conditionIsTrue(node.status?.conditions, 'Ready');
}

/** Stable across label order, so relabelling shows up and nothing else does. */
export function labelHash(labels: Record<string, string> | undefined): string {
  const sorted = Object.entries(labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 16);
}

function readinessReasons(node: Node): string[] {
  const conditions = node.status?.conditions ?? [];
  const ready = conditions.find((condition) => condition.type === 'Ready');
  const reasons = new Set<string>();
  if (!ready) reasons.add('ReadyConditionMissing');
  else if (ready.status !== 'True') reasons.add(ready.reason || `Ready${ready.status}`);
  for (const condition of conditions) {
    if (PRESSURE_CONDITIONS.includes(condition.type) && condition.status === 'True')
      reasons.add(condition.type);
  }
  if (node.spec?.unschedulable) reasons.add('Unschedulable');
  return [...reasons].sort();
}

function toResourceList(amounts: Amounts): Record<string, string> {
  return Object.fromEntries(
    [...amounts.keys()]
      .sort()
      .map((resource) => [resource, formatQuantity(amounts.get(resource) ?? ZERO_QUANTITY)]),
  );
}

function canonical(list: Record<string, string | number> | undefined): Record<string, string> {
  return toResourceList(addInto(new Map(), list ?? {}));
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

export interface NodeAccounting {
  status: CellNodeStatus;
  active: Amounts;
  pending: Amounts;
}

export function accountNode(node: Node, pods: readonly Pod[], now: Date): NodeAccounting {
  const active: Amounts = new Map();
  const pending: Amounts = new Map();
  for (const pod of pods)
    addInto(pod.status?.phase === 'Running' ? active : pending, effectiveRequests(pod));
  return {
    active,
    pending,
    status: {
      name: node.metadata.name,
      profile: node.metadata.labels?.[LABELS.machineProfile] ?? '',
      ready: nodeIsReady(node),
      labelHash: labelHash(node.metadata.labels),
      capacity: canonical(node.status?.capacity),
      allocatable: canonical(node.status?.allocatable),
      activeRequested: toResourceList(active),
      pendingRequested: toResourceList(pending),
      readinessReasons: readinessReasons(node),
      observedAt: formatTime(now),
    },
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
  const capacity: Amounts = new Map();
  const allocatable: Amounts = new Map();
  const requested: Amounts = new Map();
  for (const node of nodes) {
    if (!node.status.ready) continue;
    addInto(capacity, node.status.capacity ?? {});
    addInto(allocatable, node.status.allocatable ?? {});
    addInto(requested, node.active);
    addInto(requested, node.pending);
  }
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
