// SIMULATED Cluster API provider installs: permissive stand-in CRDs for the Cluster API template
// and infrastructure kinds that the shared upstream CRDs lack, so that a GPUCellPool naming them
// (samples/gpucellpool-clusterapi.yaml) can be run at all. Cluster API's core Machine and the
// kubeadm bootstrap provider's KubeadmConfig are real upstream CRDs (test/cluster/kubecell.ts);
// KubeadmConfigTemplate (kubeadm bootstrap provider) and KubevirtMachineTemplate /
// KubevirtMachine (Cluster API Provider KubeVirt) are not among them.
//
// A stand-in is NOT the provider's CRD: any spec and status are accepted (no schema, no
// defaults, no validation). Each is labelled `kubecell.io/test-stand-in: permissive` and
// annotated with where it comes from, and is installed only where the CRD is missing (a real one
// is left alone). Used by `npm run local-up -- --simulate` (startSimulation's
// `clusterAPIStandInCrds`).
import type { KubeClient, KubeObject } from './kube-client.js';
import { ensureCrds, permissiveCrd } from './support.js';

export const CLUSTER_API_INSTALLER_FIELD_MANAGER = 'simulated-cluster-api-installer';

export interface StandInKind {
  group: string;
  version: string;
  kind: string;
  /** The resource name (lower-case plural). */
  plural: string;
  /** Who defines the real CRD. */
  provider: string;
}

/** The kinds samples/gpucellpool-clusterapi.yaml names (templates) or clones (per cell). */
export const CLUSTER_API_STAND_IN_KINDS: readonly StandInKind[] = [
  {
    group: 'bootstrap.cluster.x-k8s.io',
    version: 'v1beta2',
    kind: 'KubeadmConfigTemplate',
    plural: 'kubeadmconfigtemplates',
    provider: 'the Cluster API kubeadm bootstrap provider',
  },
  {
    group: 'infrastructure.cluster.x-k8s.io',
    version: 'v1alpha1',
    kind: 'KubevirtMachineTemplate',
    plural: 'kubevirtmachinetemplates',
    provider: 'Cluster API Provider KubeVirt',
  },
  {
    group: 'infrastructure.cluster.x-k8s.io',
    version: 'v1alpha1',
    kind: 'KubevirtMachine',
    plural: 'kubevirtmachines',
    provider: 'Cluster API Provider KubeVirt',
  },
];

/** A permissive stand-in for `kind`'s CRD. Pure. */
export function permissiveStandInCrd(kind: StandInKind): KubeObject {
  return permissiveCrd(
    { ...kind, scope: 'Namespaced' },
    `test/simulate/cluster-api-crds.ts: NOT the CRD of ${kind.provider}, a permissive stand-in`,
  );
}

/**
 * Installs a permissive stand-in for each of `kinds` whose CRD is missing, and waits until each
 * is Established. Returns the CRD names installed (empty when all were there). Idempotent.
 */
export async function ensureClusterAPIStandInCrds(
  client: KubeClient,
  kinds: readonly StandInKind[] = CLUSTER_API_STAND_IN_KINDS,
  options: { timeoutMs?: number } = {},
): Promise<string[]> {
  const crds = new Map(kinds.map((kind) => [`${kind.plural}.${kind.group}`, kind]));
  return ensureCrds(
    client,
    [...crds.keys()],
    (name) => permissiveStandInCrd(crds.get(name) as StandInKind),
    CLUSTER_API_INSTALLER_FIELD_MANAGER,
    options.timeoutMs,
  );
}
