/**
 * Fixtures for the GPUCellPool tests: the JSON Metacontroller would send, and a small stand-in
 * for what Metacontroller and the kubelets do between two syncs (not loaded in production).
 */
import { API_VERSION } from '../api/kinds.js';
import type { GPUCellPool, GPUCellPoolStatus, GPUCellStatus } from '../generated/types/index.js';
import { TYPE_KEYS } from '../kube/objects.js';
import {
  childKey,
  objectKey,
  type CompositeSyncRequest,
  type CompositeSyncResponse,
  type KubernetesObject,
  type ObjectMap,
} from '../metacontroller/protocol.js';
import { DEFAULT_GPUCELLPOOL_CONFIG, type GPUCellPoolConfig } from './config.js';
import { API_VERSIONS } from './constants.js';
import type { MachineObject, NodeObject, PodObject, SecretObject } from './objects.js';
import { CHILD_TYPES } from './observe.js';
import { finalizeGPUCellPool, syncGPUCellPool } from './sync.js';

export const NOW = new Date('2026-11-30T12:00:00Z');
export const POOL_UID = '0b6f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b';
export const NAMESPACE = 'kubecell-cells';
export const CONSUMER_NAMESPACE = 'tenant-a';
export const CONFIG: GPUCellPoolConfig = { ...DEFAULT_GPUCELLPOOL_CONFIG };
export const TOKEN = 'abcdef.0123456789abcdef';

export function at(seconds: number): Date {
  return new Date(NOW.getTime() + seconds * 1000);
}

/** The KubeVirt pool of samples/35-gpucellpool-full.yaml (profile a100), with a fixed UID. */
export function kubeVirtPool(spec: Partial<GPUCellPool['spec']> = {}): GPUCellPool {
  return {
    apiVersion: API_VERSION,
    kind: 'GPUCellPool',
    metadata: {
      name: 'a100',
      uid: POOL_UID,
      generation: 1,
      labels: { 'kubecell.io/provisioner': 'kubevirt' },
    },
    spec: {
      replicas: 2,
      machineProfile: 'a100',
      namespace: NAMESPACE,
      provisioner: {
        type: 'KubeVirt',
        kubeVirt: {
          cpu: 8,
          memory: '64Gi',
          firmware: 'uefi',
          image: { containerDisk: 'registry.example/kubecell/cell:1.0' },
          networks: [{ name: 'storage', networkAttachmentDefinition: `${NAMESPACE}/storage-net` }],
        },
      },
      gpu: { resourceClaimTemplateName: 'a100-vfio' },
      bootstrap: { provider: 'Opaque', joinSecretRef: { name: 'cell-join' } },
      ...spec,
    },
  };
}

/** The Cluster API pool of samples/36-gpucellpool-clusterapi.yaml (profile a100, replicas 1), with a fixed UID. */
export function clusterApiPool(spec: Partial<GPUCellPool['spec']> = {}): GPUCellPool {
  return {
    apiVersion: API_VERSION,
    kind: 'GPUCellPool',
    metadata: {
      name: 'a100-capi',
      uid: POOL_UID,
      generation: 1,
      labels: { 'kubecell.io/provisioner': 'cluster-api' },
    },
    spec: {
      replicas: 1,
      machineProfile: 'a100',
      namespace: NAMESPACE,
      provisioner: {
        type: 'ClusterAPI',
        clusterAPI: {
          clusterName: 'host',
          bootstrapConfigTemplateRef: {
            apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta2',
            kind: 'KubeadmConfigTemplate',
            name: 'gpu-cell',
          },
          infrastructureTemplateRef: {
            apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
            kind: 'KubevirtMachineTemplate',
            name: 'a100-cell',
          },
          version: 'v1.31.2',
        },
      },
      gpu: { resourceClaimTemplateName: 'a100-vfio' },
      ...spec,
    },
  };
}

export function withAutoscaling(
  pool: GPUCellPool,
  autoscaling: NonNullable<GPUCellPool['spec']['autoscaling']>,
): GPUCellPool {
  return { ...pool, spec: { ...pool.spec, autoscaling } };
}

function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

export const JOIN_TEMPLATE = [
  '#cloud-config',
  'hostname: ${NODE_NAME}',
  'ssh_authorized_keys: ${SSH_AUTHORIZED_KEYS}',
  'write_files:',
  '  - path: /etc/kubecell/join.env',
  '    content: |',
  '      POOL=${POOL_NAME} CELL=${CELL_NAME} PROFILE=${MACHINE_PROFILE}',
  '      API_SERVER=${API_SERVER}',
  '      TOKEN=${JOIN_TOKEN}',
  '      CA_CERT_HASH=${CA_CERT_HASH}',
  '      NODE_SUBNET=${NODE_SUBNET}',
  '      NODE_LABELS=${NODE_LABELS}',
  '      LITERAL=$${HOME}',
  '',
].join('\n');

