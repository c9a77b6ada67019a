/**
 * The check Capacity: for each capacity-checked resource of the class's entitlement, can the
 * Cell still promise what the class needs? What it can promise, from the Cell's inventory alone
 * (see evaluate.ts):
 *
 *   available = min(inventory.availableEstimate,
 *                   allocatable − max(requested + pending, committed))
 *
 * where committed is the Cell's sum of the entitlements of the VirtualClusters resolved to it.
 */
import { INVENTORY_FIELDS } from '../api/inventory-fields.js';
import type {
  Cell,
  FeasibilityCheck,
  ResourceInventory,
  VirtualNodeClass,
} from '../generated/types/index.js';
import {
  addQuantities,
  compareQuantities,
  QuantityError,
  formatQuantity,
  maxQuantity,
  minQuantity,
  subtractQuantities,
  ZERO_QUANTITY,
  type ParsedQuantity,
} from '../quantity/quantity.js';
import { check, invalidQuantityCheck } from './check.js';
import { Reason } from './reasons.js';
import { compareStrings } from '../json/compare.js';
import { capacityRequirements, tryParse } from './resources.js';

type Estimate =
  | { kind: 'ok'; available: ParsedQuantity; explanation: string }
  | { kind: 'incomplete' }
  | { kind: 'invalid'; error: string };

/** What one resource's Capacity check is judged on. */
interface CapacityFacts {
  resource: string;
  need: ParsedQuantity;
  /** What the Cell can still promise; undefined when its inventory lacks the resource. */
  estimate: Estimate | undefined;
  inventoryFresh: boolean;
}

/**
 * One Capacity check per capacity-checked resource, in resource order. While no Ready Node offers
 * one of the class's resources (ResourceNotInInventory), the Cell's Nodes may still be joining
 * (a Node counts once it is Ready, a GPUCellPool scales from zero), so a shortfall of another
 * resource is not decided either (`awaitingResources`): a plan must not conclude Rejected from
 * an inventory that is still filling up. It is decided once every resource is offered.
 */
export function checkCapacity(
  cell: Cell,
  cls: VirtualNodeClass,
  inventoryFresh: boolean,
): FeasibilityCheck[] {
  const checks = capacityChecks(cell, cls, inventoryFresh);
  const missing = checks
    .filter((c) => c.reason === Reason.ResourceNotInInventory)
    .map((c) => c.resource ?? '');
  if (missing.length === 0) return checks;
  return checks.map((c) =>
    c.reason === Reason.InsufficientCapacity ? awaitingResources(c, missing) : c,
  );
}

function awaitingResources(
  shortfall: FeasibilityCheck,
  missing: readonly string[],
): FeasibilityCheck {
  const { resource } = shortfall;
  const required = shortfall.required === undefined ? undefined : String(shortfall.required);
  const available = shortfall.available === undefined ? undefined : String(shortfall.available);
  return check(
    'Capacity',
    'Unknown',
    Reason.AwaitingResources,
    `The class needs ${required ?? '?'} ${resource ?? ''} and the Cell can only promise ${available ?? '?'} now, but no Ready Node offers ${missing.join(', ')} yet, which the class also needs: the Cell's Nodes may still be joining, so this is decided when every resource is offered.`,
    { resource, required, available },
  );
}

function capacityChecks(
  cell: Cell,
  cls: VirtualNodeClass,
  inventoryFresh: boolean,
): FeasibilityCheck[] {
  const { required, invalid } = capacityRequirements(cls.spec.entitlement?.workloadHard);
  const resources = [...new Set([...required.keys(), ...invalid.keys()])].sort(compareStrings);
  return resources.map((resource) => {
    const bad = invalid.get(resource);
    if (bad !== undefined) return invalidQuantityCheck('Capacity', resource, bad);
    const inventory = cell.status?.inventory?.[resource];
    return capacityCheck({
      resource,
      need: required.get(resource) ?? ZERO_QUANTITY,
      estimate: inventory === undefined ? undefined : availableFor(inventory),
      inventoryFresh,
    });
  });
}

