/**
 * The bound ManagedCluster's liveness, judged (assess phase) from what observe narrowed of it and
 * its Lease (observe-managed-cluster.ts): joined, available as its agent says, whether the lease is
 * renewed, whether the cluster was replaced, and when to look at the lease again.
 */
import type { CellManagedClusterStatus, CellStatus } from '../generated/types/index.js';
import type { ObservedLease, ObservedManagedCluster } from './observe-managed-cluster.js';

/** The Lease the Cell reads (scripts/local reads the same one). */
export { MANAGED_CLUSTER_LEASE } from './observe-managed-cluster.js';

/** Lets an operator accept a replaced ManagedCluster: its value is the new UID to record. */
export const ACCEPT_MANAGED_CLUSTER_UID_ANNOTATION = 'kubecell.io/accept-managed-cluster-uid';

/** A lease is stale this many durations after its renewTime, as OCM's hub judges it. */
export const LEASE_GRACE_DURATIONS = 5;
/**
 * A renewal is overdue this many durations after the last: OCM's agent renews every
 * leaseDurationSeconds with a jitter of up to 25 % (ocm v1.3.1,
 * pkg/registration/spoke/lease/lease_controller.go: wait.JitterUntilWithContext with
 * leaseUpdateJitterFactor 0.25), so past two durations at least one renewal was missed.
 */
export const RENEWAL_OVERDUE_DURATIONS = 2;

/**
 * While renewals arrive on time, the Cell asks to be synced again at the lease's expiry but never
 * sooner than this. Each instant asked costs a sync whatever happens meanwhile (Metacontroller
 * v4.17.2 `enqueueParentObjectAfter` → client-go v0.36.3 util/workqueue/delaying_queue.go, which
 * keeps the earliest readyAt of a key), so below a 20-s lease, whose expiry is less than a minute
 * after an on-time renewal, the Cell looks once a minute, as the 60-s resync period did before
 * issue 25: staleness is seen no later than then. From a 20-s lease on, the expiry itself.
 */
export const LEASE_WATCH_MIN_SECONDS = 60;

/** Why the lease is judged as it is; each value is the LeaseFresh condition's reason. */
export type LeaseVerdict =
  'LeaseRenewed' | 'LeaseStale' | 'LeaseUpdateStopped' | 'LeaseMissing' | 'LeaseNotObserved';

export interface Liveness {
  status: CellManagedClusterStatus;
  /** The bound cluster was replaced: another UID than the one first recorded. */
  replaced: boolean;
  /** How far the ManagedCluster got, for the Joined condition's reason. */
  observed: 'absent' | 'notAccepted' | 'notJoined' | 'joined';
  lease: LeaseVerdict;
  /**
   * When the Cell looks at a fresh lease again: the instant it goes stale unless renewed, asked of
   * Metacontroller as a resync, so a lease that stops being renewed is noticed without any event.
   * While renewals arrive on time, no sooner than LEASE_WATCH_MIN_SECONDS from now; once a
   * renewal is overdue, the expiry itself. Each renewal moves it later, never earlier, so the
   * instant Metacontroller's delaying queue keeps (the earliest) fires about once per expiry
   * period (4 to 5 lease durations from a 20-s lease on; once a minute below), not per renewal.
   */
  lookAgainAt?: Date;
}

/** What a Cell observed of its cluster's liveness: the ManagedCluster and its Lease. */
export interface LivenessInputs {
  clusterName: string;
  cluster?: ObservedManagedCluster;
  lease: ObservedLease;
}

/**
 * Whether the agent renews its lease, judged by KubeCell: the Lease managed-cluster-lease's
 * renewTime + 5 × the ManagedCluster's spec.leaseDurationSeconds (60 s when unset or 0) is after
 * `now`. That is the threshold OCM's hub lease controller applies (open-cluster-management-io/ocm
 * v1.3.1, pkg/registration/hub/lease/controller.go: `sync` grants LeaseDurationTimes = 5 lease
 * durations and expires at exactly renewTime + grace); its verdict, Available Unknown with reason
 * ManagedClusterLeaseUpdateStopped, also counts, and the stricter of the two wins, so a hub whose
 * controller is down, stuck or lagging does not keep a dead cluster live. Available=True alone
 * never makes a lease fresh.
 */
export function judgeLease(
  inputs: LivenessInputs,
  now: Date,
): {
  verdict: LeaseVerdict;
  renewTime?: Date;
  durationSeconds: number;
  expiresAt?: Date;
  overdue?: boolean;
} {
  const { durationSeconds, renewTime } = inputs.lease;
  const expiresAt =
    renewTime && new Date(renewTime.getTime() + LEASE_GRACE_DURATIONS * durationSeconds * 1000);
  const base = { durationSeconds, ...(renewTime ? { renewTime } : {}) };
  if (inputs.cluster?.leaseUpdateStopped) return { ...base, verdict: 'LeaseUpdateStopped' };
  if (!inputs.lease.observed) return { ...base, verdict: 'LeaseNotObserved' };
  if (!renewTime || !expiresAt) return { ...base, verdict: 'LeaseMissing' };
  if (expiresAt.getTime() <= now.getTime()) return { ...base, verdict: 'LeaseStale' };
  const overdue =
    now.getTime() - renewTime.getTime() >= RENEWAL_OVERDUE_DURATIONS * durationSeconds * 1000;
  return { ...base, verdict: 'LeaseRenewed', expiresAt, overdue };
}

function observedState(cluster: ObservedManagedCluster | undefined): Liveness['observed'] {
  if (!cluster) return 'absent';
  if (!cluster.accepted) return 'notAccepted';
  return cluster.joined ? 'joined' : 'notJoined';
}

/**
 * Liveness of the bound ManagedCluster: joined, Available as its agent reports it, and whether
 * its lease is renewed (`judgeLease`). The UID recorded at first sight is kept even while the
 * cluster is absent, so a replacement is noticed whenever it appears.
 */
export function assessLiveness(
  inputs: LivenessInputs,
  previous: CellStatus | undefined,
  now: Date,
): Liveness {
  const { clusterName, cluster } = inputs;
  const recordedUid = previous?.managedCluster?.uid;
  const observedUid = cluster?.uid;
  const lease = judgeLease(inputs, now);
  const leaseFresh =
    lease.verdict === 'LeaseNotObserved' ? undefined : lease.verdict === 'LeaseRenewed';
  const status: CellManagedClusterStatus = {
    name: clusterName,
    ...((recordedUid ?? observedUid) ? { uid: recordedUid ?? observedUid } : {}),
    joined: cluster?.joined ?? false,
    available: cluster?.available ?? false,
    ...(leaseFresh === undefined ? {} : { leaseFresh }),
    // Written anew from the parsed time (milliseconds), never the Lease's own bytes.
    ...(lease.renewTime ? { leaseRenewTime: lease.renewTime.toISOString() } : {}),
    leaseDurationSeconds: lease.durationSeconds,
  };
  return {
    status,
    observed: observedState(cluster),
    replaced: recordedUid !== undefined && observedUid !== undefined && recordedUid !== observedUid,
    lease: lease.verdict,
    ...(lease.expiresAt ? { lookAgainAt: lookAgainAt(lease.expiresAt, lease.overdue, now) } : {}),
  };
}

/** Liveness.lookAgainAt: the expiry, no sooner than LEASE_WATCH_MIN_SECONDS while on time. */
function lookAgainAt(expiresAt: Date, overdue: boolean | undefined, now: Date): Date {
  if (overdue) return expiresAt;
  return new Date(Math.max(expiresAt.getTime(), now.getTime() + LEASE_WATCH_MIN_SECONDS * 1000));
}