export function joinSecret(
  template = JOIN_TEMPLATE,
  values: Record<string, string | undefined> = {},
): SecretObject {
  const all: Record<string, string | undefined> = {
    token: TOKEN,
    caCertHash: 'sha256:0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0',
    apiServer: '10.0.0.10:6443',
    sshAuthorizedKeys: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKubeCellOps ops@example\n',
    nodeSubnet: '10.0.12.0/24',
    ...values,
  };
  const data: Record<string, string> = { 'user-data': base64(template) };
  for (const [key, value] of Object.entries(all))
    if (value !== undefined) data[key] = base64(value);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'cell-join', namespace: NAMESPACE },
    type: 'Opaque',
    data,
  };
}

export function claimTemplate(requestName = 'gpu'): KubernetesObject {
  return {
    apiVersion: API_VERSIONS.resource,
    kind: 'ResourceClaimTemplate',
    metadata: { name: 'a100-vfio', namespace: NAMESPACE },
    spec: {
      spec: {
        devices: {
          requests: [{ name: requestName, exactly: { deviceClassName: 'vfio.gpu.example.com' } }],
        },
      },
    },
  } as KubernetesObject;
}

export function namedClaim(name = 'a100-0', requestName = 'gpu'): KubernetesObject {
  return {
    apiVersion: API_VERSIONS.resource,
    kind: 'ResourceClaim',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      devices: {
        requests: [{ name: requestName, exactly: { deviceClassName: 'vfio.gpu.example.com' } }],
      },
    },
  } as KubernetesObject;
}

export function consumerNamespace(name = CONSUMER_NAMESPACE): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'kubecell.io/host-namespace': 'true' } },
  };
}

export function capiTemplates(): KubernetesObject[] {
  return [
    {
      apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta2',
      kind: 'KubeadmConfigTemplate',
      metadata: { name: 'gpu-cell', namespace: NAMESPACE },
      spec: {
        template: {
          metadata: { labels: { 'example.com/role': 'gpu' } },
          spec: {
            joinConfiguration: {
              nodeRegistration: {
                kubeletExtraArgs: [{ name: 'node-labels', value: 'kubecell.io/pool=a100-capi' }],
              },
            },
          },
        },
      },
    },
    {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
      kind: 'KubevirtMachineTemplate',
      metadata: { name: 'a100-cell', namespace: NAMESPACE },
      spec: { template: { spec: { virtualMachineTemplate: { spec: { runStrategy: 'Always' } } } } },
    },
  ] as unknown as KubernetesObject[];
}

export function node(
  name: string,
  systemUUID: string | undefined,
  options: { ready?: boolean; poolUid?: string; providerID?: string } = {},
): NodeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'controller-uid': options.poolUid ?? POOL_UID,
        'kubecell.io/pool': 'a100',
        'kubecell.io/machine-profile': 'a100',
      },
    },
    spec: options.providerID ? { providerID: options.providerID } : {},
    status: {
      conditions: [
        options.ready === false
          ? { type: 'Ready', status: 'False', reason: 'KubeletNotReady' }
          : { type: 'Ready', status: 'True', reason: 'KubeletReady' },
      ],
      ...(systemUUID !== undefined ? { nodeInfo: { systemUUID } } : {}),
    },
  };
}

export function gpuPod(
  name: string,
  options: {
    nodeName?: string;
    namespace?: string;
    phase?: string;
    nodeSelector?: Record<string, string>;
    unschedulable?: boolean;
    gpu?: string;
  } = {},
): PodObject {
  const unschedulable = options.unschedulable ?? options.nodeName === undefined;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: options.namespace ?? CONSUMER_NAMESPACE },
    spec: {
      ...(options.nodeName ? { nodeName: options.nodeName } : {}),
      nodeSelector: options.nodeSelector ?? { 'kubecell.io/machine-profile': 'a100' },
      containers: [
        { name: 'main', resources: { limits: { 'nvidia.com/gpu': options.gpu ?? '1' } } },
      ],
    },
    status: {
      phase: options.phase ?? (options.nodeName ? 'Running' : 'Pending'),
      ...(unschedulable && !options.nodeName
        ? {
            conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
          }
        : {}),
    },
  };
}

const RELATED_GROUPS = [
  TYPE_KEYS.secret,
  childKey(API_VERSIONS.resource, 'ResourceClaim'),
  childKey(API_VERSIONS.resource, 'ResourceClaimTemplate'),
  TYPE_KEYS.pod,
  TYPE_KEYS.namespace,
];

