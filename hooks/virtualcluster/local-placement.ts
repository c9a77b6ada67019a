/**
 * A VirtualCluster whose children Metacontroller applies on the hub (placement.ts): on a `Local`
 * Cell once resolved, and, before a snapshot exists, the observed children kept as they are.
 * What Ready waits for is observed directly: the Service's NodePort, the published Secret, the
 * ResourceQuota's `status.hard`; the kubeconfig Secret is published from k3k's.
 */
import type { ResolvedPlacement } from '../generated/types/index.js';
import type { VirtualClusterObservation } from './observe.js';
import { childrenAt, type HubPlacement } from './placement.js';

export function localPlacement(
  resolved: ResolvedPlacement | undefined,
  observation: Pick<VirtualClusterObservation, 'children' | 'k3kKubeconfig'>,
): HubPlacement {
  const { nodePort, secret, quota } = observation.children;
  const source = observation.k3kKubeconfig?.kubeconfig;
  return {
    where: 'hub',
    children: childrenAt(resolved, nodePort, secret, quota?.inForce ?? false),
    ...(source === undefined ? {} : { source }),
  };
}
