/**
 * Realistic Cell sync request bodies for the benchmark, built from the Cell controller's test
 * fixtures (hooks/cell/testing.ts) and filled out the way the apiserver stores objects: uids,
 * resourceVersions, owner references, container statuses, Node conditions, addresses, nodeInfo
 * and images. Everything is deterministic (no randomness), so two runs send the same bytes.
 *
 * Sizes: a Pod is about 1.2 kB of JSON and a Node about 4 kB, so a Cell sync body for 1,000
 * Nodes with 20 pods each is about 28 MB, the size DESIGN.md and the README quote. Nodes and
 * pods carry no managedFields (what Metacontroller sends has them): the scaling part measures
 * these same bodies. The other hooks' bodies are in bodies-*.ts.
 */
import type { Cell, CellStatus } from '../hooks/generated/types/index.js';
import {
  cell as cellFixture,
  hostNamespace,
  lease,
  managedCluster,
  node as cellNode,
  pod as cellPod,
  readyProvider,
  relatedOf,
  resolvedVirtualCluster,
} from '../hooks/cell/testing.js';
import { syncCell } from '../hooks/cell/sync.js';
import { DEFAULT_CELL_CONFIG } from '../hooks/cell/config.js';
import type { Node, Pod } from '../hooks/kube/objects.js';
import type { KubernetesObject } from '../hooks/metacontroller/protocol.js';

export type Json = Record<string, unknown>;

/** The `controller` field Metacontroller puts in every request: its own CompositeController. */
function controllerObject(name: string, resource: string): Json {
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: {
      name: `kubecell-${name}`,
      uid: uid(`controller-${name}`),
      resourceVersion: '1001',
      generation: 1,
      creationTimestamp: '2026-11-01T00:00:00Z',
    },
    spec: {
      generateSelector: true,
      parentResource: { apiVersion: 'kubecell.io/v1alpha1', resource },
      hooks: {
        sync: { webhook: { url: `http://kubecell-hooks.kubecell-system/hooks/${name}/sync` } },
      },
    },
  };
}

/** A stable UUID-shaped id from a name (not random: the bodies are reproducible). */
export function uid(seed: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < seed.length; i++) {
    h1 = Math.imul(h1 ^ seed.charCodeAt(i), 16777619) >>> 0;
    h2 = Math.imul(h2 ^ seed.charCodeAt(i), 2246822519) >>> 0;
  }
  const hex = (h1.toString(16).padStart(8, '0') + h2.toString(16).padStart(8, '0')).repeat(2);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const IMAGES = [
  'registry.example/kubecell/cell-agent:1.4.2',
  'registry.k8s.io/kube-proxy:v1.35.4',
  'ghcr.io/topolvm/topolvm-with-sidecar:0.36.1',
  'docker.io/calico/node:v3.29.1',
  'nvcr.io/nvidia/k8s-device-plugin:v0.17.0',
];

export function nodeName(index: number): string {
  return `gpu-node-${String(index).padStart(5, '0')}`;
}

