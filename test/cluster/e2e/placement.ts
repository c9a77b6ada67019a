// What the VirtualCluster scenarios share: a Ready Cell made the way a platform gets one (the
// test plays OCM, the kubelets, the provider baseline and k3k with test/simulate/, KubeCell's
// Cell controller does the rest through Metacontroller), the objects a platform team and a
// tenant apply, and reading a VirtualCluster's children with kubectl. Nothing here writes a
// KubeCell object's status or calls a hook.
import type { KubeCellStack } from '../kubecell-stack.js';
import { resourcePath, startSimulation, type Simulation } from '../../simulate/index.js';
import {
  apply,
  eventuallyGone,
  eventuallyPhase,
  getObject,
  kubectl,
  type ObjectWithStatus,
} from './support.js';

export const CELL_NAMESPACE = 'kubecell-system';
export const VC = 'virtualclusters.kubecell.io';
export const VNCLASS = 'virtualnodeclasses.kubecell.io';
export const CELL = 'cells.kubecell.io';
export const K3K_CLUSTER = 'clusters.k3k.io';
export const GPU = 'nvidia.com/gpu';

export interface ReadyCell {
  stack: KubeCellStack;
  simulation: Simulation;
  /** The Cell's name; its ManagedCluster has the same name. */
  name: string;
  /** Its machine profile, unique to it, so its Nodes are its own. */
  profile: string;
  /** Deletes what this Cell brought (the Cell, its Nodes) and stops the simulation. */
  stop(): Promise<void>;
}

/**
 * Starts the simulated outside world (OCM, kubelets, provider baseline, k3k; no GPUCellPool
 * provisioners) and applies a Cell offering nvidia.com/gpu on a profile of its own; resolves
 * once the Cell is Ready.
 */
export async function startReadyCell(stack: KubeCellStack, name: string): Promise<ReadyCell> {
  const simulation = await startSimulation(stack.cluster.kubeconfigPath, {
    k3k: { intervalMs: 200 },
    kubevirt: false,
    clusterAPI: false,
  });
  const profile = `${name}-profile`;
  try {
    await apply(
      stack,
      {
        apiVersion: 'kubecell.io/v1alpha1',
        kind: 'Cell',
        metadata: { name, namespace: CELL_NAMESPACE },
        spec: {
          managedClusterRef: { name },
          machineProfile: { name: profile, devices: [{ name: 'gpu', resourceName: GPU }] },
        },
      },
      'e2e-platform',
    );
    await simulation.syncCells();
    await eventuallyPhase(stack, CELL, name, CELL_NAMESPACE, 'Ready', 120_000);
  } catch (error) {
    await simulation.stop();
    throw error;
  }
  return {
    stack,
    simulation,
    name,
    profile,
    async stop() {
      try {
        await kubectl(stack, ['delete', CELL, name, '-n', CELL_NAMESPACE, '--wait=false']);
        await eventuallyGone(stack, CELL, name, CELL_NAMESPACE, 120_000);
      } finally {
        await simulation.stop();
        await kubectl(stack, [
          'delete',
          'nodes',
          '-l',
          `kubecell.io/machine-profile=${profile}`,
          '--wait=false',
        ]);
      }
    },
  };
}

export function virtualNodeClass(
  name: string,
  workloadHard: Record<string, string> = {
    'requests.cpu': '4',
    'requests.memory': '16Gi',
    [`requests.${GPU}`]: '2',
    pods: '50',
  },
  storageClassName = 'topolvm-provisioner',
): unknown {
  return {
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'VirtualNodeClass',
    metadata: { name },
    spec: { entitlement: { workloadHard }, storageClassName },
  };
}

export function virtualCluster(
  namespace: string,
  name: string,
  cell: string,
  klass: string,
): unknown {
  return {
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'VirtualCluster',
    metadata: { name, namespace },
    spec: { cellRef: { name: cell }, classRef: { name: klass } },
  };
}

/** A namespace labelled as a host namespace by the platform. */
export async function createHostNamespace(stack: KubeCellStack, name: string): Promise<void> {
  await apply(
    stack,
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels: { 'kubecell.io/host-namespace': 'true' } },
    },
    'e2e-platform',
  );
}

/** The children docs/concepts.md names for a VirtualCluster, as `[resource, name]`. */
export function childRefs(name: string, uid: string): [string, string][] {
  return [
    [K3K_CLUSTER, name],
    ['resourcequota', `kubecell-${name}-quota`],
    ['limitrange', `kubecell-${name}-defaults`],
    ['service', `kubecell-${name}-api`],
    ['secret', `kubecell-${name}-${uid}-admin-kubeconfig`],
  ];
}

/** Each child as kubectl returns it (undefined when absent), in childRefs order. */
export async function readChildren(
  stack: KubeCellStack,
  namespace: string,
  name: string,
  uid: string,
): Promise<(ObjectWithStatus | undefined)[]> {
  return Promise.all(
    childRefs(name, uid).map(([resource, child]) => getObject(stack, resource, child, namespace)),
  );
}

/**
 * When the VirtualCluster was first seen Ready, polling every 50 ms over a kept-alive
 * connection (kubectl's start-up time would blur the measurement). Only for timing reports.
 */
export async function firstSeenReady(
  simulation: Simulation,
  namespace: string,
  name: string,
  timeoutMs: number,
): Promise<Date> {
  const path = resourcePath({
    apiVersion: 'kubecell.io/v1alpha1',
    resource: 'virtualclusters',
    namespace,
    name,
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const vc = await simulation.client.find(path);
    if ((vc?.['status'] as { phase?: string } | undefined)?.phase === 'Ready') return new Date();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`VirtualCluster ${namespace}/${name} not Ready within ${timeoutMs} ms`);
}

/** Decodes a Secret's `kubeconfig.yaml`. */
export function kubeconfigText(secret: ObjectWithStatus | undefined): string {
  return Buffer.from(secret?.data?.['kubeconfig.yaml'] ?? '', 'base64').toString('utf8');
}
