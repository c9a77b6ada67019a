/** Every phase and condition reason the Cell controller reports; docs are checked against these. */
export const CELL_PHASES = [
  'Pending',
  'Provisioning',
  'Ready',
  'Degraded',
  'Deleting',
  'Failed',
] as const;
export type CellPhase = (typeof CELL_PHASES)[number];

export const CELL_CONDITION_TYPES = [
  'Joined',
  'Available',
  'LeaseFresh',
  'ProviderReady',
  'InventoryFresh',
  'CapabilityMismatch',
  'InUse',
  'Ready',
] as const;

export const CELL_REASONS = {
  managedClusterNotFound: 'ManagedClusterNotFound',
  managedClusterNotAccepted: 'ManagedClusterNotAccepted',
  managedClusterNotJoined: 'ManagedClusterNotJoined',
  managedClusterJoined: 'ManagedClusterJoined',
  managedClusterReplaced: 'ManagedClusterReplaced',
  managedClusterAvailable: 'ManagedClusterAvailable',
  managedClusterUnavailable: 'ManagedClusterUnavailable',
  leaseRenewed: 'LeaseRenewed',
  leaseStale: 'LeaseStale',
  leaseNotFound: 'LeaseNotFound',
  providerReady: 'ProviderBaselineReady',
  providerNotReady: 'ProviderBaselineNotReady',
  inventoryObserved: 'InventoryObserved',
  inventorySourceUnavailable: 'InventorySourceUnavailable',
  devicesOffered: 'DevicesOffered',
  deviceNotOffered: 'DeviceNotOffered',
  notInUse: 'NoVirtualClusters',
  inUse: 'VirtualClustersResolved',
  deleting: 'Deleting',
  ready: 'Ready',
} as const;
