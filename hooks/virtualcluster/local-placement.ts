/**
 * A VirtualCluster whose children Metacontroller applies on the hub (placement.ts): on a `Local`
 * Cell once resolved, and, before a snapshot exists, the observed children kept as they are.
 * What Ready waits for is observed directly: the Service's NodePort, the published Secret, the
 * ResourceQuota's `status.hard`.
 */
import type { ResolvedPlacement, VirtualCluster } from '../generated/types/index.js';
import { isJsonObject } from '../json/json.js';
import type { VirtualClusterObservation } from './observe.js';
import { childrenAt, type ChildrenState, type Placement } from './placement.js';
import { renderVirtualCluster } from './render.js';
import {
  childrenAppliedCondition,
  k3kReadyCondition,
  kubeconfigPublishedCondition,
  missingForReady,
} from './status.js';

export function localPlacement(
  vc: VirtualCluster,
  resolved: ResolvedPlacement | undefined,
  observation: VirtualClusterObservation,
): Placement {
  const children = localChildren(resolved, observation);
  return {
    children,
    render: () => renderVirtualCluster(vc, resolved, observation),
    conditions(rendering) {
      const applied = childrenAppliedCondition(rendering, observation);
      const k3k = k3kReadyCondition(observation.children.cluster, resolved !== undefined);
      const kubeconfig = kubeconfigPublishedCondition(resolved, rendering, children, observation);
      const missing = missingForReady({ applied, k3k, kubeconfig }, children, observation.names);
      return { applied, k3k, kubeconfig, missing };
    },
  };
}

/** Once resolved, the NodePort the apiserver allocated; the quota in force when it reports one. */
function localChildren(
  resolved: ResolvedPlacement | undefined,
  observation: VirtualClusterObservation,
): ChildrenState {
  const { nodePort, secret, resourceQuota } = observation.children;
  const hard = resourceQuota?.status?.hard;
  return childrenAt(resolved, nodePort, secret, isJsonObject(hard) && Object.keys(hard).length > 0);
}