function timestamp(base: Date, secondsAgo: number): string {
  return new Date(base.getTime() - secondsAgo * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A profile Node as the apiserver serves it: the Cell fixture plus what a kubelet reports. */
export function realisticNode(index: number, now: Date): Node {
  const name = nodeName(index);
  const allocatable = {
    cpu: '63500m',
    memory: '503Gi',
    pods: '110',
    'ephemeral-storage': '1800Gi',
    'hugepages-1Gi': '0',
    'hugepages-2Mi': '0',
    'nvidia.com/gpu': '8',
  };
  const node = cellNode(name, allocatable, {
    annotations: {
      'capacity.topolvm.io/ssd': String(3 * 1024 ** 4 - index * 1024 ** 3),
      'node.alpha.kubernetes.io/ttl': '0',
      'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      'csi.volume.kubernetes.io/nodeid': `{"topolvm.io":"${name}"}`,
    },
  }) as Node & Json;
  const metadata = node.metadata as Node['metadata'] & Json;
  Object.assign(metadata, {
    uid: uid(name),
    resourceVersion: String(1_000_000 + index),
    creationTimestamp: '2026-10-01T08:00:00Z',
  });
  Object.assign(metadata.labels ?? {}, {
    'beta.kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/os': 'linux',
    'node.kubernetes.io/instance-type': 'gpu-8xa100',
    'topology.kubernetes.io/zone': `zone-${index % 3}`,
    'topology.topolvm.io/node': name,
    'nvidia.com/gpu.product': 'NVIDIA-A100-SXM4-80GB',
  });
  (node as Json).spec = {
    podCIDR: `10.${64 + (index >> 8)}.${index & 255}.0/24`,
    providerID: `kubecell://${name}`,
  };
  const status = node.status as NonNullable<Node['status']> & Json;
  status.capacity = { ...allocatable, cpu: '64', memory: '512Gi' };
  const since = timestamp(now, 86_400);
  const condition = (type: string, value: string, reason: string, message: string) => ({
    type,
    status: value,
    lastHeartbeatTime: timestamp(now, 20),
    lastTransitionTime: since,
    reason,
    message,
  });
  status.conditions = [
    condition(
      'MemoryPressure',
      'False',
      'KubeletHasSufficientMemory',
      'kubelet has sufficient memory available',
    ),
    condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
    condition(
      'PIDPressure',
      'False',
      'KubeletHasSufficientPID',
      'kubelet has sufficient PID available',
    ),
    condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
  ];
  Object.assign(status, {
    addresses: [
      { type: 'InternalIP', address: `10.0.${index >> 8}.${index & 255}` },
      { type: 'Hostname', address: name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      machineID: uid(`machine-${name}`).replace(/-/g, ''),
      systemUUID: uid(`system-${name}`).toUpperCase(),
      bootID: uid(`boot-${name}`),
      kernelVersion: '6.8.0-49-generic',
      osImage: 'Ubuntu 24.04.1 LTS',
      containerRuntimeVersion: 'containerd://2.0.1',
      kubeletVersion: 'v1.35.4',
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: 'amd64',
    },
    images: IMAGES.map((image, i) => ({
      names: [`${image.split(':')[0]}@sha256:${uid(image).replace(/-/g, '').repeat(2)}`, image],
      sizeBytes: 40_000_000 + i * 13_000_000,
    })),
  });
  return node;
}

const WORKLOAD_REQUESTS: Record<string, string>[] = [
  { cpu: '4', memory: '32Gi', 'nvidia.com/gpu': '1' },
  { cpu: '500m', memory: '1Gi' },
  { cpu: '2', memory: '8Gi' },
  { cpu: '250m', memory: '512Mi' },
];

/**
 * Pod `slot` (0-19) of Node `index`: 3 system pods (CNI, TopoLVM, device plugin) and 17 tenant
 * pods in host namespaces; 1 in 50 is Pending (bound, not started) and 1 in 100 Succeeded.
 */
export function realisticPod(index: number, slot: number, now: Date, hostNamespaces: number): Pod {
  const node = nodeName(index);
  const system = slot < 3;
  const namespace = system
    ? 'kube-system'
    : `tenant-${String((index * 17 + slot) % hostNamespaces).padStart(3, '0')}`;
  const app = system
    ? (['calico-node', 'topolvm-node', 'nvidia-device-plugin'][slot] ?? 'system')
    : `train-${(index + slot) % 40}`;
  const name = `${app}-${String(index).padStart(5, '0')}-${slot}`;
  const serial = index * 20 + slot;
  const phase = serial % 100 === 7 ? 'Succeeded' : serial % 50 === 3 ? 'Pending' : 'Running';
  const requests = system
    ? { cpu: '100m', memory: '128Mi' }
    : (WORKLOAD_REQUESTS[serial % WORKLOAD_REQUESTS.length] ?? {});
  const pod = cellPod(name, namespace, node, [requests], { phase }) as Pod & Json;
  const owner = system ? 'DaemonSet' : 'ReplicaSet';
  Object.assign(pod.metadata, {
    uid: uid(`${namespace}/${name}`),
    resourceVersion: String(2_000_000 + serial),
    creationTimestamp: timestamp(now, 3600 + slot),
    labels: { app, ...(system ? {} : { 'pod-template-hash': '7f9c6d' }) },
    ownerReferences: [
      {
        apiVersion: 'apps/v1',
        kind: owner,
        name: app,
        uid: uid(`${namespace}/${app}`),
        controller: true,
        blockOwnerDeletion: true,
      },
    ],
  });
  const spec = pod.spec as NonNullable<Pod['spec']> & Json;
  const container = (spec.containers?.[0] ?? {}) as Json;
  Object.assign(container, { name: app, image: IMAGES[slot % IMAGES.length] });
  Object.assign(spec, {
    restartPolicy: 'Always',
    schedulerName: 'default-scheduler',
    serviceAccountName: 'default',
    priority: 0,
  });
  const started = timestamp(now, 3500);
  Object.assign(pod.status ?? {}, {
    ...(phase === 'Running'
      ? {
          podIP: `10.${64 + (index >> 8)}.${index & 255}.${slot + 2}`,
          hostIP: `10.0.${index >> 8}.${index & 255}`,
          startTime: started,
          qosClass: 'Burstable',
          conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: started }],
          containerStatuses: [
            {
              name: app,
              ready: true,
              started: true,
              restartCount: 0,
              image: IMAGES[slot % IMAGES.length],
              containerID: `containerd://${uid(name).replace(/-/g, '').repeat(2)}`,
              state: { running: { startedAt: started } },
            },
          ],
        }
      : { qosClass: 'Burstable' }),
  });
  return pod;
}

/** A NodePort Service somewhere in the cluster (the Cell counts them all). */
function nodePortService(i: number): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: `svc-${i}`,
      namespace: `tenant-${String(i % 50).padStart(3, '0')}`,
      uid: uid(`svc-${i}`),
    },
    spec: {
      type: 'NodePort',
      clusterIP: `10.43.${i >> 8}.${i & 255}`,
      ports: [{ name: 'https', port: 443, protocol: 'TCP', nodePort: 30000 + i }],
    },
  } as KubernetesObject;
}

