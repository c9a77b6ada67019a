/**
 * A VirtualCluster on a `delivery: ManifestWork` Cell (placement.ts): kubecell-delivery carries
 * its children in its ManifestWork, and what Ready waits for comes from the work as OCM's work
 * agent reports it (work-feedback.ts): the NodePort fed back and the kubeconfig fed back sealed. The
 * hub renders the kubeconfig Secret alone; the quota is on the managed cluster, which the hub
 * does not see.
 */
import type { ResolvedPlacement, VirtualCluster } from '../generated/types/index.js';
import type { SealingKeys } from '../remote/sealing-keys.js';
import { endpointUrl } from './kubeconfig.js';
import type { VirtualClusterObservation } from './observe.js';
import type { ChildrenState, Placement } from './placement.js';
import { readWork, renderWorkChildren } from './work-feedback.js';
import {
  workChildrenAppliedCondition,
  workK3kReadyCondition,
  workKubeconfigPublishedCondition,
  workMissingForReady,
  workReadyMessage,
} from './work-conditions.js';
import { secretPointsAt } from './kubeconfig-secret.js';
import type { RenderedChildren } from './render.js';

export function workPlacement(
  vc: VirtualCluster,
  resolved: ResolvedPlacement,
  observation: VirtualClusterObservation,
  sealingKeys: SealingKeys | undefined,
): Placement<RenderedChildren> {
  const workState = readWork(vc, resolved, observation, sealingKeys);
  const { port } = workState;
  const url = port === undefined ? undefined : endpointUrl(resolved.endpointAddress, port);
  const children: ChildrenState = {
    ...(port === undefined ? {} : { port }),
    ...(url === undefined ? {} : { url }),
    published: url !== undefined && secretPointsAt(observation.children.secret, url),
    quotaInPlace: false,
  };
  return {
    children,
    render: () => renderWorkChildren(vc, resolved, observation, workState),
    conditions(rendering) {
      const applied = workChildrenAppliedCondition(workState, rendering, observation);
      const k3k = workK3kReadyCondition(workState);
      const kubeconfig = workKubeconfigPublishedCondition(
        workState,
        rendering,
        children,
        observation,
      );
      const verdicts = { applied, k3k, kubeconfig };
      const missing = workMissingForReady(workState, verdicts, children, observation.names.service);
      return { ...verdicts, missing, readyMessage: workReadyMessage(workState, children.url) };
    },
  };
}
