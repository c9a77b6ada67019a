/** Builders for Cell tests: the objects Metacontroller would relate to a Cell, as JSON. */
import { API_VERSION } from '../api/kinds.js';
import type { Cell, CellStatus, VirtualCluster } from '../generated/types/index.js';
import { TYPE_KEYS, type Node, type Pod } from '../kube/objects.js';
import type {
  CompositeSyncRequest,
  KubernetesObject,
  ObjectMap,
} from '../metacontroller/protocol.js';
import { objectKey } from '../metacontroller/protocol.js';
import { MANIFEST_WORK_TYPE_KEY } from '../remote/manifest-work.js';
import { DEFAULT_CELL_CONFIG } from './config.js';
import { syncCell } from './sync.js';

export const NOW = new Date('2026-11-30T12:00:00Z');
export const PROFILE = 'a100';

export function cell(overrides: Partial<Cell['metadata']> = {}): Cell {
  return {
    apiVersion: API_VERSION,
    kind: 'Cell',
    metadata: {
      name: 'cell1',
      namespace: 'kubecell-system',
      uid: 'cell-uid-1',
      generation: 1,
      ...overrides,
    },
    spec: {
      managedClusterRef: { name: 'cluster1' },
      machineProfile: { name: PROFILE, devices: [{ name: 'gpu', resourceName: 'nvidia.com/gpu' }] },
    },
  };
}

/**
 * How the ManagedCluster's Available condition reads: `true`/`false` as its agent reports it
 * (True/Unknown), `leaseStale` as OCM's hub lease controller writes it once the lease is not
 * renewed for 5 × leaseDurationSeconds, `unreported` without the condition.
 */
export type AvailableFixture = boolean | 'leaseStale' | 'unreported';

function availableCondition(available: AvailableFixture) {
  if (available === 'unreported') return [];
  if (available === 'leaseStale') {
    return [
      {
        type: 'ManagedClusterConditionAvailable',
        status: 'Unknown',
        reason: 'ManagedClusterLeaseUpdateStopped',
        message: 'Registration agent stopped updating its lease.',
      },
    ];
  }
  return [{ type: 'ManagedClusterConditionAvailable', status: available ? 'True' : 'Unknown' }];
}

export function managedCluster(uid = 'mc-uid-1', available: AvailableFixture = true) {
  return {
    apiVersion: 'cluster.open-cluster-management.io/v1',
    kind: 'ManagedCluster',
    metadata: { name: 'cluster1', uid },
    spec: { hubAcceptsClient: true, leaseDurationSeconds: 60 },
    status: {
      conditions: [
        { type: 'HubAcceptedManagedCluster', status: 'True' },
        { type: 'ManagedClusterJoined', status: 'True' },
        ...availableCondition(available),
      ],
    },
  };
}

/** The Lease OCM's agent renews, renewed `secondsAgo` before NOW: the Cell's liveness signal. */
export function lease(secondsAgo: number) {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'managed-cluster-lease', namespace: 'cluster1' },
    spec: {
      renewTime: new Date(NOW.getTime() - secondsAgo * 1000).toISOString().replace('Z', '000Z'),
    },
  };
}

export interface NodeOptions {
  ready?: boolean;
  annotations?: Record<string, string>;
  profile?: string;
  /** The Node's InternalIP; none when absent. */
  address?: string;
  unschedulable?: boolean;
}

export function node(
  name: string,
  allocatable: Record<string, string>,
  options: NodeOptions = {},
): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubecell.io/machine-profile': options.profile ?? PROFILE,
        'kubernetes.io/hostname': name,
      },
      ...(options.annotations ? { annotations: options.annotations } : {}),
    },
    ...(options.unschedulable ? { spec: { unschedulable: true } } : {}),
    status: {
      capacity: allocatable,
      allocatable,
      conditions: [
        options.ready === false
          ? { type: 'Ready', status: 'False', reason: 'KubeletNotReady' }
          : { type: 'Ready', status: 'True', reason: 'KubeletReady' },
      ],
      ...(options.address ? { addresses: [{ type: 'InternalIP', address: options.address }] } : {}),
    },
  };
}

export function pod(
  name: string,
  namespace: string,
  nodeName: string | undefined,
  containers: Record<string, string>[],
  options: {
    phase?: string;
    init?: Record<string, string>[];
    overhead?: Record<string, string>;
  } = {},
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: {
      ...(nodeName ? { nodeName } : {}),
      containers: containers.map((requests, i) => ({ name: `c${i}`, resources: { requests } })),
      ...(options.init
        ? {
            initContainers: options.init.map((requests, i) => ({
              name: `i${i}`,
              resources: { requests },
            })),
          }
        : {}),
      ...(options.overhead ? { overhead: options.overhead } : {}),
    },
    status: { phase: options.phase ?? (nodeName ? 'Running' : 'Pending') },
  };
}

export function hostNamespace(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'kubecell.io/host-namespace': 'true' } },
    status: { phase: 'Active' },
  };
}

export function resolvedVirtualCluster(
  name: string,
  namespace: string,
  workloadHard: Record<string, string>,
): VirtualCluster {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualCluster',
    metadata: { name, namespace, labels: { 'kubecell.io/cell': 'cell1' } },
    spec: { cellRef: { name: 'cell1' }, classRef: { name: 'small' } },
    status: {
      resolved: {
        cell: {
          name: 'cell1',
          uid: 'cell-uid-1',
          managedClusterName: 'cluster1',
          machineProfile: { name: PROFILE },
        },
        class: {
          name: 'small',
          uid: 'class-uid',
          storageClassName: 'topolvm-provisioner',
          entitlement: { workloadHard },
        },
        hostNamespace: namespace,
        endpointAddress: '10.0.0.1',
        resolvedAt: '2026-11-30T00:00:00Z',
      },
    },
  } as VirtualCluster;
}

