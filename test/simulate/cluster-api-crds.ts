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
import { KubeClient, resourcePath, type KubeObject } from './kube-client.js';
import { waitFor } from './support.js';

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

const CRD_API_VERSION = 'apiextensions.k8s.io/v1';

function crdPath(name: string): string {
  return resourcePath({ apiVersion: CRD_API_VERSION, resource: 'customresourcedefinitions', name });
}

/** A permissive, namespaced stand-in CRD for `kind` (pure). */
export function permissiveStandInCrd(kind: StandInKind): KubeObject {
  return {
    apiVersion: CRD_API_VERSION,
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${kind.plural}.${kind.group}`,
      labels: { 'kubecell.io/test-stand-in': 'permissive' },
      annotations: {
        'kubecell.io/simulated-by': `test/simulate/cluster-api-crds.ts: NOT the CRD of ${kind.provider}, a permissive stand-in`,
      },
    },
    spec: {
      group: kind.group,
      names: {
        kind: kind.kind,
        listKind: `${kind.kind}List`,
        plural: kind.plural,
        singular: kind.kind.toLowerCase(),
      },
      scope: 'Namespaced',
      versions: [
        {
          name: kind.version,
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          },
          subresources: { status: {} },
        },
      ],
    },
  };
}

function established(crd: KubeObject | undefined): boolean {
  const conditions = (crd?.status as { conditions?: { type: string; status: string }[] })
    ?.conditions;
  return conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
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
  const installed: string[] = [];
  for (const kind of kinds) {
    const crd = permissiveStandInCrd(kind);
    if (await client.find(crdPath(crd.metadata.name))) continue;
    await client.apply(crd, CLUSTER_API_INSTALLER_FIELD_MANAGER);
    installed.push(crd.metadata.name);
  }
  for (const name of installed) {
    await waitFor(
      `CRD ${name} to be Established`,
      async () => (established(await client.find(crdPath(name))) ? true : undefined),
      { timeoutMs: options.timeoutMs ?? 30_000 },
    );
  }
  return installed;
}