function capacityCheck({
  resource,
  need,
  estimate,
  inventoryFresh,
}: CapacityFacts): FeasibilityCheck {
  const needText = formatQuantity(need);
  if (compareQuantities(need, ZERO_QUANTITY) <= 0) {
    return check('Capacity', 'Pass', Reason.CapacityAvailable, `The class needs no ${resource}.`, {
      resource,
      required: needText,
    });
  }
  if (!inventoryFresh) return inventoryNotFresh(resource, needText, estimate);
  if (estimate === undefined) {
    // Unknown, not Fail: Nodes join a Cell after it is created (a GPUCellPool scales from
    // zero), so what no Ready Node offers now may be offered later; the placement is evaluated
    // again when the Cell changes (D40).
    return check(
      'Capacity',
      'Unknown',
      Reason.ResourceNotInInventory,
      `The class needs ${needText} ${resource}, but no Ready Node of the Cell offers ${resource} yet.`,
      { resource, required: needText, available: '0' },
    );
  }
  if (estimate.kind !== 'ok') return unusableInventory(resource, needText, estimate);
  return capacityFits(resource, need, estimate);
}

function inventoryNotFresh(
  resource: string,
  needText: string,
  estimate: Estimate | undefined,
): FeasibilityCheck {
  return check(
    'Capacity',
    'Unknown',
    Reason.InventoryNotFresh,
    `The class needs ${needText} ${resource}, but the Cell is not live or its inventory is not fresh (see CellLive and InventoryFresh); the check runs again when both pass.`,
    {
      resource,
      required: needText,
      available: estimate?.kind === 'ok' ? formatQuantity(estimate.available) : undefined,
    },
  );
}

/** The Cell's inventory entry for the resource is unusable: an invalid quantity, or too few fields. */
function unusableInventory(
  resource: string,
  needText: string,
  estimate: Exclude<Estimate, { kind: 'ok' }>,
): FeasibilityCheck {
  if (estimate.kind === 'invalid') {
    return check(
      'Capacity',
      'Unknown',
      Reason.InvalidInventory,
      `The Cell's inventory for ${resource} holds an invalid quantity (${estimate.error}).`,
      { resource, required: needText },
    );
  }
  return check(
    'Capacity',
    'Unknown',
    Reason.InventoryIncomplete,
    `The Cell's inventory for ${resource} has neither allocatable nor availableEstimate.`,
    { resource, required: needText },
  );
}

/** Pass when the class's need is within what the Cell can still promise, else Fail. */
function capacityFits(
  resource: string,
  need: ParsedQuantity,
  estimate: Extract<Estimate, { kind: 'ok' }>,
): FeasibilityCheck {
  const needText = formatQuantity(need);
  const availableText = formatQuantity(estimate.available);
  const fits = compareQuantities(need, estimate.available) <= 0;
  return check(
    'Capacity',
    fits ? 'Pass' : 'Fail',
    fits ? Reason.CapacityAvailable : Reason.InsufficientCapacity,
    fits
      ? `The class needs ${needText} ${resource}; the Cell can still promise ${availableText}${estimate.explanation}.`
      : `The class needs ${needText} ${resource}, but the Cell can only promise ${availableText}${estimate.explanation}. Choose a smaller class, another Cell, or free capacity on this one.`,
    { resource, required: needText, available: availableText },
  );
}

type InventoryValues = Partial<Record<(typeof INVENTORY_FIELDS)[number], ParsedQuantity>>;

/** What a new VirtualCluster can still be promised of one resource (see the file comment). */
function availableFor(inventory: ResourceInventory): Estimate {
  const values: InventoryValues = {};
  for (const field of INVENTORY_FIELDS) {
    const raw = inventory[field];
    if (raw === undefined) continue;
    const parsed = tryParse(raw);
    if (parsed instanceof QuantityError) return { kind: 'invalid', error: parsed.message };
    values[field] = parsed;
  }
  const { allocatable, availableEstimate } = values;
  if (allocatable === undefined) {
    return availableEstimate === undefined
      ? { kind: 'incomplete' }
      : {
          kind: 'ok',
          available: availableEstimate,
          explanation: " (the Cell's availableEstimate)",
        };
  }
  return estimateFromAllocatable(allocatable, values);
}

function estimateFromAllocatable(allocatable: ParsedQuantity, values: InventoryValues): Estimate {
  const used = addQuantities(values.requested ?? ZERO_QUANTITY, values.pending ?? ZERO_QUANTITY);
  const committed = values.committed ?? ZERO_QUANTITY;
  let available = subtractQuantities(allocatable, maxQuantity(used, committed));
  if (values.availableEstimate !== undefined) {
    available = minQuantity(available, values.availableEstimate);
  }
  const explanation =
    ` (allocatable ${formatQuantity(allocatable)} − max(requested + pending ${formatQuantity(used)}, ` +
    `committed ${formatQuantity(committed)}))`;
  return { kind: 'ok', available, explanation };
}
