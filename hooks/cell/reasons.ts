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
  'NodeAddressesValid',
  'NodeDetailTruncated',
  'NodesHealthy',
  'InUse',
  'Ready',
] as const;

/** The condition reasons; each key is its token. */
export const REASONS = {
  ManagedClusterNotFound: 'ManagedClusterNotFound',
  ManagedClusterNotAccepted: 'ManagedClusterNotAccepted',
  ManagedClusterNotJoined: 'ManagedClusterNotJoined',
  ManagedClusterJoined: 'ManagedClusterJoined',
  ManagedClusterReplaced: 'ManagedClusterReplaced',
  ManagedClusterAvailable: 'ManagedClusterAvailable',
  ManagedClusterUnavailable: 'ManagedClusterUnavailable',
  LeaseRenewed: 'LeaseRenewed',
  LeaseStale: 'LeaseStale',
  // OCM's hub set Available Unknown for the lease (it counts even when the Lease looks fresh).
  LeaseUpdateStopped: 'LeaseUpdateStopped',
  LeaseMissing: 'LeaseMissing',
  LeaseNotObserved: 'LeaseNotObserved',
  ProviderBaselineReady: 'ProviderBaselineReady',
  ProviderBaselineNotReady: 'ProviderBaselineNotReady',
  InventoryObserved: 'InventoryObserved',
  InventorySourceUnavailable: 'InventorySourceUnavailable',
  // A Cell with delivery ManifestWork: its cell agent's report (observe-report.ts, assess-report.ts).
  InventoryReported: 'InventoryReported',
  AgentReportMissing: 'AgentReportMissing',
  AgentReportUnparsable: 'AgentReportUnparsable',
  AgentReportOutdated: 'AgentReportOutdated',
  DevicesOffered: 'DevicesOffered',
  DeviceNotOffered: 'DeviceNotOffered',
  // A Ready, schedulable profile Node's InternalIP is not an IP address (nodes.ts, issue 23).
  NodeAddressesValid: 'NodeAddressesValid',
  NodeAddressInvalid: 'NodeAddressInvalid',
  // The per-Node detail reached its size bound (nodes.ts).
  NodeDetailComplete: 'NodeDetailComplete',
  NodeDetailTruncated: 'NodeDetailTruncated',
  NodeDetailNotReported: 'NodeDetailNotReported',
  // Profile Nodes marked unhealthy by their GPUCellPool (hooks/api/node-health.ts, issue 28).
  NodesHealthy: 'NodesHealthy',
  NodesUnhealthy: 'NodesUnhealthy',
  NodeHealthNotReported: 'NodeHealthNotReported',
  NoVirtualClusters: 'NoVirtualClusters',
  VirtualClustersResolved: 'VirtualClustersResolved',
  Deleting: 'Deleting',
  Ready: 'Ready',
} as const;
