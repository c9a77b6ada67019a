/**
 * A VirtualCluster on a `delivery: ManifestWork` Cell (placement.ts): kubecell-delivery carries
 * its children in its ManifestWork, and what Ready waits for comes from the work as OCM's work
 * agent reports it (work-feedback.ts): the NodePort fed back and the kubeconfig fed back sealed. The
 * hub renders the kubeconfig Secret alone; the quota is on the managed cluster, which the hub
 * does not see.
 */
import type { ResolvedPlacement, VirtualCluster } from '../generated/types/index.js';
import type { SealingKeys } from '../remote/sealing-keys.js';
import type { VirtualClusterObservation } from './observe.js';
import { childrenAt, type Placement } from './placement.js';
import { readWork, renderWorkChildren } from './work-feedback.js';
import {
  workChildrenAppliedCondition,
  workK3kReadyCondition,
  workKubeconfigPublishedCondition,
  workMissingForReady,
  workReadyMessage,
} from './work-conditions.js';
import type { RenderedChildren } from './render.js';

export function workPlacement(
  vc: VirtualCluster,
  resolved: ResolvedPlacement,
  observation: VirtualClusterObservation,
  sealingKeys: SealingKeys | undefined,
): Placement<RenderedChildren> {
  const workState = readWork(vc, resolved, observation, sealingKeys);
  // The quota is on the managed cluster, which the hub does not see.
  const children = childrenAt(resolved, workState.port, observation.children.secret, false);
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