/** The provider baseline, all ready, under the default names. */
export function readyProvider(): KubernetesObject[] {
  const config = DEFAULT_CELL_CONFIG;
  const daemonSet = (where: { namespace: string; name: string }) => ({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: where,
    status: { desiredNumberScheduled: 2, numberReady: 2 },
  });
  return [
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: config.k3kNamespace },
      status: { phase: 'Active' },
    },
    ...config.k3kCRDs.map((name) => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name },
      status: { conditions: [{ type: 'Established', status: 'True' }] },
    })),
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: config.k3kController,
      spec: { template: { spec: { containers: [{ name: 'k3k', image: 'rancher/k3k:v1.1.0' }] } } },
      status: { availableReplicas: 1, conditions: [{ type: 'Available', status: 'True' }] },
    },
    daemonSet(config.cniDaemonSet),
    daemonSet(config.topolvmNodeDaemonSet),
  ] as KubernetesObject[];
}

const typeKeyOf = (object: KubernetesObject): string => {
  const entry = Object.values(TYPE_KEYS).find((key) => key.startsWith(`${object.kind}.`));
  if (!entry) throw new Error(`no type key for ${object.kind}`);
  return entry;
};

/** A related map as Metacontroller sends it: every requested group present, even when empty. */
export function relatedOf(objects: KubernetesObject[], omit: string[] = []): ObjectMap {
  const map: ObjectMap = {};
  const groups = [
    TYPE_KEYS.managedCluster,
    TYPE_KEYS.lease,
    TYPE_KEYS.node,
    TYPE_KEYS.pod,
    TYPE_KEYS.namespace,
    TYPE_KEYS.virtualCluster,
    TYPE_KEYS.service,
    TYPE_KEYS.persistentVolume,
    TYPE_KEYS.customResourceDefinition,
    TYPE_KEYS.deployment,
    TYPE_KEYS.daemonSet,
  ];
  for (const group of groups) if (!omit.includes(group)) map[group] = {};
  for (const object of objects) {
    const key = typeKeyOf(object);
    if (omit.includes(key)) continue;
    (map[key] ??= {})[objectKey(object)] = object;
  }
  return map;
}

export function syncRequest(
  parent: Cell,
  related: ObjectMap,
  finalizing = false,
): CompositeSyncRequest<Cell> {
  return { parent, children: {}, related, finalizing };
}

/** A Ready profile Node with 32 CPUs, 256Gi and 4 GPUs (plus `extra`). */
export function gpuNode(
  name: string,
  extra: Record<string, string> = {},
  options: NodeOptions = {},
) {
  return node(name, { cpu: '32', memory: '256Gi', 'nvidia.com/gpu': '4', ...extra }, options);
}

/** A joined, available ManagedCluster, two Ready GPU Nodes and a ready provider baseline. */
export function healthy(): KubernetesObject[] {
  return [managedCluster(), lease(10), gpuNode('n1'), gpuNode('n2'), ...readyProvider()];
}

/** The status the sync hook answers for `objects` (groups in `omit` not observed) at `now`. */
export function statusOf(
  parent: Cell,
  objects: KubernetesObject[],
  omit: string[] = [],
  now = NOW,
): CellStatus {
  return syncCell(syncRequest(parent, relatedOf(objects, omit)), DEFAULT_CELL_CONFIG, now)
    .status as CellStatus;
}

export function conditionOf(status: CellStatus, type: string) {
  return status.conditions?.find((condition) => condition.type === type);
}

/** The Cell bound to a remote cluster: delivery ManifestWork. */
export function remoteCell(): Cell {
  const remote = cell();
  remote.spec.delivery = 'ManifestWork';
  return remote;
}

/**
 * The kubecell-cell-agent ManifestWork as OCM's work agent reports it: the report ConfigMap of
 * profile a100 with its `report` feedback (none when `report` is undefined).
 */
export function agentWork(report: string | undefined, type = 'String'): KubernetesObject {
  const manifest = {
    resourceMeta: {
      ordinal: 3,
      group: '',
      version: 'v1',
      kind: 'ConfigMap',
      resource: 'configmaps',
      name: `kubecell-cell-report-${PROFILE}`,
      namespace: 'kubecell-system',
    },
    ...(report === undefined
      ? {}
      : {
          statusFeedback: {
            values: [
              {
                name: 'report',
                fieldValue: type === 'String' ? { type, string: report } : { type, integer: 1 },
              },
            ],
          },
        }),
    conditions: [{ type: 'Available', status: 'True', reason: 'ResourceAvailable' }],
  };
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: { name: 'kubecell-cell-agent', namespace: 'cluster1' },
    spec: { workload: { manifests: [] } },
    status: { resourceStatus: { manifests: [manifest] } },
  } as KubernetesObject;
}

/**
 * The related map of a ManifestWork Cell: the ManagedCluster, its Lease, VirtualClusters and
 * works.
 */
export function remoteRelatedOf(objects: KubernetesObject[], omit: string[] = []): ObjectMap {
  const map: ObjectMap = {};
  const groups = [
    TYPE_KEYS.managedCluster,
    TYPE_KEYS.lease,
    TYPE_KEYS.virtualCluster,
    MANIFEST_WORK_TYPE_KEY,
  ];
  for (const group of groups) if (!omit.includes(group)) map[group] = {};
  for (const object of objects) {
    const key = object.kind === 'ManifestWork' ? MANIFEST_WORK_TYPE_KEY : typeKeyOf(object);
    if (!omit.includes(key)) (map[key] ??= {})[objectKey(object)] = object;
  }
  return map;
}
