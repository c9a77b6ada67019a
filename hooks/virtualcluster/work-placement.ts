/**
 * A VirtualCluster on a `delivery: ManifestWork` Cell (placement.ts): kubecell-delivery carries
 * its children in its ManifestWork, and what Ready waits for comes from the work as OCM's work
 * agent reports it (remote.ts): the NodePort fed back and the kubeconfig fed back sealed. The
 * hub renders the kubeconfig Secret alone; the quota is on the managed cluster, which the hub
 * does not see.
 */
import type { ResolvedPlacement, VirtualCluster } from '../generated/types/index.js';
import type { SealingKeys } from '../remote/sealing-keys.js';
import { endpointUrl } from './kubeconfig.js';
import type { VirtualClusterObservation } from './observe.js';
import type { ChildrenState, Placement } from './placement.js';
import { assessRemote, renderRemoteChildren } from './remote.js';
import {
  remoteChildrenAppliedCondition,
  remoteK3kReadyCondition,
  remoteKubeconfigPublishedCondition,
  remoteMissingForReady,
  remoteReadyMessage,
} from './remote-status.js';
import { secretPointsAt } from './kubeconfig-secret.js';
import type { RenderedChildren } from './render.js';

export function workPlacement(
  vc: VirtualCluster,
  resolved: ResolvedPlacement,
  observation: VirtualClusterObservation,
  sealingKeys: SealingKeys | undefined,
): Placement<RenderedChildren> {
  const remote = assessRemote(vc, resolved, observation, sealingKeys);
  const { port } = remote;
  const url = port === undefined ? undefined : endpointUrl(resolved.endpointAddress, port);
  const children: ChildrenState = {
    ...(port === undefined ? {} : { port }),
    ...(url === undefined ? {} : { url }),
    published: url !== undefined && secretPointsAt(observation.children.secret, url),
    quotaInPlace: false,
  };
  return {
    children,
    render: () => renderRemoteChildren(vc, resolved, observation, remote),
    conditions(rendering) {
      const applied = remoteChildrenAppliedCondition(remote, rendering, observation);
      const k3k = remoteK3kReadyCondition(remote);
      const kubeconfig = remoteKubeconfigPublishedCondition(
        remote,
        rendering,
        children,
        observation,
      );
      const verdicts = { applied, k3k, kubeconfig };
      const missing = remoteMissingForReady(remote, verdicts, children, observation.names.service);
      return { ...verdicts, missing, readyMessage: remoteReadyMessage(remote, children.url) };
    },
  };
}
