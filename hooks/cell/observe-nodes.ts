/**
 * A profile Node as the Cell reads it, narrowed once (observe.ts): whether it is Ready and why
 * not, whether it is cordoned, the InternalIP it lists, its resources as listed (parsed where
 * they are counted, inventory.ts), the free bytes TopoLVM reports on it, and the health verdict
 * its GPUCellPool marked it with (hooks/api/node-health.ts: only one the pool writes, else none).
 */
import { readNodeHealth, type NodeHealth } from '../api/node-health.js';
import { compareStrings } from '../json/compare.js';
import { echo } from '../json/echo.js';
import { ANNOTATIONS } from '../kube/labels.js';
import { conditionIsTrue, type Node, type ResourceMap } from '../kube/objects.js';
import {
  addQuantities,
  parseQuantity,
  ZERO_QUANTITY,
  type ParsedQuantity,
} from '../quantity/quantity.js';

/** How many reasons one not-Ready Node keeps, and how long each may be (the schema's bounds). */
const REASONS_LIMIT = 8;
const REASON_CHARS = 127;

const PRESSURE_CONDITIONS = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'];

export interface ObservedNode {
  name: string;
  labels: Readonly<Record<string, string>>;
  /** Its condition Ready is True. */
  ready: boolean;
  /** Why it is not Ready, as short tokens from its conditions, sorted ([] for most Ready Nodes). */
  readinessReasons: string[];
  /** Cordoned: spec.unschedulable. */
  unschedulable: boolean;
  /** The first InternalIP it lists, as listed (not yet judged an IP address: nodes.ts). */
  internalIP?: string;
  capacity: ResourceMap;
  allocatable: ResourceMap;
  /** Free bytes TopoLVM reports on it, summed over its device classes; undefined without any. */
  topolvmFree?: ParsedQuantity;
  /**
   * The verdict of the pool whose cell it is, when it is not Healthy: anyone who may patch Nodes
   * could write the annotations, so one outside the closed sets reads as none.
   */
  health?: NodeHealth;
}

export function observeNode(node: Node): ObservedNode {
  // An address the kubelet left unset arrives as null (Go's encoding): not an InternalIP.
  const internalIP = node.status?.addresses?.find(
    (address) => address.type === 'InternalIP' && typeof address.address === 'string',
  )?.address;
  const topolvmFree = topolvmFreeCapacity(node);
  const health = readNodeHealth(node.metadata.annotations);
  return {
    name: node.metadata.name,
    labels: node.metadata.labels ?? {},
    ready: conditionIsTrue(node.status?.conditions, 'Ready'),
    readinessReasons: readinessReasons(node),
    unschedulable: node.spec?.unschedulable === true,
    ...(internalIP === undefined ? {} : { internalIP }),
    capacity: node.status?.capacity ?? {},
    allocatable: node.status?.allocatable ?? {},
    ...(topolvmFree === undefined ? {} : { topolvmFree }),
    ...(health === undefined ? {} : { health }),
  };
}

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

function topolvmFreeCapacity(node: Node): ParsedQuantity | undefined {
  let total: ParsedQuantity | undefined;
  for (const [key, value] of Object.entries(node.metadata.annotations ?? {})) {
    if (!key.startsWith(ANNOTATIONS.topolvmCapacityPrefix)) continue;
    total = addQuantities(total ?? ZERO_QUANTITY, parseQuantity(value));
  }
  return total;
}
