/**
 * The check Storage: the storage the class's entitlement limits (requests.storage, or its
 * storage class's key) is within the free capacity TopoLVM reports on the Cell.
 */
import type {
  Cell,
  CellStorageInventory,
  FeasibilityCheck,
  VirtualNodeClass,
} from '../generated/types/index.js';
import {
  compareQuantities,
  formatQuantity,
  QuantityError,
  type ParsedQuantity,
} from '../quantity/quantity.js';
import { check, invalidQuantityCheck, type CheckFigures } from './check.js';
import { Reason } from './reasons.js';
import { storageRequirement, tryParse } from './resources.js';

export function checkStorage(cell: Cell, cls: VirtualNodeClass): FeasibilityCheck {
  const requirement = storageRequirement(
    cls.spec.entitlement?.workloadHard,
    cls.spec.storageClassName,
  );
  if (requirement.kind === 'invalid') {
    return invalidQuantityCheck('Storage', requirement.entry.key, requirement.entry);
  }
  if (requirement.kind === 'none') {
    return check(
      'Storage',
      'Pass',
      Reason.NoStorageRequested,
      'The entitlement limits no storage (requests.storage), so there is nothing to compare with free capacity.',
      { resource: 'requests.storage' },
    );
  }
  const figures = { resource: requirement.key, required: formatQuantity(requirement.required) };
  const free = freeStorage(cell.status?.storageInventory, figures);
  if (free.kind === 'unknown') return free.check;
  return storageFits(requirement.required, free.quantity, figures);
}

type StorageFigures = Required<Pick<CheckFigures, 'resource' | 'required'>>;

/** The free capacity TopoLVM reports on the Cell, or the Unknown check saying why it is unknown. */
function freeStorage(
  storage: CellStorageInventory | undefined,
  figures: StorageFigures,
): { kind: 'known'; quantity: ParsedQuantity } | { kind: 'unknown'; check: FeasibilityCheck } {
  const unknown = (reason: Reason, message: string) => ({
    kind: 'unknown' as const,
    check: check('Storage', 'Unknown', reason, message, figures),
  });
  const needText = figures.required;
  if (storage?.fresh !== true) {
    return unknown(
      Reason.StorageNotFresh,
      `The class needs ${needText} of storage, but the Cell's storage inventory is ${storage === undefined ? 'not reported' : 'not fresh'}.`,
    );
  }
  if (storage.freeCapacityKnown !== true || storage.freeCapacity === undefined) {
    return unknown(
      Reason.FreeCapacityUnknown,
      `The class needs ${needText} of storage, but the Cell's free capacity is unknown: every Ready profile Node must carry TopoLVM's capacity.topolvm.io/<device-class> annotation.`,
    );
  }
  const free = tryParse(storage.freeCapacity);
  if (free instanceof QuantityError) {
    return unknown(
      Reason.InvalidInventory,
      `The Cell's storage free capacity is an invalid quantity (${free.message}).`,
    );
  }
  return { kind: 'known', quantity: free };
}

/** Pass when the class's storage is within the free capacity, else Fail. */
function storageFits(
  required: ParsedQuantity,
  free: ParsedQuantity,
  figures: StorageFigures,
): FeasibilityCheck {
  const needText = figures.required;
  const freeText = formatQuantity(free);
  if (compareQuantities(required, free) <= 0) {
    return check(
      'Storage',
      'Pass',
      Reason.StorageAvailable,
      `The class needs ${needText} of storage; TopoLVM reports ${freeText} free on the Cell.`,
      { ...figures, available: freeText },
    );
  }
  return check(
    'Storage',
    'Fail',
    Reason.InsufficientStorage,
    `The class needs ${needText} of storage, but TopoLVM reports only ${freeText} free on the Cell. Choose a class with less storage or another Cell.`,
    { ...figures, available: freeText },
  );
}
