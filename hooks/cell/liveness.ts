import type { CellManagedClusterStatus, CellStatus } from '../generated/types/index.js';
import { conditionIsTrue, type Lease, type ManagedCluster } from '../kube/objects.js';

/** Lets an operator accept a replaced ManagedCluster: its value is the new UID to record. */
export const ACCEPT_MANAGED_CLUSTER_UID_ANNOTATION = 'kubecell.io/accept-managed-cluster-uid';

/** The ManagedCluster condition OCM's hub lease controller writes its verdict on. */
export const AVAILABLE_CONDITION = 'ManagedClusterConditionAvailable';
/** The reason that controller writes once the lease is not renewed for 5 × leaseDurationSeconds. */
export const LEASE_UPDATE_STOPPED = 'ManagedClusterLeaseUpdateStopped';
/** The Lease the registration agent renews, in the namespace named after the cluster. */
export const MANAGED_CLUSTER_LEASE = 'managed-cluster-lease';
/** OCM's default when spec.leaseDurationSeconds is unset or 0. */
export const DEFAULT_LEASE_DURATION_SECONDS = 60;
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
  cluster?: ManagedCluster;
  lease?: Lease;
  /** Whether Metacontroller delivered the Lease group at all (observed, even if empty). */
  leaseObserved: boolean;
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
  const durationSeconds = leaseDurationSeconds(inputs.cluster);
  const available = inputs.cluster?.status?.conditions?.find(
    (condition) => condition.type === AVAILABLE_CONDITION,
  );
  const ocmStale = available?.status === 'Unknown' && available.reason === LEASE_UPDATE_STOPPED;
  const renewTime = parseTime(inputs.lease?.spec?.renewTime);
  const expiresAt =
    renewTime && new Date(renewTime.getTime() + LEASE_GRACE_DURATIONS * durationSeconds * 1000);
  const base = { durationSeconds, ...(renewTime ? { renewTime } : {}) };
  if (ocmStale) return { ...base, verdict: 'LeaseUpdateStopped' };
  if (!inputs.leaseObserved) return { ...base, verdict: 'LeaseNotObserved' };
  if (!expiresAt) return { ...base, verdict: 'LeaseMissing' };
  if (expiresAt.getTime() <= now.getTime()) return { ...base, verdict: 'LeaseStale' };
  const overdue =
    now.getTime() - (renewTime as Date).getTime() >=
    RENEWAL_OVERDUE_DURATIONS * durationSeconds * 1000;
  return { ...base, verdict: 'LeaseRenewed', expiresAt, overdue };
}

function leaseDurationSeconds(cluster: ManagedCluster | undefined): number {
  const declared = cluster?.spec?.leaseDurationSeconds;
  // OCM's CRD declares an int32; anything else did not come from the apiserver.
  return typeof declared === 'number' &&
    Number.isInteger(declared) &&
    declared > 0 &&
    declared <= 2_147_483_647
    ? declared
    : DEFAULT_LEASE_DURATION_SECONDS;
}

/** A MicroTime or Time from outside the hook server's trust, as a Date, or undefined. */
function parseTime(value: unknown): Date | undefined {
  if (typeof value !== 'string' || value.length > 64) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/.test(value))
    return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : new Date(time);
}

function observedState(cluster: ManagedCluster | undefined, joined: boolean): Liveness['observed'] {
  if (!cluster) return 'absent';
  if (cluster.spec?.hubAcceptsClient !== true) return 'notAccepted';
  return joined ? 'joined' : 'notJoined';
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
  const observedUid = cluster?.metadata.uid;
  const joined =
    cluster !== undefined &&
    cluster.spec?.hubAcceptsClient === true &&
    conditionIsTrue(cluster.status?.conditions, 'ManagedClusterJoined');
  const lease = judgeLease(inputs, now);
  const leaseFresh =
    lease.verdict === 'LeaseNotObserved' ? undefined : lease.verdict === 'LeaseRenewed';
  const status: CellManagedClusterStatus = {
    name: clusterName,
    ...((recordedUid ?? observedUid) ? { uid: recordedUid ?? observedUid } : {}),
    joined,
    available: conditionIsTrue(cluster?.status?.conditions, AVAILABLE_CONDITION),
    ...(leaseFresh === undefined ? {} : { leaseFresh }),
    // Written anew from the parsed time (milliseconds), never the Lease's own bytes.
    ...(lease.renewTime ? { leaseRenewTime: lease.renewTime.toISOString() } : {}),
    leaseDurationSeconds: lease.durationSeconds,
  };
  return {
    status,
    observed: observedState(cluster, joined),
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
