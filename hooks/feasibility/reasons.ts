/**
 * Every reason token the feasibility evaluation writes into `FeasibilityCheck.reason`, and
 * the decisions it reaches. Tokens are API: tools and alerts match on them, so a token is
 * never renamed or reused for another meaning. `docs/concepts.md` ("Feasibility
 * evaluation") lists each one; a test checks that it does.
 */
import type { FeasibilityCheck } from '../generated/types/index.js';

export type CheckName = FeasibilityCheck['name'];
export type CheckResult = FeasibilityCheck['result'];

/** The outcome of an evaluation: any Fail rejects, else any Unknown is Unknown. */
export const Decision = {
  Accepted: 'Accepted',
  Rejected: 'Rejected',
  Unknown: 'Unknown',
} as const;
export type Decision = (typeof Decision)[keyof typeof Decision];

export const Reason = {
  // CellFound
  CellFound: 'CellFound',
  CellNotFound: 'CellNotFound',
  NoCellMatches: 'NoCellMatches',
  PlacementIndexMissing: 'PlacementIndexMissing',
  PlacementIndexUnreadable: 'PlacementIndexUnreadable',
  // ClassFound
  ClassFound: 'ClassFound',
  ClassNotFound: 'ClassNotFound',
  // NamespaceAllowed
  NamespaceAllowed: 'NamespaceAllowed',
  NamespaceNotAllowed: 'NamespaceNotAllowed',
  NamespaceLabelsUnknown: 'NamespaceLabelsUnknown',
  // CellLive
  CellLive: 'CellLive',
  CellNotObserved: 'CellNotObserved',
  CellNotReady: 'CellNotReady',
  LeaseStale: 'LeaseStale',
  LeaseUnknown: 'LeaseUnknown',
  // InventoryFresh
  InventoryFresh: 'InventoryFresh',
  InventoryNotObserved: 'InventoryNotObserved',
  InventoryStale: 'InventoryStale',
  InventoryOutdated: 'InventoryOutdated',
  // ResourceOffered
  NoExtendedResources: 'NoExtendedResources',
  DeviceDeclared: 'DeviceDeclared',
  DeviceNotDeclared: 'DeviceNotDeclared',
  // Capacity
  CapacityAvailable: 'CapacityAvailable',
  InsufficientCapacity: 'InsufficientCapacity',
  ResourceNotInInventory: 'ResourceNotInInventory',
  AwaitingResources: 'AwaitingResources',
  InventoryNotFresh: 'InventoryNotFresh',
  InventoryIncomplete: 'InventoryIncomplete',
  // Storage
  NoStorageRequested: 'NoStorageRequested',
  StorageAvailable: 'StorageAvailable',
  InsufficientStorage: 'InsufficientStorage',
  StorageNotFresh: 'StorageNotFresh',
  FreeCapacityUnknown: 'FreeCapacityUnknown',
  // NodePorts
  NodePortsAvailable: 'NodePortsAvailable',
  NodePortRangeExhausted: 'NodePortRangeExhausted',
  NodePortsUnknown: 'NodePortsUnknown',
  NodePortsNotFresh: 'NodePortsNotFresh',
  // NamespaceAvailable
  NamespaceAvailable: 'NamespaceAvailable',
  NamespaceOccupied: 'NamespaceOccupied',
  NotHostNamespace: 'NotHostNamespace',
  // Capacity and Storage: a quantity that does not parse
  InvalidQuantity: 'InvalidQuantity',
  InvalidInventory: 'InvalidInventory',
} as const;
export type Reason = (typeof Reason)[keyof typeof Reason];

/**
 * Which reasons each check can give, with the result that goes with each. A reason's
 * result never varies.
 */
export const REASONS_BY_CHECK: Readonly<
  Record<CheckName, ReadonlyArray<{ reason: Reason; result: CheckResult }>>
> = {
  CellFound: [
    { reason: Reason.CellFound, result: 'Pass' },
    { reason: Reason.CellNotFound, result: 'Unknown' },
    { reason: Reason.NoCellMatches, result: 'Unknown' },
    { reason: Reason.PlacementIndexMissing, result: 'Unknown' },
    { reason: Reason.PlacementIndexUnreadable, result: 'Unknown' },
  ],
  ClassFound: [
    { reason: Reason.ClassFound, result: 'Pass' },
    { reason: Reason.ClassNotFound, result: 'Unknown' },
  ],
  NamespaceAllowed: [
    { reason: Reason.NamespaceAllowed, result: 'Pass' },
    { reason: Reason.NamespaceNotAllowed, result: 'Fail' },
    { reason: Reason.NamespaceLabelsUnknown, result: 'Unknown' },
  ],
  CellLive: [
    { reason: Reason.CellLive, result: 'Pass' },
    { reason: Reason.CellNotReady, result: 'Unknown' },
    { reason: Reason.LeaseStale, result: 'Fail' },
    { reason: Reason.CellNotObserved, result: 'Unknown' },
    { reason: Reason.LeaseUnknown, result: 'Unknown' },
  ],
  InventoryFresh: [
    { reason: Reason.InventoryFresh, result: 'Pass' },
    { reason: Reason.InventoryNotObserved, result: 'Unknown' },
    { reason: Reason.InventoryStale, result: 'Unknown' },
    { reason: Reason.InventoryOutdated, result: 'Unknown' },
  ],
  ResourceOffered: [
    { reason: Reason.NoExtendedResources, result: 'Pass' },
    { reason: Reason.DeviceDeclared, result: 'Pass' },
    { reason: Reason.DeviceNotDeclared, result: 'Fail' },
  ],
  Capacity: [
    { reason: Reason.CapacityAvailable, result: 'Pass' },
    { reason: Reason.InsufficientCapacity, result: 'Fail' },
    { reason: Reason.ResourceNotInInventory, result: 'Unknown' },
    { reason: Reason.AwaitingResources, result: 'Unknown' },
    { reason: Reason.InvalidQuantity, result: 'Fail' },
    { reason: Reason.InventoryNotFresh, result: 'Unknown' },
    { reason: Reason.InventoryIncomplete, result: 'Unknown' },
    { reason: Reason.InvalidInventory, result: 'Unknown' },
  ],
  Storage: [
    { reason: Reason.NoStorageRequested, result: 'Pass' },
    { reason: Reason.StorageAvailable, result: 'Pass' },
    { reason: Reason.InsufficientStorage, result: 'Fail' },
    { reason: Reason.InvalidQuantity, result: 'Fail' },
    { reason: Reason.StorageNotFresh, result: 'Unknown' },
    { reason: Reason.FreeCapacityUnknown, result: 'Unknown' },
    { reason: Reason.InvalidInventory, result: 'Unknown' },
  ],
  NodePorts: [
    { reason: Reason.NodePortsAvailable, result: 'Pass' },
    { reason: Reason.NodePortRangeExhausted, result: 'Fail' },
    { reason: Reason.NodePortsUnknown, result: 'Unknown' },
    { reason: Reason.NodePortsNotFresh, result: 'Unknown' },
  ],
  NamespaceAvailable: [
    { reason: Reason.NamespaceAvailable, result: 'Pass' },
    { reason: Reason.NamespaceOccupied, result: 'Fail' },
    { reason: Reason.NotHostNamespace, result: 'Fail' },
  ],
};

/** The checks in the order they appear in a report. */
export const CHECK_ORDER: readonly CheckName[] = [
  'CellFound',
  'ClassFound',
  'NamespaceAllowed',
  'CellLive',
  'InventoryFresh',
  'ResourceOffered',
  'Capacity',
  'Storage',
  'NodePorts',
  'NamespaceAvailable',
];
