import type { CellStorageInventory } from '../generated/types/index.js';
import type { Node, PersistentVolume } from '../kube/objects.js';
import { ANNOTATIONS } from '../kube/labels.js';
import {
  addQuantities,
  formatQuantity,
  parseQuantity,
  ZERO_QUANTITY,
  type ParsedQuantity,
} from '../quantity/quantity.js';

export const TOPOLVM_PROVISIONER = 'topolvm.io';
const TOPOLVM_NODE_KEY = 'topology.topolvm.io/node';

/** Free bytes TopoLVM reports on a Node, summed over its device classes; undefined without any. */
export function topolvmFreeCapacity(node: Node): ParsedQuantity | undefined {
  let total: ParsedQuantity | undefined;
  for (const [key, value] of Object.entries(node.metadata.annotations ?? {})) {
    if (!key.startsWith(ANNOTATIONS.topolvmCapacityPrefix)) continue;
    total = addQuantities(total ?? ZERO_QUANTITY, parseQuantity(value));
  }
  return total;
}

/** The Node a TopoLVM volume lives on, from its required node affinity. */
function volumeNode(volume: PersistentVolume): string | undefined {
  for (const term of volume.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? []) {
    for (const expression of term.matchExpressions ?? []) {
      if (expression.key === TOPOLVM_NODE_KEY && expression.operator === 'In')
        return expression.values?.[0];
    }
  }
  return undefined;
}

/** Capacity of the topolvm.io PersistentVolumes on each Node. */
export function allocatedByNode(
  volumes: readonly PersistentVolume[] | undefined,
): Map<string, ParsedQuantity> {
  const allocated = new Map<string, ParsedQuantity>();
  for (const volume of volumes ?? []) {
    if (volume.spec?.csi?.driver !== TOPOLVM_PROVISIONER) continue;
    const node = volumeNode(volume);
    const size = volume.spec.capacity?.['storage'];
    if (!node || size === undefined) continue;
    allocated.set(node, addQuantities(allocated.get(node) ?? ZERO_QUANTITY, size));
  }
  return allocated;
}

/**
 * Free space comes only from TopoLVM's Node annotations; PV capacity feeds allocatedPV and never
 * free space, which it cannot tell. Free space is known only when every Ready profile Node
 * reports it.
 */
export function computeStorageInventory(
  readyNodes: readonly Node[],
  volumes: readonly PersistentVolume[] | undefined,
  allocatedOnNodes: Map<string, ParsedQuantity> = allocatedByNode(volumes),
): CellStorageInventory {
  let free: ParsedQuantity = ZERO_QUANTITY;
  let allocated: ParsedQuantity = ZERO_QUANTITY;
  let everyNodeReports = readyNodes.length > 0;
  for (const node of readyNodes) {
    const nodeFree = topolvmFreeCapacity(node);
    const nodeAllocated = allocatedOnNodes.get(node.metadata.name);
    if (nodeFree === undefined) everyNodeReports = false;
    else free = addQuantities(free, nodeFree);
    if (nodeAllocated !== undefined) allocated = addQuantities(allocated, nodeAllocated);
  }
  return {
    provisioner: TOPOLVM_PROVISIONER,
    allocatedPV: formatQuantity(allocated),
    ...(everyNodeReports ? { freeCapacity: formatQuantity(free) } : {}),
    freeCapacityKnown: everyNodeReports,
    freeCapacitySource: everyNodeReports ? 'TopoLVMNodeAnnotations' : 'None',
    fresh: volumes !== undefined,
  };
}
