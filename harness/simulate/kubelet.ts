// SIMULATED kubelet: registers a Node and reports its status as a kubelet would, without running
// anything. What KubeCell reads from a Node, and so what this writes:
//
// - labels: `kubecell.io/machine-profile` (Cell Nodes, hooks/cell/customize.ts) and, for GPU
//   cells, `controller-uid`, `kubecell.io/pool` (hooks/gpucellpool/observe.ts), on top of the
//   kubelet's own `kubernetes.io/hostname|os|arch`;
// - annotations: TopoLVM's free capacity `capacity.topolvm.io/<device-class>` in bytes
//   (hooks/cell/storage.ts; TopoLVM's node agent writes it, the caller passes it here);
// - status.conditions: Ready (and the pressure conditions) with lastHeartbeatTime
//   (hooks/cell/inventory.ts, hooks/virtualcluster/resolve.ts, hooks/gpucellpool/nodes.ts);
// - status.capacity / allocatable, including extended resources such as nvidia.com/gpu
//   (hooks/cell/inventory.ts);
// - status.addresses: InternalIP 127.0.0.x (the VirtualCluster's endpoint address,
//   hooks/virtualcluster/resolve.ts) and Hostname;
// - status.nodeInfo.systemUUID (the GPU cell's firmware UUID, hooks/gpucellpool/nodes.ts);
// - spec.providerID when a cloud provider would set it (Cluster API matching).
//
// And of a pod bound to its Node (spec.nodeName), its status.phase: Running once started
// (hooks/cell/inventory.ts counts a Running pod's requests as the Node's activeRequested).
import { createHash } from 'node:crypto';
import { KubeClient, resourcePath, type KubeObject } from './kube-client.js';
import { formatTime, nameBasedUuid, setConditions, type Condition } from './support.js';

export const KUBELET_FIELD_MANAGER = 'simulated-kubelet';
export const NODE_LIFECYCLE_FIELD_MANAGER = 'simulated-node-lifecycle-controller';
export const DEFAULT_KUBELET_VERSION = 'v1.35.4';

export interface NodeRegistration {
  name: string;
  /** Labels besides the kubelet's own (`kubernetes.io/hostname`, `kubernetes.io/os`, ...). */
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** status.capacity; default a 32-core, 256 Gi machine (see DEFAULT_NODE_CAPACITY). */
  capacity?: Record<string, string>;
  /** status.allocatable; default the capacity. */
  allocatable?: Record<string, string>;
  /** status.nodeInfo.systemUUID; default a UUID derived from the name. */
  systemUUID?: string;
  /** The InternalIP; default 127.0.0.x derived from the name (see loopbackAddressFor). */
  address?: string;
  /** spec.providerID, as a cloud provider or Cluster API infrastructure provider sets it. */
  providerID?: string;
  /** Whether the kubelet reports Ready=True; default true. */
  ready?: boolean;
  kubeletVersion?: string;
}

export const DEFAULT_NODE_CAPACITY: Readonly<Record<string, string>> = Object.freeze({
  cpu: '32',
  memory: '256Gi',
  pods: '110',
  'ephemeral-storage': '500Gi',
});

export function nodePath(name: string): string {
  return resourcePath({ apiVersion: 'v1', resource: 'nodes', name });
}

/** A loopback address 127.0.0.2-251 derived from the Node name (nothing listens there). */
export function loopbackAddressFor(name: string): string {
  const digest = createHash('sha256').update(name).digest();
  return `127.0.0.${2 + ((digest[0] ?? 0) % 250)}`;
}

/** The Node object the kubelet registers (metadata and spec; status is written separately). */
export function renderNode(registration: NodeRegistration): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: registration.name,
      labels: {
        'kubernetes.io/hostname': registration.name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'beta.kubernetes.io/arch': 'amd64',
        ...registration.labels,
      },
      annotations: {
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        ...registration.annotations,
      },
    },
    ...(registration.providerID ? { spec: { providerID: registration.providerID } } : {}),
  };
}

export interface NodeStatus {
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
  conditions: Condition[];
  addresses: { type: string; address: string }[];
  daemonEndpoints: { kubeletEndpoint: { Port: number } };
  nodeInfo: Record<string, string>;
}

/** The four conditions a kubelet posts, Ready or not, stamped with a heartbeat at `now` (pure). */
export function nodeConditions(
  ready: boolean,
  now: Date,
  previous?: readonly Condition[],
): Condition[] {
  const heartbeat = formatTime(now);
  const conditions = setConditions(
    previous,
    [
      {
        type: 'MemoryPressure',
        status: 'False',
        reason: 'KubeletHasSufficientMemory',
        message: 'kubelet has sufficient memory available',
      },
      {
        type: 'DiskPressure',
        status: 'False',
        reason: 'KubeletHasNoDiskPressure',
        message: 'kubelet has no disk pressure',
      },
      {
        type: 'PIDPressure',
        status: 'False',
        reason: 'KubeletHasSufficientPID',
        message: 'kubelet has sufficient PID available',
      },
      ready
        ? {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            message: 'kubelet is posting ready status',
          }
        : {
            type: 'Ready',
            status: 'False',
            reason: 'KubeletNotReady',
            message:
              'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady',
          },
    ],
    now,
  );
  return conditions.map((condition) => ({ ...condition, lastHeartbeatTime: heartbeat }));
}

