// The KubeCell objects a platform team and a tenant apply, built once for the cluster tests, the
// benchmarks and local-up's remote sample: a Cell, a VirtualNodeClass, a VirtualCluster placed on
// them, and the host Namespace it lives in. Each builder writes only what its arguments ask for,
// so a Cell without `delivery` is a Local Cell by the schema's default.
import { API_VERSION } from '../hooks/api/kinds.js';
import { LABELS } from '../hooks/kube/labels.js';
import type { KubeObject } from './simulate/kube-client.js';

/** Where Cells live (the namespace the docs and samples use). */
export const CELL_NAMESPACE = 'kubecell-system';

/** The StorageClass TopoLVM provides, which the simulated provider baseline installs. */
export const TOPOLVM_STORAGE_CLASS = 'topolvm-provisioner';

/** A device a machine profile offers (spec.machineProfile.devices[]). */
export interface ProfileDevice {
  name: string;
  resourceName: string;
}

export interface CellOptions {
  /** The machine profile whose Nodes the Cell offers. */
  profile: string;
  /** The ManagedCluster it stands on; default the Cell's own name. */
  managedCluster?: string;
  devices?: readonly ProfileDevice[];
  /** Left out unless given (the schema's default is Local). */
  delivery?: 'Local' | 'ManifestWork';
  /** Default CELL_NAMESPACE. */
  namespace?: string;
}

export function cellManifest(name: string, options: CellOptions): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: 'Cell',
    metadata: { name, namespace: options.namespace ?? CELL_NAMESPACE },
    spec: {
      managedClusterRef: { name: options.managedCluster ?? name },
      machineProfile: {
        name: options.profile,
        ...(options.devices ? { devices: options.devices.map((device) => ({ ...device })) } : {}),
      },
      ...(options.delivery ? { delivery: options.delivery } : {}),
    },
  };
}

/** A VirtualNodeClass (cluster-scoped): the quota it grants and the StorageClass it names. */
export function virtualNodeClassManifest(
  name: string,
  workloadHard: Readonly<Record<string, string>>,
  storageClassName = TOPOLVM_STORAGE_CLASS,
): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualNodeClass',
    metadata: { name },
    spec: { entitlement: { workloadHard: { ...workloadHard } }, storageClassName },
  };
}

/** A VirtualCluster in `namespace` placed on a Cell with a VirtualNodeClass. */
export function virtualClusterManifest(
  namespace: string,
  name: string,
  on: { cell: string; klass: string },
): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualCluster',
    metadata: { name, namespace },
    spec: { cellRef: { name: on.cell }, classRef: { name: on.klass } },
  };
}

/** A Namespace labelled as a host namespace, as the platform prepares one for a tenant. */
export function hostNamespaceManifest(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { [LABELS.hostNamespace]: 'true' } },
  };
}