/** A TopoLVM volume on Node `index`. */
function topolvmVolume(index: number): KubernetesObject {
  const node = nodeName(index);
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: `pvc-${uid(`pv-${index}`)}`, uid: uid(`pv-uid-${index}`) },
    spec: {
      capacity: { storage: '100Gi' },
      csi: { driver: 'topolvm.io', volumeHandle: uid(`lv-${index}`), fsType: 'xfs' },
      accessModes: ['ReadWriteOnce'],
      storageClassName: 'topolvm-provisioner',
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            {
              matchExpressions: [
                { key: 'topology.topolvm.io/node', operator: 'In', values: [node] },
              ],
            },
          ],
        },
      },
    },
    status: { phase: 'Bound' },
  } as KubernetesObject;
}

export interface CellWorld {
  nodes: number;
  podsPerNode: number;
  /** Host namespaces (and resolved VirtualClusters, one per namespace). */
  hostNamespaces: number;
}

/** The Cell sync request Metacontroller would send for a Cell of `nodes` Nodes at `now`. */
export function cellSyncBody(world: CellWorld, now: Date): Json {
  const objects: KubernetesObject[] = [managedCluster(), leaseAt(now), ...readyProvider()];
  for (let n = 0; n < world.hostNamespaces; n++) {
    const namespace = `tenant-${String(n).padStart(3, '0')}`;
    objects.push(hostNamespace(namespace) as KubernetesObject);
    objects.push(
      resolvedVirtualCluster(`vc-${n}`, namespace, {
        'requests.cpu': '8',
        'requests.memory': '64Gi',
        'requests.nvidia.com/gpu': '1',
      }),
    );
  }
  for (let i = 0; i < world.nodes; i++) {
    objects.push(realisticNode(i, now));
    for (let slot = 0; slot < world.podsPerNode; slot++)
      objects.push(realisticPod(i, slot, now, world.hostNamespaces));
    if (i % 10 === 0) objects.push(nodePortService(i / 10));
    objects.push(topolvmVolume(i));
  }
  // A few tenant pods waiting for a Node (the Cell counts them as pending demand).
  for (let p = 0; p < Math.max(1, world.nodes / 20); p++) {
    objects.push(
      cellPod(
        `waiting-${p}`,
        `tenant-${String(p % world.hostNamespaces).padStart(3, '0')}`,
        undefined,
        [{ cpu: '1', memory: '4Gi' }],
      ),
    );
  }
  const parent = cellFixture({
    uid: uid('cell1'),
    resourceVersion: '777',
    creationTimestamp: '2026-10-01T00:00:00Z',
  } as Partial<Cell['metadata']>);
  return {
    controller: controllerObject('cell', 'cells'),
    parent,
    children: {},
    related: relatedOf(objects),
    finalizing: false,
  };
}

function leaseAt(now: Date): KubernetesObject {
  const fresh = lease(0) as KubernetesObject & { spec: { renewTime: string } };
  fresh.spec.renewTime = new Date(now.getTime() - 10_000).toISOString().replace('Z', '000Z');
  return fresh;
}

/**
 * The benchmark's Cell with the status the Cell controller reports for `nodes` Nodes, as the
 * VirtualClusters, plans and the webhook see it.
 */
export function reportedCell(now: Date, nodes: number): Cell {
  const body = cellSyncBody({ nodes, podsPerNode: 20, hostNamespaces: 20 }, now);
  const request = body as unknown as Parameters<typeof syncCell>[0];
  const { status } = syncCell(request, DEFAULT_CELL_CONFIG, now);
  // The VirtualCluster and plan fixtures name the Cell's ManagedCluster "cell1".
  const cell = structuredClone(request.parent);
  cell.spec.managedClusterRef = { name: 'cell1' };
  cell.metadata.uid = 'cell1-uid';
  cell.status = status as CellStatus;
  return cell;
}
