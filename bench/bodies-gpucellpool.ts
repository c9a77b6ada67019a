/**
 * Steady-state GPUCellPool sync requests, one per GPUCellPool controller
 * (metacontroller/gpucellpool/kubevirt and cluster-api): the pools of samples/35-gpucellpool-full.yaml
 * (KubeVirt, 2 cells) and samples/36-gpucellpool-clusterapi.yaml (Cluster API, 1 cell) with every
 * cell Ready: its machine running (KubeVirt's VM status; Cluster API's Machine with its
 * providerID and nodeRef), its Node joined as a kubelet reports it (bodies.ts realisticNode), the
 * Cluster API clones related. Their customize answer relates every pod of the cluster (an empty
 * selector: the autoscaler looks for pending GPU pods anywhere), here the 200 pods of the
 * benchmark's 10-Node Cell plus one GPU pod on each cell; the request grows with the cluster.
 *
 * Built with the GPUCellPool tests' stand-in for Metacontroller (hooks/gpucellpool/testing.ts
 * World), at times ending at `now`.
 */
import type { GPUCellPool } from '../hooks/generated/types/index.js';
import type { NodeObject, PodObject } from '../hooks/gpucellpool/objects.js';
import {
  capiTemplates,
  claimTemplate,
  clusterApiPool,
  consumerNamespace,
  gpuPod,
  joinSecret,
  kubeVirtPool,
  node as poolNode,
  World,
} from '../hooks/gpucellpool/testing.js';
import type { KubernetesObject } from '../hooks/metacontroller/protocol.js';
import { realisticNode, realisticPod } from './bodies.js';
import { asStored, controllerOf, pick, type Json } from './stored.js';

export type Provisioner = 'KubeVirt' | 'ClusterAPI';

const CONTROLLER_FILES: Record<Provisioner, string> = {
  KubeVirt: 'gpucellpool/kubevirt/controller.yaml',
  ClusterAPI: 'gpucellpool/cluster-api/controller.yaml',
};

/** The cluster's other pods: those of the benchmark's 10-Node Cell. */
const CLUSTER_NODES = 10;

const secondsBefore = (now: Date, seconds: number) => new Date(now.getTime() - seconds * 1000);

/** A pool Node as its kubelet reports it: a full Node with the pool's labels and identity. */
function joinedNode(minimal: NodeObject, index: number, now: Date): NodeObject {
  const full = realisticNode(1000 + index, now) as unknown as NodeObject & {
    metadata: { labels: Record<string, string> };
    spec: Json;
    status: { nodeInfo: Json };
  };
  full.metadata.name = minimal.metadata.name;
  full.metadata.labels = { ...full.metadata.labels, ...minimal.metadata.labels };
  full.metadata.labels['kubernetes.io/hostname'] = minimal.metadata.name;
  if (minimal.spec?.providerID) full.spec.providerID = minimal.spec.providerID;
  const systemUUID = minimal.status?.nodeInfo?.systemUUID;
  if (systemUUID) full.status.nodeInfo.systemUUID = systemUUID;
  return full;
}

/** KubeVirt's status of a running VirtualMachine (kubevirt.io/v1 VirtualMachineStatus). */
function runningVmStatus(since: string): Json {
  return {
    created: true,
    ready: true,
    printableStatus: 'Running',
    runStrategy: 'Always',
    desiredGeneration: 1,
    observedGeneration: 1,
    conditions: [
      { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: since },
      { type: 'LiveMigratable', status: 'False', reason: 'HostDeviceNotLiveMigratable' },
    ],
    volumeSnapshotStatuses: [
      {
        name: 'rootdisk',
        enabled: false,
        reason: 'Snapshot is not supported for this volumeSource type [rootdisk]',
      },
      {
        name: 'cloudinitdisk',
        enabled: false,
        reason: 'Snapshot is not supported for this volumeSource type [cloudinitdisk]',
      },
    ],
  };
}

