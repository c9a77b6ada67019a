import type { CellStorageInventory } from '../generated/types/index.js';
import {
  addQuantities,
  formatQuantity,
  ZERO_QUANTITY,
  type ParsedQuantity,
} from '../quantity/quantity.js';
import type { ObservedNode } from './observe-nodes.js';
import { TOPOLVM_PROVISIONER } from './observe.js';

/**
 * Free space comes only from TopoLVM's Node annotations; PV capacity (`volumes`, by Node, undefined
 * when PersistentVolumes were not observed) feeds allocatedPV and never free space, which it
 * cannot tell. Free space is known only when every Ready profile Node reports it.
 */
export function computeStorageInventory(
  nodes: readonly ObservedNode[],
  volumes: ReadonlyMap<string, ParsedQuantity> | undefined,
): CellStorageInventory {
  const readyNodes = nodes.filter((node) => node.ready);
  let free: ParsedQuantity = ZERO_QUANTITY;
  let allocated: ParsedQuantity = ZERO_QUANTITY;
  let everyNodeReports = readyNodes.length > 0;
  for (const node of readyNodes) {
    const nodeAllocated = volumes?.get(node.name);
    if (node.topolvmFree === undefined) everyNodeReports = false;
    else free = addQuantities(free, node.topolvmFree);
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
