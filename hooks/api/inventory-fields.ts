/**
 * The figures of a Cell's `status.inventory[resource]` a placement reads: the capacity check
 * computes what the Cell can still promise from them (hooks/feasibility/capacity.ts), and the
 * placement index keeps exactly these, in this order (hooks/api/placement-index.ts). `capacity`
 * is not among them: what is allocatable bounds a promise, not what the Nodes have.
 */
import type { ResourceInventory } from '../generated/types/index.js';

export const INVENTORY_FIELDS = [
  'allocatable',
  'requested',
  'pending',
  'committed',
  'availableEstimate',
] as const satisfies readonly (keyof ResourceInventory)[];
