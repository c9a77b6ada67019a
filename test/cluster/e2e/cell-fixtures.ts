// What the Cell and VirtualClusterPlan scenarios share: the outside world a Cell stands on
// (an OCM ManagedCluster with its lease, Nodes of a machine profile, the provider baseline),
// played by test/simulate/, and the objects a platform engineer applies (Cell,
// VirtualNodeClass, host namespace). Nothing here writes a KubeCell object's status or calls a
// hook: Metacontroller does that.
import { readFileSync } from 'node:fs';
import type { KubeCellStack } from '../kubecell-stack.js';
import {
  KubeClient,
  LeaseRenewer,
  installProviderBaseline,
  joinManagedCluster,
  profileNodeRegistrations,
  registerNode,
  type JoinOptions,
  type ProfileNodeOptions,
} from '../../simulate/index.js';
import { apply, eventually, getObject, kubectl, uniqueName } from './support.js';

export const CELL_NAMESPACE = 'kubecell-system';
export const GPU = 'nvidia.com/gpu';
/** The finalizer Metacontroller adds for the Cell controller's finalize hook. */
export const CELL_FINALIZER = 'metacontroller.io/compositecontroller-kubecell-cell';

export interface CellWorld {
  cell: string;
  managedCluster: string;
  profile: string;
  nodes: string[];
}

/** Names for one Cell and what it stands on, unique in the shared cluster. */
export function cellWorld(prefix: string): CellWorld {
  const cell = uniqueName(prefix);
  return { cell, managedCluster: `${cell}-mc`, profile: `${cell}-profile`, nodes: [] };
}

/** The Cell a platform engineer applies: one ManagedCluster, one machine profile with a GPU. */
export function cellManifest(world: CellWorld, devices = [{ name: 'gpu', resourceName: GPU }]) {
  return {
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'Cell',
    metadata: { name: world.cell, namespace: CELL_NAMESPACE },
    spec: {
      managedClusterRef: { name: world.managedCluster },
      machineProfile: { name: world.profile, devices },
    },
  };
}

/** A VirtualNodeClass (cluster-scoped) with the given quota. */
export function classManifest(name: string, workloadHard: Record<string, string>) {
  return {
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'VirtualNodeClass',
    metadata: { name },
    spec: { storageClassName: 'topolvm-provisioner', entitlement: { workloadHard } },
  };
}

/** A namespace labelled as a host namespace, as the platform prepares one for a tenant. */
export async function createHostNamespace(stack: KubeCellStack, name: string): Promise<void> {
  await kubectl(stack, ['create', 'namespace', name]);
  await kubectl(stack, ['label', 'namespace', name, 'kubecell.io/host-namespace=true']);
}

/** The provider baseline (k3k, CNI, TopoLVM), installed and ready, as the simulation plays it. */
export async function ensureProviderBaseline(client: KubeClient): Promise<void> {
  await installProviderBaseline(client);
}

/**
 * OCM joins the Cell's ManagedCluster (accepted, joined, available, lease renewed now) and the
 * kubelets of the profile register their Nodes (Ready; 32 cpu, 256Gi, 8 GPUs, 1 TiB of TopoLVM
 * free space each by default). Returns the ManagedCluster's UID.
 */
export async function standUpCellWorld(
  client: KubeClient,
  world: CellWorld,
  options: { join?: JoinOptions | false; nodes?: ProfileNodeOptions } = {},
): Promise<string | undefined> {
  const registrations = profileNodeRegistrations(world.profile, [GPU], {
    perProfile: 2,
    ...options.nodes,
  });
  for (const registration of registrations) await registerNode(client, registration);
  world.nodes = registrations.map((registration) => registration.name);
  if (options.join === false) return undefined;
  const managedCluster = await joinManagedCluster(client, world.managedCluster, options.join);
  return managedCluster.metadata.uid;
}

/** The OCM agent's lease loop for one cluster, renewing every `intervalMs`. */
export function startRenewing(
  client: KubeClient,
  managedCluster: string,
  leaseDurationSeconds: number,
  intervalMs: number,
): LeaseRenewer {
  const renewer = new LeaseRenewer(client, [managedCluster], { leaseDurationSeconds, intervalMs });
  renewer.start();
  return renewer;
}

export async function applyCell(stack: KubeCellStack, world: CellWorld): Promise<void> {
  await apply(stack, cellManifest(world), 'e2e-platform');
}

/**
 * How many times the hook server answered `<controller>/<hook>` for one parent, from its log
 * (one JSON line per call, naming the parent). Evidence that Metacontroller called again.
 */
export function hookCallsFor(
  stack: KubeCellStack,
  controller: string,
  hook: string,
  parent: { name: string; namespace?: string },
): number {
  let count = 0;
  for (const line of readFileSync(stack.hookServer.logFile, 'utf8').split('\n')) {
    if (!line.includes('"hook call"')) continue;
    let record: {
      controller?: string;
      hook?: string;
      status?: number;
      parent?: { name?: string; namespace?: string };
    };
    try {
      record = JSON.parse(line) as typeof record;
    } catch {
      continue;
    }
    if (
      record.controller === controller &&
      record.hook === hook &&
      record.status === 200 &&
      record.parent?.name === parent.name &&
      (parent.namespace === undefined || record.parent?.namespace === parent.namespace)
    ) {
      count += 1;
    }
  }
  return count;
}

/** Waits until the hook server has answered `<controller>/<hook>` for the parent `count` times. */
export function eventuallyHookCalls(
  stack: KubeCellStack,
  controller: string,
  hook: string,
  parent: { name: string; namespace?: string },
  count: number,
  timeoutMs = 90_000,
): Promise<number> {
  return eventually<number>(
    stack,
    `${count} ${controller}/${hook} calls for ${parent.namespace ?? ''}/${parent.name}`,
    async () => {
      const calls = hookCallsFor(stack, controller, hook, parent);
      return calls >= count ? { value: calls } : { notYet: `${calls} calls` };
    },
    timeoutMs,
  );
}

/** `kubectl get <resource> <name> [-o wide]` as a user reads it: header → value. */
export async function printedColumns(
  stack: KubeCellStack,
  resource: string,
  name: string,
  namespace: string,
  wide = false,
): Promise<Record<string, string>> {
  const text = await kubectl(stack, [
    'get',
    resource,
    name,
    '-n',
    namespace,
    ...(wide ? ['-o', 'wide'] : []),
  ]);
  const [header = '', row = ''] = text.trimEnd().split('\n');
  // Columns are left-aligned under their header: cut each row at the header's offsets.
  const starts = [...header.matchAll(/\S+/g)].map((match) => ({
    name: match[0],
    at: match.index,
  }));
  return Object.fromEntries(
    starts.map(({ name: column, at }, index) => [
      column,
      row.slice(at, starts[index + 1]?.at ?? row.length).trim(),
    ]),
  );
}

/** The Cell as `kubectl get cell -o json` shows it. */
export function getCell(stack: KubeCellStack, name: string) {
  return getObject(stack, 'cells.kubecell.io', name, CELL_NAMESPACE);
}
