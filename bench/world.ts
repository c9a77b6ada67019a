/**
 * The KubeCell objects the Metacontroller benchmarks apply as a user would: one Cell, one
 * VirtualNodeClass, and VirtualClusters on them. Each part passes its own names.
 */
import { resourcePath, type KubeClient, type KubeObject } from '../harness/simulate/index.js';
import { poll } from '../harness/poll.js';

export interface BenchWorldNames {
  cellNamespace: string;
  cell: string;
  profile: string;
  klass: string;
  entitlement: Record<string, string>;
  virtualCluster: string;
}

/**
 * The Cell; by default bound to the ManagedCluster of its own name with the default delivery
 * (Local: the hub itself); a remote Cell names its ManagedCluster and `delivery: ManifestWork`.
 */
export function cellObject(
  names: BenchWorldNames,
  remote?: { managedCluster: string; delivery: 'ManifestWork' },
): KubeObject {
  return {
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'Cell',
    metadata: { name: names.cell, namespace: names.cellNamespace },
    spec: {
      managedClusterRef: { name: remote?.managedCluster ?? names.cell },
      machineProfile: { name: names.profile },
      ...(remote ? { delivery: remote.delivery } : {}),
    },
  } as KubeObject;
}

export function classObject(names: BenchWorldNames): KubeObject {
  return {
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'VirtualNodeClass',
    metadata: { name: names.klass },
    spec: {
      entitlement: { workloadHard: names.entitlement },
      storageClassName: 'topolvm-provisioner',
    },
  } as KubeObject;
}

export function virtualClusterObject(names: BenchWorldNames, namespace: string): KubeObject {
  return {
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'VirtualCluster',
    metadata: { name: names.virtualCluster, namespace },
    spec: { cellRef: { name: names.cell }, classRef: { name: names.klass } },
  } as KubeObject;
}

/** A host namespace as the platform labels it. */
export function hostNamespaceObject(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'kubecell.io/host-namespace': 'true' } },
  } as KubeObject;
}

/** Waits until the Cell's phase is Ready; the last conditions seen go into the timeout error. */
export async function untilCellReady(
  client: KubeClient,
  names: BenchWorldNames,
  timeoutMs: number,
  intervalMs = 1000,
): Promise<void> {
  const cellPath = resourcePath({
    apiVersion: 'kubecell.io/v1alpha1',
    resource: 'cells',
    namespace: names.cellNamespace,
    name: names.cell,
  });
  await poll(
    `Cell ${names.cell} to be Ready`,
    async () => {
      const cell = (await client.find(cellPath)) as
        (KubeObject & { status?: { phase?: string; conditions?: unknown } }) | undefined;
      return cell?.status?.phase === 'Ready'
        ? { value: true }
        : { notYet: JSON.stringify(cell?.status?.conditions ?? null).slice(0, 600) };
    },
    { timeoutMs, intervalMs },
  );
}
