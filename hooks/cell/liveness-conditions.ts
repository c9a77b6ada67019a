/**
 * The conditions on the bound ManagedCluster's liveness (liveness.ts judged it): Joined,
 * Available (its own word, informational) and LeaseFresh (KubeCell's and OCM's hub's verdict).
 */
import type { Cell } from '../generated/types/index.js';
import { verdict, type ConditionVerdict } from '../status/conditions.js';
import { LEASE_GRACE_DURATIONS, type Liveness } from './liveness.js';
import {
  AVAILABLE_CONDITION,
  LEASE_UPDATE_STOPPED,
  MANAGED_CLUSTER_LEASE,
} from './observe-managed-cluster.js';
import { REASONS } from './reasons.js';

export function joinedCondition(cell: Cell, liveness: Liveness): ConditionVerdict {
  const name = cell.spec.managedClusterRef.name;
  if (liveness.status.joined) {
    return verdict(
      'Joined',
      true,
      REASONS.ManagedClusterJoined,
      `ManagedCluster ${name} is accepted and joined`,
    );
  }
  if (liveness.observed === 'absent') {
    return verdict(
      'Joined',
      false,
      REASONS.ManagedClusterNotFound,
      `ManagedCluster ${name} does not exist on the hub`,
    );
  }
  if (liveness.observed === 'notAccepted') {
    return verdict(
      'Joined',
      false,
      REASONS.ManagedClusterNotAccepted,
      `ManagedCluster ${name} is not accepted: set spec.hubAcceptsClient (clusteradm accept --clusters ${name})`,
    );
  }
  return verdict(
    'Joined',
    false,
    REASONS.ManagedClusterNotJoined,
    `ManagedCluster ${name} has not joined (condition ManagedClusterJoined is not True)`,
  );
}

/** Informational: liveness comes from LeaseFresh, not from the cluster's own word. */
export function availableCondition(liveness: Liveness): ConditionVerdict {
  return liveness.status.available
    ? verdict(
        'Available',
        true,
        REASONS.ManagedClusterAvailable,
        'the ManagedCluster reports itself available (informational: liveness comes from the lease, LeaseFresh)',
      )
    : verdict(
        'Available',
        false,
        REASONS.ManagedClusterUnavailable,
        'the ManagedCluster does not report ManagedClusterConditionAvailable=True',
      );
}

/** Whether the lease is renewed, as KubeCell and OCM's hub judge it (judgeLease in liveness.ts). */
export function leaseFreshCondition(liveness: Liveness): ConditionVerdict {
  const { name, leaseDurationSeconds } = liveness.status;
  const lease = `the Lease ${MANAGED_CLUSTER_LEASE} in namespace ${name}`;
  const threshold = `${LEASE_GRACE_DURATIONS} × leaseDurationSeconds (${LEASE_GRACE_DURATIONS * (leaseDurationSeconds ?? 0)} s)`;
  switch (liveness.lease) {
    case 'LeaseRenewed':
      return verdict(
        'LeaseFresh',
        true,
        REASONS.LeaseRenewed,
        `${lease} was renewed within ${threshold}`,
      );
    case 'LeaseStale':
      return verdict(
        'LeaseFresh',
        false,
        REASONS.LeaseStale,
        `${lease} was not renewed for ${threshold}, whatever ${AVAILABLE_CONDITION} says: the registration agent of ManagedCluster ${name} stopped renewing it, or cannot reach the hub`,
      );
    case 'LeaseUpdateStopped':
      return verdict(
        'LeaseFresh',
        false,
        REASONS.LeaseUpdateStopped,
        `OCM's hub set ${AVAILABLE_CONDITION} of ManagedCluster ${name} to Unknown with reason ${LEASE_UPDATE_STOPPED}: it found the lease not renewed (the stricter verdict wins)`,
      );
    case 'LeaseMissing':
      return verdict(
        'LeaseFresh',
        false,
        REASONS.LeaseMissing,
        liveness.observed === 'absent'
          ? `ManagedCluster ${name} does not exist on the hub: no lease to judge`
          : `${lease} does not exist or has no spec.renewTime: the registration agent has not renewed it since the join`,
      );
    default:
      return verdict(
        'LeaseFresh',
        'Unknown',
        REASONS.LeaseNotObserved,
        `Leases were not observed (not in the sync request): the lease of ManagedCluster ${name} cannot be judged`,
      );
  }
}
