import type { CellManagedClusterStatus, CellStatus } from '../generated/types/index.js';
import { conditionIsTrue, type Lease, type ManagedCluster } from '../kube/objects.js';

/** Lets an operator accept a replaced ManagedCluster: its value is the new UID to record. */
export const ACCEPT_MANAGED_CLUSTER_UID_ANNOTATION = 'kubecell.io/accept-managed-cluster-uid';

/** OCM's default when a ManagedCluster leaves spec.leaseDurationSeconds unset. */
export const DEFAULT_LEASE_DURATION_SECONDS = 60;
/** A lease counts as fresh for this many lease durations after its last renewal. */
export const LEASE_GRACE_FACTOR = 5;

export interface Liveness {
  status: CellManagedClusterStatus;
  /** The bound cluster was replaced: another UID than the one first recorded. */
  replaced: boolean;
  /** How far the ManagedCluster got, for the Joined condition's reason. */
  observed: 'absent' | 'notAccepted' | 'notJoined' | 'joined';
  /** Seconds until a fresh lease turns stale, to schedule the next sync exactly then. */
  secondsUntilStale?: number;
}

function leaseExpiry(
  cluster: ManagedCluster | undefined,
  lease: Lease | undefined,
): number | undefined {
  const renewed = lease?.spec?.renewTime ? Date.parse(lease.spec.renewTime) : NaN;
  if (Number.isNaN(renewed)) return undefined;
  const duration = cluster?.spec?.leaseDurationSeconds || DEFAULT_LEASE_DURATION_SECONDS;
  return renewed + LEASE_GRACE_FACTOR * duration * 1000;
}

/**
 * Liveness of the bound ManagedCluster. Its own Available condition is reported but not
 * trusted: only a lease renewed recently enough makes it live. The UID recorded at first sight
 * is kept even while the cluster is absent, so a replacement is noticed whenever it appears.
 */
export function assessLiveness(
  clusterName: string,
  cluster: ManagedCluster | undefined,
  lease: Lease | undefined,
  previous: CellStatus | undefined,
  now: Date,
): Liveness {
  const recordedUid = previous?.managedCluster?.uid;
  const observedUid = cluster?.metadata.uid;
  const expiry = leaseExpiry(cluster, lease);
  const leaseFresh = expiry !== undefined && expiry > now.getTime();
  const joined =
    cluster !== undefined &&
    cluster.spec?.hubAcceptsClient === true &&
    conditionIsTrue(cluster.status?.conditions, 'ManagedClusterJoined');
  const status: CellManagedClusterStatus = {
    name: clusterName,
    ...((recordedUid ?? observedUid) ? { uid: recordedUid ?? observedUid } : {}),
    joined,
    available: conditionIsTrue(cluster?.status?.conditions, 'ManagedClusterConditionAvailable'),
    leaseFresh,
    ...(lease?.spec?.renewTime ? { leaseRenewTime: lease.spec.renewTime } : {}),
  };
  const observed = !cluster
    ? 'absent'
    : cluster.spec?.hubAcceptsClient !== true
      ? 'notAccepted'
      : joined
        ? 'joined'
        : 'notJoined';
  return {
    status,
    observed,
    replaced: recordedUid !== undefined && observedUid !== undefined && recordedUid !== observedUid,
    ...(leaseFresh && expiry !== undefined
      ? { secondsUntilStale: Math.max(1, Math.ceil((expiry - now.getTime()) / 1000)) }
      : {}),
  };
}

/** The next sync: at the latest after `resyncSeconds`, sooner when the lease turns stale first. */
export function resyncAfter(liveness: Liveness, resyncSeconds: number): number {
  return Math.min(resyncSeconds, liveness.secondsUntilStale ?? resyncSeconds);
}
