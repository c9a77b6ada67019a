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
  'PlanFollowed',
  'ChildrenApplied',
  'K3kReady',
  'KubeconfigPublished',
  'CellLive',
  'CellNodesHealthy',
  'Ready',
] as const;
export type VirtualClusterConditionType = (typeof VC_CONDITION_TYPES)[number];

export const REASONS = {
  // Feasible
  Accepted: 'Accepted',
  Rejected: 'Rejected',
  Unknown: 'Unknown',
  NotEvaluated: 'NotEvaluated',
  // Resolved
  Resolved: 'Resolved',
  FeasibilityRejected: 'FeasibilityRejected',
  FeasibilityUnknown: 'FeasibilityUnknown',
  NoEndpointAddress: 'NoEndpointAddress',
  NotResolved: 'NotResolved',
  // PlanFollowed (only with the annotation kubecell.io/plan; status.resolved.plan.result)
  PlanFollowed: 'PlanFollowed',
  CellNoLongerFits: 'CellNoLongerFits',
  CellNotMatched: 'CellNotMatched',
  PlanNotAccepted: 'PlanNotAccepted',
  PlanNotFound: 'PlanNotFound',
  // ChildrenApplied
  ChildrenApplied: 'ChildrenApplied',
  ChildrenPending: 'ChildrenPending',
  ChildrenKept: 'ChildrenKept',
  // ChildrenApplied on a ManifestWork Cell (K3kReady too: WorkNotObserved, WorkNotFound)
  WorkApplied: 'WorkApplied',
  WorkNotObserved: 'WorkNotObserved',
  WorkNotFound: 'WorkNotFound',
  WorkNotApplied: 'WorkNotApplied',
  // K3kReady
  K3kReady: 'K3kReady',
  K3kNotReady: 'K3kNotReady',
  K3kClusterMissing: 'K3kClusterMissing',
  // KubeconfigPublished
  KubeconfigPublished: 'KubeconfigPublished',
  WaitingForNodePort: 'WaitingForNodePort',
  WaitingForK3kKubeconfig: 'WaitingForK3kKubeconfig',
  K3kKubeconfigInvalid: 'K3kKubeconfigInvalid',
  K3kKubeconfigRejected: 'K3kKubeconfigRejected',
  SecretNotApplied: 'SecretNotApplied',
  SecretOutdated: 'SecretOutdated',
  // KubeconfigPublished on a ManifestWork Cell
  WaitingForSealedKubeconfig: 'WaitingForSealedKubeconfig',
  SealingKeyMissing: 'SealingKeyMissing',
  SealedKubeconfigInvalid: 'SealedKubeconfigInvalid',
  // CellLive
  LeaseFresh: 'LeaseFresh',
  CellNotObserved: 'CellNotObserved',
  CellNotFound: 'CellNotFound',
  CellStatusMissing: 'CellStatusMissing',
  LeaseStale: 'LeaseStale',
  LeaseUnknown: 'LeaseUnknown',
  CellLivenessUnreadable: 'CellLivenessUnreadable',
  // CellNodesHealthy (informational: Ready does not depend on it)
  CellNodesHealthy: 'CellNodesHealthy',
  CellNodesUnhealthy: 'CellNodesUnhealthy',
  // Unknown: the Cell's liveness cannot be read (CellLive says why)
  CellNodesUnknown: 'CellNodesUnknown',
  // Unknown: the record has no unhealthyNodes (written by an older controller)
  CellNodeHealthNotRecorded: 'CellNodeHealthNotRecorded',
  // Unknown: the Cell has no status.nodes (its cell agent is older than the hub)
  CellNodesNotListed: 'CellNodesNotListed',
  // Ready (and the phase): Failed reasons
  NamespaceOccupied: 'NamespaceOccupied',
  CellReplaced: 'CellReplaced',
  ManagedClusterReplaced: 'ManagedClusterReplaced',
  // Written by releases before the validation layer (hooks/controllers/request-validation.ts)
  // refused a status.resolved without the fields the children are rendered from; it stays.
  ResolvedSnapshotInvalid: 'ResolvedSnapshotInvalid',
  // Ready (and the phase): the other phases
  Ready: 'Ready',
  Provisioning: 'Provisioning',
  Pending: 'Pending',
  CellInventoryUnavailable: 'CellInventoryUnavailable',
  Deleting: 'Deleting',
} as const;
export type VirtualClusterReason = (typeof REASONS)[keyof typeof REASONS];

/**
 * Failed reasons that stay once reached, whatever is observed later: an operator must act
 * (DESIGN: "re-applying does not bypass it"). ManagedClusterReplaced is not among them: it
 * mirrors the Cell, which itself stays Failed until an operator accepts the new cluster.
 */
export const STICKY_FAILURES: readonly string[] = [
  REASONS.NamespaceOccupied,
  REASONS.CellReplaced,
  REASONS.ResolvedSnapshotInvalid,
];
