/**
 * A VirtualCluster on a `delivery: ManifestWork` Cell (placement.ts): kubecell-delivery carries
 * its children in its ManifestWork, and what Ready waits for comes from the work as OCM's work
 * agent reports it (work-feedback.ts, read in observe): the NodePort fed back and the kubeconfig
 * fed back sealed, from which the hub publishes the kubeconfig Secret. The quota is on the
 * managed cluster, which the hub does not see.
 */
import type { ResolvedPlacement, VirtualCluster } from '../generated/types/index.js';
import { sealedKubeconfigConfigMapName } from '../remote/contract.js';
import type { VirtualClusterObservation } from './observe.js';
import { childrenAt, type WorkPlacement, type WorkState } from './placement.js';
import { sameWork, workRef } from './work-ref.js';

export function workPlacement(
  vc: VirtualCluster,
  resolved: ResolvedPlacement,
  observation: Pick<VirtualClusterObservation, 'works' | 'children'>,
): WorkPlacement {
  const work = workState(vc, resolved, observation.works);
  const port = work.feedback?.port;
  const source = work.kubeconfig.state === 'unsealed' ? work.kubeconfig.kubeconfig : undefined;
  return {
    where: 'work',
    children: childrenAt(resolved, port, observation.children.secret, false),
    ...(source === undefined ? {} : { source }),
    work,
  };
}

/** The work in the resolved ManagedCluster's namespace, and what it fed back. */
function workState(
  vc: VirtualCluster,
  resolved: ResolvedPlacement,
  works: VirtualClusterObservation['works'],
): WorkState {
  const ref = workRef(resolved, vc.metadata.uid);
  const feedback = works?.find((work) => sameWork(work.ref, ref));
  return {
    ref,
    observed: works !== undefined,
    ...(feedback === undefined ? {} : { feedback }),
    sealedConfigMap: sealedKubeconfigConfigMapName(vc.metadata.name),
    kubeconfig: feedback?.kubeconfig ?? { state: 'absent' },
  };
}
