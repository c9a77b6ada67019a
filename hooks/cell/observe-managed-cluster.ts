/**
 * The bound ManagedCluster and its Lease as the Cell reads them, narrowed once (observe.ts): the
 * few facts OCM's objects carry about the cluster's liveness, judged later (liveness.ts).
 */
import { conditionIsTrue, type Lease, type ManagedCluster } from '../kube/objects.js';

/** The ManagedCluster condition OCM's hub lease controller writes its verdict on. */
export const AVAILABLE_CONDITION = 'ManagedClusterConditionAvailable';
/** The reason that controller writes once the lease is not renewed for 5 × leaseDurationSeconds. */
export const LEASE_UPDATE_STOPPED = 'ManagedClusterLeaseUpdateStopped';
/** The Lease the registration agent renews, in the namespace named after the cluster. */
export const MANAGED_CLUSTER_LEASE = 'managed-cluster-lease';
/** OCM's default when spec.leaseDurationSeconds is unset or 0. */
export const DEFAULT_LEASE_DURATION_SECONDS = 60;
/** OCM's CRD declares spec.leaseDurationSeconds an int32. */
const INT32_MAX = 2_147_483_647;

export interface ObservedManagedCluster {
  uid?: string;
  /** spec.hubAcceptsClient: the hub accepted the cluster. */
  accepted: boolean;
  /** Accepted, and its condition ManagedClusterJoined is True. */
  joined: boolean;
  /** ManagedClusterConditionAvailable is True: the cluster's own word. */
  available: boolean;
  /**
   * OCM's hub lease controller found the lease not renewed: the (first) Available condition is
   * Unknown with reason ManagedClusterLeaseUpdateStopped.
   */
  leaseUpdateStopped: boolean;
}

/** What the Cell knows of the lease the registration agent renews. */
export interface ObservedLease {
  /** Whether Metacontroller delivered the Lease group at all (observed, even if empty). */
  observed: boolean;
  /** The Lease's spec.renewTime, when it is a MicroTime or Time. */
  renewTime?: Date;
  /** The ManagedCluster's spec.leaseDurationSeconds, or OCM's default without a usable one. */
  durationSeconds: number;
}

/** The ManagedCluster (when observed) and the lease it renews (`observed`: the Lease group). */
export function observeLiveness(
  cluster: ManagedCluster | undefined,
  lease: Lease | undefined,
  observed: boolean,
): { managedCluster?: ObservedManagedCluster; lease: ObservedLease } {
  return {
    ...(cluster ? { managedCluster: observeManagedCluster(cluster) } : {}),
    lease: observeLease(lease, observed, cluster),
  };
}

function observeManagedCluster(cluster: ManagedCluster): ObservedManagedCluster {
  const conditions = cluster.status?.conditions;
  const accepted = cluster.spec?.hubAcceptsClient === true;
  const available = conditions?.find((condition) => condition.type === AVAILABLE_CONDITION);
  return {
    uid: cluster.metadata.uid,
    accepted,
    joined: accepted && conditionIsTrue(conditions, 'ManagedClusterJoined'),
    available: conditionIsTrue(conditions, AVAILABLE_CONDITION),
    leaseUpdateStopped:
      available?.status === 'Unknown' && available.reason === LEASE_UPDATE_STOPPED,
  };
}

function observeLease(
  lease: Lease | undefined,
  observed: boolean,
  cluster: ManagedCluster | undefined,
): ObservedLease {
  const renewTime = parseTime(lease?.spec?.renewTime);
  const declared = cluster?.spec?.leaseDurationSeconds ?? 0;
  return {
    observed,
    ...(renewTime ? { renewTime } : {}),
    durationSeconds:
      Number.isInteger(declared) && declared > 0 && declared <= INT32_MAX
        ? declared
        : DEFAULT_LEASE_DURATION_SECONDS,
  };
}

/** A MicroTime or Time from outside the hook server's trust, as a Date, or undefined. */
function parseTime(value: string | undefined): Date | undefined {
  if (!value || value.length > 64) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/.test(value))
    return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : new Date(time);
}