/** Machines running: KubeVirt VMs report Running; Cluster API Machines their Node. */
function runMachines(world: World, now: Date): void {
  const since = secondsBefore(now, 3000)
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z');
  for (const vm of world.ofKind<KubernetesObject & Json>('VirtualMachine')) {
    vm.status = runningVmStatus(since);
  }
  for (const machine of world.ofKind<KubernetesObject & { spec: Json; status?: Json }>('Machine')) {
    const name = machine.metadata.name;
    machine.spec.providerID = `kubevirt://${name}`;
    machine.status = {
      phase: 'Running',
      bootstrapReady: true,
      infrastructureReady: true,
      nodeRef: { apiVersion: 'v1', kind: 'Node', name },
    };
    world.addNode(poolNode(name, undefined, { providerID: `kubevirt://${name}` }));
  }
}

function clusterPods(world: World, now: Date): PodObject[] {
  const pods: PodObject[] = [];
  for (let n = 0; n < CLUSTER_NODES; n++) {
    for (let slot = 0; slot < 20; slot++) {
      pods.push(realisticPod(n, slot, now, 20) as unknown as PodObject);
    }
  }
  world.ofKind<NodeObject>('Node').forEach((node, i) => {
    pods.push(gpuPod(`train-gpu-${i}`, { nodeName: node.metadata.name, gpu: '8' }));
  });
  return pods;
}

/** The pool's children as the apiserver holds them (written by Metacontroller). */
function storedChildren(world: World, now: Date): void {
  const time = secondsBefore(now, 3600)
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z');
  world.ofKind<NodeObject>('Node').forEach((node, i) => {
    world.addNode(joinedNode(node, i, now));
  });
  for (const [key, child] of world.children) {
    if (child.kind === 'Node') continue;
    const object = child as KubernetesObject & Json;
    world.children.set(
      key,
      asStored(object, [
        {
          manager: 'metacontroller',
          operation: 'Update',
          fields: pick(object, ['metadata', 'spec', 'data', 'type']),
          time,
        },
      ]),
    );
  }
}

function poolOf(provisioner: Provisioner): { pool: GPUCellPool; related: KubernetesObject[] } {
  return provisioner === 'KubeVirt'
    ? { pool: kubeVirtPool(), related: [joinSecret(), claimTemplate(), consumerNamespace()] }
    : { pool: clusterApiPool(), related: [...capiTemplates(), consumerNamespace()] };
}

/** A pool whose every cell is Ready at `now`, after an hour of syncs. */
export function readyPool(provisioner: Provisioner, now: Date): World {
  const { pool, related } = poolOf(provisioner);
  const world = new World(pool, related);
  world.sync(secondsBefore(now, 3600));
  // The Cluster API clones the first sync created are related by the pool's label.
  world.related.push(
    ...[...world.children.values()].filter(
      (child) => !['Machine', 'Secret', 'Node', 'VirtualMachine'].includes(child.kind),
    ),
  );
  world.sync(secondsBefore(now, 3590));
  runMachines(world, now);
  for (const cell of world.status.cells ?? []) {
    if (cell.systemUUID) world.join(cell.name);
  }
  world.sync(secondsBefore(now, 3000));
  storedChildren(world, now);
  world.pods = clusterPods(world, now);
  world.sync(now);
  return world;
}

/** The steady-state gpucellpool/sync request of one controller. */
export function gpuCellPoolSyncBody(provisioner: Provisioner, now: Date): Json {
  const world = readyPool(provisioner, now);
  const ready = world.condition('Ready');
  if (ready?.status !== 'True') {
    throw new Error(
      `the benchmark ${provisioner} pool is not Ready: ${JSON.stringify(world.status).slice(0, 500)}`,
    );
  }
  return JSON.parse(
    JSON.stringify({ controller: controllerOf(CONTROLLER_FILES[provisioner]), ...world.request() }),
  ) as Json;
}