/** A related map as Metacontroller sends it: every requested group present, even when empty. */
export function relatedOf(
  pool: GPUCellPool,
  objects: readonly KubernetesObject[],
  omit: readonly string[] = [],
): ObjectMap {
  const map: ObjectMap = {};
  const groups = [...RELATED_GROUPS];
  const capi = pool.spec.provisioner.clusterAPI;
  if (capi) {
    for (const ref of [capi.bootstrapConfigTemplateRef, capi.infrastructureTemplateRef]) {
      if (!ref) continue;
      groups.push(childKey(ref.apiVersion, ref.kind));
      groups.push(childKey(ref.apiVersion, ref.kind.replace(/Template$/, '')));
    }
  }
  for (const group of groups) if (!omit.includes(group)) map[group] = {};
  for (const object of objects) {
    const key = childKey(object.apiVersion, object.kind);
    if (omit.includes(key)) continue;
    (map[key] ??= {})[objectKey(object)] = object;
  }
  return map;
}

/**
 * The child types of each GPUCellPool controller (metacontroller/gpucellpool/<p>/controller.yaml;
 * gpucellpool.test.ts checks them against the files). `both` is a single controller with both
 * machine kinds, as KubeCell shipped before the provisioners were split.
 */
export const CONTROLLER_CHILD_TYPES = {
  KubeVirt: [CHILD_TYPES.virtualMachine, CHILD_TYPES.secret, CHILD_TYPES.node],
  ClusterAPI: [CHILD_TYPES.machine, CHILD_TYPES.secret, CHILD_TYPES.node],
  both: Object.values(CHILD_TYPES),
} as const;
export type ControllerName = keyof typeof CONTROLLER_CHILD_TYPES;

/** A children map: every child group of the calling CompositeController present. */
export function childrenOf(
  objects: readonly KubernetesObject[],
  omit: readonly string[] = [],
  controller: ControllerName = 'both',
): ObjectMap {
  const map: ObjectMap = {};
  for (const group of CONTROLLER_CHILD_TYPES[controller]) {
    if (!omit.includes(group)) map[group] = {};
  }
  for (const object of objects) {
    const key = childKey(object.apiVersion, object.kind);
    if (omit.includes(key)) continue;
    // A controller is sent only the child types it declares.
    if (
      controller !== 'both' &&
      !(CONTROLLER_CHILD_TYPES[controller] as readonly string[]).includes(key)
    )
      continue;
    (map[key] ??= {})[objectKey(object)] = object;
  }
  return map;
}

export function syncRequest(
  parent: GPUCellPool,
  children: ObjectMap,
  related: ObjectMap,
  finalizing = false,
): CompositeSyncRequest<GPUCellPool> {
  return { parent, children, related, finalizing };
}

/** The uid a stand-in apiserver gives an object. */
function uidFor(object: KubernetesObject): string {
  return `uid-${object.kind.toLowerCase()}-${object.metadata.name}`;
}

/**
 * A stand-in for Metacontroller and the cluster around one pool: it keeps the children, applies
 * a sync's answer (creates and updates the desired children, deletes the observed ones left
 * out, writes the status) and lets a test play the kubelets and the tenants' pods.
 */
export class World {
  pool: GPUCellPool;
  children = new Map<string, KubernetesObject>();
  related: KubernetesObject[];
  pods: PodObject[] = [];
  last?: CompositeSyncResponse;
  /** Which GPUCellPool controller calls the hooks: by default the one of the pool's type. */
  controller: ControllerName;

  constructor(pool: GPUCellPool, related: KubernetesObject[], controller?: ControllerName) {
    this.pool = structuredClone(pool);
    this.related = related;
    this.controller = controller ?? pool.spec.provisioner.type;
  }

  get status(): GPUCellPoolStatus {
    return this.pool.status ?? {};
  }

  request(finalizing = false): CompositeSyncRequest<GPUCellPool> {
    return syncRequest(
      this.pool,
      childrenOf([...this.children.values()], [], this.controller),
      relatedOf(this.pool, [...this.related, ...this.pods]),
      finalizing,
    );
  }

  sync(now: Date, config: GPUCellPoolConfig = CONFIG): CompositeSyncResponse {
    const response = syncGPUCellPool(this.request(), config, now);
    this.apply(response);
    return response;
  }

  finalize(now: Date, config: GPUCellPoolConfig = CONFIG): CompositeSyncResponse {
    const response = finalizeGPUCellPool(this.request(true), config, now);
    this.apply(response);
    return response;
  }