/** The status the kubelet reports for a registration at `now` (pure). */
export function renderNodeStatus(
  registration: NodeRegistration,
  now: Date,
  previous?: readonly Condition[],
): NodeStatus {
  const capacity = { ...(registration.capacity ?? DEFAULT_NODE_CAPACITY) };
  const machine = createHash('sha256').update(`machine-id/${registration.name}`).digest('hex');
  return {
    capacity,
    allocatable: { ...(registration.allocatable ?? capacity) },
    conditions: nodeConditions(registration.ready ?? true, now, previous),
    addresses: [
      {
        type: 'InternalIP',
        address: registration.address ?? loopbackAddressFor(registration.name),
      },
      { type: 'Hostname', address: registration.name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      machineID: machine.slice(0, 32),
      systemUUID: registration.systemUUID ?? nameBasedUuid(`node/${registration.name}`),
      bootID: nameBasedUuid(`boot/${registration.name}`),
      kernelVersion: '6.8.0-simulated',
      osImage: 'KubeCell simulated node',
      containerRuntimeVersion: 'containerd://2.1.0',
      kubeletVersion: registration.kubeletVersion ?? DEFAULT_KUBELET_VERSION,
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: 'amd64',
    },
  };
}

/**
 * Registers the Node (server-side apply of its labels, annotations and providerID, so it works
 * whether or not the Node exists) and posts its status. Returns the Node as stored.
 */
export async function registerNode(
  client: KubeClient,
  registration: NodeRegistration,
  options: { now?: Date; fieldManager?: string } = {},
): Promise<KubeObject> {
  const fieldManager = options.fieldManager ?? KUBELET_FIELD_MANAGER;
  const stored = await client.apply(renderNode(registration), fieldManager);
  const previous = (stored.status as { conditions?: Condition[] } | undefined)?.conditions;
  return client.patchStatus(
    nodePath(registration.name),
    { status: renderNodeStatus(registration, options.now ?? new Date(), previous) },
    fieldManager,
  );
}

/**
 * The kubelet's periodic status update: every condition gets a new lastHeartbeatTime; `ready`
 * (default: as before) sets the Ready condition, its lastTransitionTime changing only when its
 * status does.
 */
export async function heartbeat(
  client: KubeClient,
  name: string,
  options: { ready?: boolean; now?: Date } = {},
): Promise<KubeObject> {
  const path = nodePath(name);
  const node = await client.get(path);
  const previous = (node.status as { conditions?: Condition[] } | undefined)?.conditions ?? [];
  const wasReady = previous.some((c) => c.type === 'Ready' && c.status === 'True');
  const conditions = nodeConditions(options.ready ?? wasReady, options.now ?? new Date(), previous);
  return client.patchStatus(path, { status: { conditions } }, KUBELET_FIELD_MANAGER);
}

/**
 * What kube-controller-manager's node lifecycle controller writes when a kubelet stops posting
 * (it does not run in the test control plane): every kubelet condition turns Unknown.
 */
export async function markNodeUnreachable(
  client: KubeClient,
  name: string,
  now: Date = new Date(),
): Promise<KubeObject> {
  const path = nodePath(name);
  const node = await client.get(path);
  const previous = (node.status as { conditions?: Condition[] } | undefined)?.conditions ?? [];
  const conditions = setConditions(
    previous,
    previous.map((condition) => ({
      ...condition,
      status: 'Unknown' as const,
      reason: 'NodeStatusUnknown',
      message: 'Kubelet stopped posting node status.',
    })),
    now,
  );
  return client.patchStatus(path, { status: { conditions } }, NODE_LIFECYCLE_FIELD_MANAGER);
}

/** Deletes the Node (a decommissioned machine); false when it did not exist. */
export function deleteNode(client: KubeClient, name: string): Promise<boolean> {
  return client.delete(nodePath(name));
}

/**
 * The kubelet of a bound pod's Node has started its containers: status.phase Running, written on
 * the status subresource as a kubelet does. No kubelet runs in the test control plane, so a pod
 * created with spec.nodeName stays Pending until this is called.
 */
export function runPod(client: KubeClient, namespace: string, name: string): Promise<KubeObject> {
  return client.patchStatus(
    resourcePath({ apiVersion: 'v1', resource: 'pods', namespace, name }),
    { status: { phase: 'Running', startTime: formatTime(new Date()) } },
    KUBELET_FIELD_MANAGER,
  );
}
