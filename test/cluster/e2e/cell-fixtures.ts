// What the Cell, VirtualClusterPlan and VirtualCluster scenarios share: the outside world a Cell
// stands on (an OCM ManagedCluster with its lease, Nodes of a machine profile, the provider
// baseline, k3k), played by harness/simulate/, applying the objects a platform team and a tenant
// apply (built by harness/manifests.ts: Cell, VirtualNodeClass, host namespace, VirtualCluster),
// and reading what KubeCell made with kubectl. A Ready Cell comes two ways: startReadyCell lets the simulation stand up everything a
// Cell needs (the VirtualCluster scenarios); cellWorld, standUpCellWorld and applyCell do it step
// by step, for scenarios that watch each step (the Cell and plan scenarios). Either way OCM's hub
// lease controller judges the ManagedCluster's lease as well as the Cell does (the Cell reads the
// Lease itself and counts the hub's Available=Unknown verdict too): startReadyCell's simulation
// runs one, and standUpCellWorld relies on the stack's (`ocmHub: true`, the shared cluster's
// setting). Nothing here writes a KubeCell object's status or calls a hook: Metacontroller does
// that.
import { readFileSync } from 'node:fs';
import { API_VERSION } from '../../../hooks/api/kinds.js';
import { LABELS } from '../../../hooks/kube/labels.js';
import type { KubeCellStack } from '../../../harness/cluster/kubecell-stack.js';
import {
  KubeClient,
  LeaseRenewer,
  installProviderBaseline,
  joinManagedCluster,
  profileNodeRegistrations,
  registerNode,
  resourcePath,
  startSimulation,
  type JoinOptions,
  type ProfileNodeOptions,
  type Simulation,
} from '../../../harness/simulate/index.js';
import { CELL_NAMESPACE, cellManifest, hostNamespaceManifest } from '../../../harness/manifests.js';
import { poll } from '../../../harness/poll.js';
import {
  apply,
  conditionOf,
  describeStatus,
  eventuallyGone,
  eventuallyPhase,
  getObject,
  kubectl,
  uniqueName,
  watching,
  type ObjectWithStatus,
} from './support.js';

export { CELL_NAMESPACE };
export const VC = 'virtualclusters.kubecell.io';
export const VNCLASS = 'virtualnodeclasses.kubecell.io';
export const CELL = 'cells.kubecell.io';
export const K3K_CLUSTER = 'clusters.k3k.io';
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

/** What the scenarios' machine profiles offer: one GPU resource. */
export const GPU_DEVICES = [{ name: 'gpu', resourceName: GPU }] as const;

/** The quota of the scenarios' VirtualNodeClasses unless one asks for another. */
export const GPU_CLASS_QUOTA = {
  'requests.cpu': '4',
  'requests.memory': '16Gi',
  [`requests.${GPU}`]: '2',
  pods: '50',
} as const;

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
 * Starts the simulated outside world (OCM's agent and hub, kubelets, provider baseline, k3k; no
 * GPUCellPool provisioners) and applies a Cell offering nvidia.com/gpu on a profile of its own;
 * resolves once the Cell is Ready. `leaseDurationSeconds` (default 60) is the ManagedCluster's:
 * the agent renews the lease that often and OCM's hub finds it stale 5 durations after the last
 * renewal.
 */
export async function startReadyCell(
  stack: KubeCellStack,
  name: string,
  options: { leaseDurationSeconds?: number } = {},
): Promise<ReadyCell> {
  const simulation = await startSimulation(stack.cluster.kubeconfigPath, {
    ocm: options.leaseDurationSeconds ? { leaseDurationSeconds: options.leaseDurationSeconds } : {},
    k3k: { intervalMs: 200 },
    kubevirt: false,
    clusterAPI: false,
  });
  const profile = `${name}-profile`;
  try {
    await applyCell(stack, { cell: name, managedCluster: name, profile, nodes: [] });
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
          `${LABELS.machineProfile}=${profile}`,
          '--wait=false',
        ]);
      }
    },
  };
}

