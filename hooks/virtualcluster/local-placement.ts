/**
 * A VirtualCluster whose children Metacontroller applies on the hub (placement.ts): on a `Local`
 * Cell once resolved, and, before a snapshot exists, the observed children kept as they are.
 * What Ready waits for is observed directly: the Service's NodePort, the published Secret, the
 * ResourceQuota's `status.hard`.
 */
import type { ResolvedPlacement, VirtualCluster } from '../generated/types/index.js';
import { isJsonObject } from '../json/json.js';
import { endpointUrl } from './kubeconfig.js';
import type { VirtualClusterObservation } from './observe.js';
import type { ChildrenState, Placement } from './placement.js';
import { secretPointsAt } from './kubeconfig-secret.js';
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

/** The NodePort, the endpoint URL, whether the kubeconfig points at it, the quota in force. */
function localChildren(
  resolved: ResolvedPlacement | undefined,
  observation: VirtualClusterObservation,
): ChildrenState {
  const port = resolved === undefined ? undefined : observation.children.nodePort;
  const url =
    resolved !== undefined && port !== undefined
      ? endpointUrl(resolved.endpointAddress, port)
      : undefined;
  const hard = observation.children.resourceQuota?.status?.hard;
  return {
    ...(port === undefined ? {} : { port }),
    ...(url === undefined ? {} : { url }),
    published: url !== undefined && secretPointsAt(observation.children.secret, url),
    quotaInPlace: isJsonObject(hard) && Object.keys(hard).length > 0,
  };
}
