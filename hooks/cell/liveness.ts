import type { CellManagedClusterStatus, CellStatus } from '../generated/types/index.js';
import { conditionIsTrue, type ManagedCluster } from '../kube/objects.js';

/** Lets an operator accept a replaced ManagedCluster: its value is the new UID to record. */
export const ACCEPT_MANAGED_CLUSTER_UID_ANNOTATION = 'kubecell.io/accept-managed-cluster-uid';

/** The ManagedCluster condition OCM's hub lease controller judges the lease by. */
export const AVAILABLE_CONDITION = 'ManagedClusterConditionAvailable';
/** The reason that controller writes once the lease is not renewed for 5 × leaseDurationSeconds. */
export const LEASE_UPDATE_STOPPED = 'ManagedClusterLeaseUpdateStopped';

export interface Liveness {
  status: CellManagedClusterStatus;
  /** The bound cluster was replaced: another UID than the one first recorded. */
  replaced: boolean;
  /** How far the ManagedCluster got, for the Joined condition's reason. */
  observed: 'absent' | 'notAccepted' | 'notJoined' | 'joined';
}

/**
 * Whether the agent renews its lease, as OCM's hub judges it. The hub's lease controller
 * (open-cluster-management-io/ocm v1.3.1, pkg/registration/hub/lease/controller.go, `sync` and
 * `updateClusterStatus`) requeues each accepted cluster exactly when its lease
 * managed-cluster-lease would expire (renewTime + 5 × spec.leaseDurationSeconds, 5 × 60 s when
 * unset) and then sets ManagedClusterConditionAvailable to Unknown with reason
 * ManagedClusterLeaseUpdateStopped; the agent sets Available again once it renews. So the
 * ManagedCluster changes when, and only when, the judgement does: the Cell reads it, never the
 * Lease, and a renewal costs no Cell sync. Undefined while Available is not reported at all.
 */
export function leaseFreshness(cluster: ManagedCluster | undefined): boolean | undefined {
  const available = cluster?.status?.conditions?.find(
    (condition) => condition.type === AVAILABLE_CONDITION,
  );
  if (available === undefined) return undefined;
  return !(available.status === 'Unknown' && available.reason === LEASE_UPDATE_STOPPED);
}

function observedState(cluster: ManagedCluster | undefined, joined: boolean): Liveness['observed'] {
  if (!cluster) return 'absent';
  if (cluster.spec?.hubAcceptsClient !== true) return 'notAccepted';
  return joined ? 'joined' : 'notJoined';
}

/**
 * Liveness of the bound ManagedCluster: joined, Available as its agent reports it, and whether
 * OCM's hub finds its lease renewed (`leaseFreshness`). The UID recorded at first sight is kept
 * even while the cluster is absent, so a replacement is noticed whenever it appears.
 */
export function assessLiveness(
  clusterName: string,
  cluster: ManagedCluster | undefined,
  previous: CellStatus | undefined,
): Liveness {
  const recordedUid = previous?.managedCluster?.uid;
  const observedUid = cluster?.metadata.uid;
  const joined =
    cluster !== undefined &&
    cluster.spec?.hubAcceptsClient === true &&
    conditionIsTrue(cluster.status?.conditions, 'ManagedClusterJoined');
  const leaseFresh = leaseFreshness(cluster);
  const status: CellManagedClusterStatus = {
    name: clusterName,
    ...((recordedUid ?? observedUid) ? { uid: recordedUid ?? observedUid } : {}),
    joined,
    available: conditionIsTrue(cluster?.status?.conditions, AVAILABLE_CONDITION),
    ...(leaseFresh === undefined ? {} : { leaseFresh }),
  };
  return {
    status,
    observed: observedState(cluster, joined),
    replaced: recordedUid !== undefined && observedUid !== undefined && recordedUid !== observedUid,
  };
}