  apply(response: CompositeSyncResponse): void {
    this.last = response;
    this.pool.status = structuredClone(response.status ?? {}) as GPUCellPoolStatus;
    const desired = new Map(response.children.map((child) => [this.key(child), child]));
    for (const [key, child] of [...this.children]) {
      if (!desired.has(key)) this.children.delete(key);
      void child;
    }
    for (const [key, child] of desired) {
      const existing = this.children.get(key);
      if (existing === undefined) {
        if (child.kind === 'Node') continue; // Nodes are registered by kubelets, never created.
        this.children.set(key, {
          ...structuredClone(child),
          metadata: { ...structuredClone(child.metadata), uid: uidFor(child) },
        });
      } else {
        // In place: the desired fields win, the rest (status, uid) stays.
        const merged = {
          ...structuredClone(existing),
          ...structuredClone(child),
        } as KubernetesObject & Record<string, unknown>;
        merged.metadata = { ...existing.metadata, ...child.metadata, uid: existing.metadata.uid };
        if (child.kind === 'Node') {
          const spec = (child as NodeObject).spec;
          merged['spec'] = { ...((existing as NodeObject).spec ?? {}), ...(spec ?? {}) };
          merged['status'] = (existing as NodeObject).status;
        }
        this.children.set(key, merged);
      }
    }
  }

  key(object: KubernetesObject): string {
    return `${childKey(object.apiVersion, object.kind)} ${objectKey(object)}`;
  }

  /** The kubelet of a cell's current machine registers its Node (Ready unless told otherwise). */
  join(cell: string, options: { ready?: boolean } = {}): NodeObject {
    const recorded = this.status.cells?.find((c) => c.name === cell);
    if (!recorded?.vm || !recorded.systemUUID) throw new Error(`cell ${cell} has no machine yet`);
    const joined = node(recorded.vm, recorded.systemUUID.toUpperCase(), options);
    this.children.set(this.key(joined), joined);
    return joined;
  }

  /** A Node appears with the pool's labels (e.g. left by an earlier incarnation). */
  addNode(joined: NodeObject): void {
    this.children.set(this.key(joined), joined);
  }

  /**
   * The kubelet (or a health monitor) sets a condition on a Node, replacing one of its type, with
   * lastTransitionTime `since`.
   */
  setNodeCondition(name: string, type: string, status: string, since: Date): void {
    const found = this.ofKind<NodeObject>('Node').find((n) => n.metadata.name === name);
    if (found === undefined) throw new Error(`no Node ${name}`);
    const others = (found.status?.conditions ?? []).filter((c) => c.type !== type);
    const condition = { type, status, lastTransitionTime: `${since.toISOString().slice(0, 19)}Z` };
    found.status = { ...found.status, conditions: [...others, condition] };
  }

  /** A machine (VirtualMachine or Cluster API Machine) by name, as observed. */
  machine(name: string): MachineObject {
    const found = [...this.children.values()].find(
      (child) =>
        (child.kind === 'VirtualMachine' || child.kind === 'Machine') &&
        child.metadata.name === name,
    ) as MachineObject | undefined;
    if (found === undefined) throw new Error(`no machine ${name}`);
    return found;
  }

  /** KubeVirt or Cluster API writes a machine's status. */
  setMachineStatus(name: string, status: MachineObject['status']): void {
    this.machine(name).status = status;
  }

  /** Someone deletes a child behind the pool's back. */
  remove(kind: string, name: string): void {
    for (const [key, child] of [...this.children]) {
      if (child.kind === kind && child.metadata.name === name) this.children.delete(key);
    }
  }

  ofKind<T extends KubernetesObject>(kind: string): T[] {
    return [...this.children.values()]
      .filter((child) => child.kind === kind)
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1)) as T[];
  }

  names(kind: string): string[] {
    return this.ofKind(kind).map((child) => child.metadata.name);
  }

  phases(): Record<string, string | undefined> {
    return Object.fromEntries((this.status.cells ?? []).map((cell) => [cell.name, cell.phase]));
  }

  condition(type: string) {
    return this.status.conditions?.find((condition) => condition.type === type);
  }
}

/** A pool whose cells all joined Ready at NOW + 10 s. */
export function joinedPool(
  pool: GPUCellPool = kubeVirtPool(),
  related: KubernetesObject[] = [joinSecret(), claimTemplate(), consumerNamespace()],
): World {
  const world = new World(pool, related);
  world.sync(NOW);
  world.sync(at(5));
  for (const cell of world.status.cells ?? []) world.join(cell.name);
  world.sync(at(10));
  return world;
}

/** A cell of the status, by name. */
export function cellOf(world: World, name: string): GPUCellStatus | undefined {
  return world.status.cells?.find((c) => c.name === name);
}
