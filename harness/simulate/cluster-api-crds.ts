// SIMULATED Cluster API provider installs: a permissive stand-in CRD for the one Cluster API kind
// of samples/36-gpucellpool-clusterapi.yaml that no pinned upstream CRD defines, so that the pool
// can be run at all: KubevirtMachine (Cluster API Provider KubeVirt), the kind the pool clones
// the sample's KubevirtMachineTemplate into. Every other kind the sample names or makes is a real
// upstream CRD pinned in test/cluster/upstream-inputs.json and installed by the stack
// (harness/cluster/kubecell.ts): Cluster API's Machine, the kubeadm bootstrap provider's
// KubeadmConfig and KubeadmConfigTemplate (v1.14.0), Cluster API Provider KubeVirt's
// KubevirtMachineTemplate (v0.11.2). Upstream publishes a KubevirtMachine CRD too
// (config/crd/bases/infrastructure.cluster.x-k8s.io_kubevirtmachines.yaml), but it is not among
// the shared upstream CRDs.
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

/**
 * The kinds samples/36-gpucellpool-clusterapi.yaml names (templates) or makes (per cell) that no
 * pinned upstream CRD defines.
 */
export const CLUSTER_API_STAND_IN_KINDS: readonly StandInKind[] = [
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
    `harness/simulate/cluster-api-crds.ts: NOT the CRD of ${kind.provider}, a permissive stand-in`,
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