/** A host namespace (harness/manifests.ts), applied as the platform prepares one for a tenant. */
export async function createHostNamespace(stack: KubeCellStack, name: string): Promise<void> {
  await apply(stack, hostNamespaceManifest(name), 'e2e-platform');
}

/** The provider baseline (k3k, CNI, TopoLVM), installed and ready, as the simulation plays it. */
export async function ensureProviderBaseline(client: KubeClient): Promise<void> {
  await installProviderBaseline(client);
}

/**
 * OCM joins the Cell's ManagedCluster (accepted, joined, available, lease renewed now) and the
 * kubelets of the profile register their Nodes (Ready; 32 cpu, 256Gi, 8 GPUs, 1 TiB of TopoLVM
 * free space each by default). Returns the ManagedCluster's UID. The lease is then judged by the
 * stack's OCM hub (startKubeCellStack `ocmHub`); startRenewing keeps it renewed.
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

/**
 * The Cell a platform engineer applies: one ManagedCluster, one machine profile with a GPU; with
 * `labels` for a selector to match, and `closed` to admit no tenant namespace (its
 * namespaceSelector selects only a namespace nobody has).
 */
export async function applyCell(
  stack: KubeCellStack,
  world: CellWorld,
  options: { labels?: Record<string, string>; closed?: boolean } = {},
): Promise<void> {
  const manifest = cellManifest(world.cell, {
    managedCluster: world.managedCluster,
    profile: world.profile,
    devices: GPU_DEVICES,
  });
  if (options.labels) manifest.metadata.labels = options.labels;
  if (options.closed) {
    (manifest.spec as Record<string, unknown>).namespaceSelector = {
      matchLabels: { 'kubernetes.io/metadata.name': 'someone-else' },
    };
  }
  await apply(stack, manifest, 'e2e-platform');
}

/** Deletes a Cell without waiting for its finalize hook (a test's cleanup); gone already is fine. */
export async function deleteCellNow(stack: KubeCellStack, name: string): Promise<void> {
  await stack.cluster.kubectl([
    'delete',
    'cell',
    name,
    '-n',
    CELL_NAMESPACE,
    '--ignore-not-found',
    '--wait=false',
  ]);
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
    apiVersion: API_VERSION,
    resource: 'virtualclusters',
    namespace,
    name,
  });
  return poll(
    `VirtualCluster ${namespace}/${name} to be Ready`,
    async () => {
      const phase = ((await simulation.client.find(path))?.['status'] as { phase?: string })?.phase;
      return phase === 'Ready' ? { value: new Date() } : { notYet: `phase ${phase ?? '(none)'}` };
    },
    { timeoutMs, intervalMs: 50 },
  );
}

/** Decodes a Secret's `kubeconfig.yaml`. */
export function kubeconfigText(secret: ObjectWithStatus | undefined): string {
  return Buffer.from(secret?.data?.['kubeconfig.yaml'] ?? '', 'base64').toString('utf8');
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
  return poll<number>(
    `${count} ${controller}/${hook} calls for ${parent.namespace ?? ''}/${parent.name}`,
    async () => {
      const calls = hookCallsFor(stack, controller, hook, parent);
      return calls >= count ? { value: calls } : { notYet: `${calls} calls` };
    },
    watching(stack, timeoutMs),
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
  return getObject(stack, CELL, name, CELL_NAMESPACE);
}

/** Waits until the Cell's condition `type` has `status`; returns the Cell. */
export function cellWithCondition(
  stack: KubeCellStack,
  name: string,
  type: string,
  status: 'True' | 'False',
) {
  return poll(
    `${name} ${type} ${status}`,
    async () => {
      const object = await getCell(stack, name);
      return conditionOf(object, type)?.status === status
        ? { value: object }
        : { notYet: describeStatus(object) };
    },
    watching(stack),
  );
}
