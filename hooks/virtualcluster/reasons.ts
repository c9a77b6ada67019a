/**
 * Every phase, condition type and condition reason the VirtualCluster controller writes.
 * Reasons are API: tools and alerts match on them, so a token is never renamed or reused for
 * another meaning. docs/concepts.md ("VirtualCluster") lists them; a test checks that it does.
 * The feasibility checks in `status.feasibilityChecks` use their own tokens
 * (hooks/feasibility/reasons.ts).
 */
import type { VirtualClusterStatus } from '../generated/types/index.js';

export type VirtualClusterPhase = NonNullable<VirtualClusterStatus['phase']>;

export const VC_PHASES: readonly VirtualClusterPhase[] = [
  'Pending',
  'Provisioning',
  'Ready',
  'Degraded',
  'Deleting',
  'Failed',
];

/** The conditions, in the order the status lists them. */
export const VC_CONDITION_TYPES = [
  'Feasible',
  'Resolved',
  'ChildrenApplied',
  'K3kReady',
  'KubeconfigPublished',
  'CellLive',
  'Ready',
] as const;
export type VirtualClusterConditionType = (typeof VC_CONDITION_TYPES)[number];

export const VC_REASONS = {
  // Feasible
  accepted: 'Accepted',
  rejected: 'Rejected',
  undecided: 'Unknown',
  notEvaluated: 'NotEvaluated',
  // Resolved
  resolved: 'Resolved',
  feasibilityRejected: 'FeasibilityRejected',
  feasibilityUnknown: 'FeasibilityUnknown',
  noEndpointAddress: 'NoEndpointAddress',
  notResolved: 'NotResolved',
  // ChildrenApplied
  childrenApplied: 'ChildrenApplied',
  childrenPending: 'ChildrenPending',
  childrenKept: 'ChildrenKept',
  // K3kReady
  k3kReady: 'K3kReady',
  k3kNotReady: 'K3kNotReady',
  k3kClusterMissing: 'K3kClusterMissing',
  // KubeconfigPublished
  published: 'KubeconfigPublished',
  waitingForNodePort: 'WaitingForNodePort',
  waitingForK3kKubeconfig: 'WaitingForK3kKubeconfig',
  k3kKubeconfigInvalid: 'K3kKubeconfigInvalid',
  k3kKubeconfigRejected: 'K3kKubeconfigRejected',
  secretNotApplied: 'SecretNotApplied',
  secretOutdated: 'SecretOutdated',
  // CellLive
  cellLive: 'LeaseFresh',
  cellNotObserved: 'CellNotObserved',
  cellNotFound: 'CellNotFound',
  cellStatusMissing: 'CellStatusMissing',
  leaseStale: 'LeaseStale',
  leaseUnknown: 'LeaseUnknown',
  // Ready (and the phase): Failed reasons
  namespaceOccupied: 'NamespaceOccupied',
  cellReplaced: 'CellReplaced',
  managedClusterReplaced: 'ManagedClusterReplaced',
  resolvedSnapshotInvalid: 'ResolvedSnapshotInvalid',
  // Ready (and the phase): the other phases
  ready: 'Ready',
  provisioning: 'Provisioning',
  pending: 'Pending',
  cellInventoryUnavailable: 'CellInventoryUnavailable',
  deleting: 'Deleting',
} as const;
export type VirtualClusterReason = (typeof VC_REASONS)[keyof typeof VC_REASONS];

/**
 * Failed reasons that stay once reached, whatever is observed later: an operator must act
 * (DESIGN: "re-applying does not bypass it"). ManagedClusterReplaced is not among them: it
 * mirrors the Cell, which itself stays Failed until an operator accepts the new cluster.
 */
export const STICKY_FAILURES: readonly string[] = [
  VC_REASONS.namespaceOccupied,
  VC_REASONS.cellReplaced,
  VC_REASONS.resolvedSnapshotInvalid,
];
