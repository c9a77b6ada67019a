/** Fixtures for the VirtualCluster tests: the JSON Metacontroller would send (not loaded in production). */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { expect } from 'chai';
import { parse } from 'yaml';
import { cellLivenessRecord } from '../api/cell-liveness-record.js';
import { API_VERSION } from '../api/kinds.js';
import type {
  Cell,
  CellNodeAddress,
  CellStatus,
  VirtualCluster,
  VirtualClusterStatus,
  VirtualNodeClass,
} from '../generated/types/index.js';
import { isJsonObject } from '../json/json.js';
import { LABELS } from '../kube/labels.js';
import { TYPE_KEYS, type Namespace } from '../kube/objects.js';
import {
  toObjectMap,
  type Awaitable,
  type CompositeSyncRequest,
  type CompositeSyncResponse,
  type KubernetesObject,
  type ObjectMap,
} from '../metacontroller/protocol.js';
import { DEFAULT_VIRTUALCLUSTER_CONFIG, type VirtualClusterConfig } from './config.js';
import { CELL_AGENT_KEY_ANNOTATION } from '../remote/contract.js';
import { sealFor, type SealOrigin } from '../remote/sealing.js';
import { agentPublicKeyText, generateAgentKey } from '../remote/sealing-keys.js';
import { MANIFEST_WORK_TYPE_KEY } from '../remote/manifest-work.js';
import { CHILD_TYPES, type SecretObject } from './observe-children.js';
import { syncVirtualCluster } from './sync.js';
import { createVirtualClusterHooks } from './hooks.js';
import { validatedCompositeHooks } from '../controllers/request-validation.js';

export const NOW = new Date('2026-11-30T00:00:00Z');
export const CONFIG: VirtualClusterConfig = { ...DEFAULT_VIRTUALCLUSTER_CONFIG };
export const VC_UID = '5d0c6a1e-8f3b-4c2a-9e7d-1a2b3c4d5e6f';

/** The Node addresses cell() publishes: two Ready, schedulable profile Nodes. */
export const NODE_ADDRESSES: readonly CellNodeAddress[] = Object.freeze([
  { node: 'node-a', address: '10.0.12.7' },
  { node: 'node-b', address: '10.0.12.8' },
]);

/**
 * A Ready Cell with a fresh lease and inventory at NOW: 4 GPUs free, 2Ti of TopoLVM storage,
 * `addresses` (NODE_ADDRESSES by default) in status.nodeAddresses.
 */
export function cell(
  overrides: { uid?: string; profile?: string; addresses?: readonly CellNodeAddress[] } = {},
): Cell {
  return {
    apiVersion: API_VERSION,
    kind: 'Cell',
    metadata: {
      name: 'cell1',
      namespace: 'kubecell-system',
      uid: overrides.uid ?? 'cell1-uid',
      generation: 1,
    },
    spec: {
      managedClusterRef: { name: 'cell1' },
      machineProfile: {
        name: overrides.profile ?? 'a100',
        devices: [{ name: 'gpu', resourceName: 'nvidia.com/gpu' }],
      },
    },
    status: readyCellStatus(overrides.addresses ?? NODE_ADDRESSES),
  };
}

/** The inventory of cell(): 64 cpu, 512Gi memory and 8 GPUs, 6 of them available. */
function readyCellInventory(): NonNullable<CellStatus['inventory']> {
  const entry = (
    capacity: string,
    allocatable: string,
    requested: string,
    committed: string,
    availableEstimate: string,
  ) => ({ capacity, allocatable, requested, pending: '0', committed, availableEstimate });
  return {
    cpu: entry('64', '63500m', '12', '8', '51500m'),
    memory: entry('512Gi', '500Gi', '100Gi', '32Gi', '400Gi'),
    'nvidia.com/gpu': entry('8', '8', '2', '2', '6'),
  };
}

/** The status of cell(): Ready, lease fresh, inventory confirmed just before NOW. */
function readyCellStatus(addresses: readonly CellNodeAddress[]): CellStatus {
  return {
    observedGeneration: 1,
    phase: 'Ready',
    conditions: [
      {
        type: 'InventoryFresh',
        status: 'True',
        reason: 'InventoryObserved',
        message: 'observed',
        lastTransitionTime: '2026-11-29T20:00:00Z',
      },
      {
        type: 'Ready',
        status: 'True',
        reason: 'Ready',
        message: 'the Cell can host VirtualClusters',
        lastTransitionTime: '2026-11-29T20:00:00Z',
      },
    ],
    managedCluster: {
      name: 'cell1',
      uid: 'mc-uid',
      joined: true,
      available: true,
      leaseFresh: true,
    },
    nodeCount: { total: addresses.length, ready: addresses.length },
    nodeAddresses: addresses.map((entry) => ({ ...entry })),
    inventory: readyCellInventory(),
    storageInventory: {
      provisioner: 'topolvm.io',
      allocatedPV: '500Gi',
      freeCapacity: '2Ti',
      freeCapacityKnown: true,
      freeCapacitySource: 'TopoLVMNodeAnnotations',
      fresh: true,
    },
    nodePorts: { allocated: 10, fresh: true },
    resolvedBy: 1,
    observedAt: '2026-11-29T23:59:50Z',
  };
}

/** Class "small", as samples/21-virtualnodeclass-full.yaml. */
export function smallClass(uid = 'small-uid'): VirtualNodeClass {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualNodeClass',
    metadata: { name: 'small', uid, generation: 1 },
    spec: {
      entitlement: {
        workloadHard: {
          'requests.cpu': '4',
          'requests.memory': '16Gi',
          'requests.nvidia.com/gpu': '2',
          'requests.storage': '100Gi',
          persistentvolumeclaims: '10',
          pods: '50',
        },
      },
      storageClassName: 'topolvm-provisioner',
    },
  };
}

/** A CPU-only class that limits limits.* and Services too (for the LimitRange defaults). */
export function limitsClass(): VirtualNodeClass {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualNodeClass',
    metadata: { name: 'cpu-limits', uid: 'cpu-limits-uid', generation: 1 },
    spec: {
      entitlement: {
        workloadHard: {
          cpu: '2',
          'limits.cpu': '4',
          'limits.memory': '8Gi',
          memory: '4Gi',
          services: '5',
          'services.nodeports': '1',
          'topolvm-provisioner.storageclass.storage.k8s.io/requests.storage': '20Gi',
          'count/deployments.apps': '10',
        },
      },
      storageClassName: 'topolvm-provisioner',
    },
  };
}

export function hostNamespace(name = 'tenant-a', host = true): Namespace {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: host ? { [LABELS.hostNamespace]: 'true' } : {} },
  };
}

export function virtualCluster(
  overrides: {
    name?: string;
    namespace?: string;
    uid?: string;
    created?: string;
    generation?: number;
  } = {},
): VirtualCluster {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualCluster',
    metadata: {
      name: overrides.name ?? 'team-a',
      namespace: overrides.namespace ?? 'tenant-a',
      uid: overrides.uid ?? VC_UID,
      generation: overrides.generation ?? 1,
      creationTimestamp: overrides.created ?? '2026-11-29T12:00:00Z',
      labels: { [LABELS.cell]: 'cell1', [LABELS.class]: 'small' },
    },
    spec: { cellRef: { name: 'cell1' }, classRef: { name: 'small' } },
  };
}

/** k3k's admin kubeconfig, laid out as client-go's clientcmd.Write does. */
export const K3K_KUBECONFIG = `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJkekNDQVIyZ0F3SUJBZ0lCQURBS0JnZ3Foa2pPUFFRREFqQWpNU0V3SHdZRFZRUUREQmhyTTNNdGMyVnkKZG1WeUxXTmhRREUzTURBd01EQXdNREF3SGhjTk1qWXhNVE13TURBd01EQXdXaGNOTXpZeE1USTRNREF3TURBdwpXakFqTVNFd0h3WURWUVFEREJock0zTXRjMlZ5ZG1WeUxXTmhRREUzTURBd01EQXdNREF3V1RBVEJnY3Foa2pPClBRSUJCZ2dxaGtqT1BRTUJCd05DQUFTZmFrZQotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==
    server: https://10.43.12.34:443
  name: default
contexts:
- context:
    cluster: default
    user: default
  name: default
current-context: default
kind: Config
preferences: {}
users:
- name: default
  user:
    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJrVENDQVRlZ0F3SUJBZ0lJZmFrZQotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==
    client-key-data: LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1IY0NBUUVFSUZha2UKLS0tLS1FTkQgRUMgUFJJVkFURSBLRVktLS0tLQo=
`;

/**
 * What a published kubeconfig must read as (parsed): k3k's values with `server` in every
 * cluster entry, and nothing else (but the empty lists and defaults clientcmd writes).
 */
export function k3kKubeconfigAt(server: string, source: string = K3K_KUBECONFIG): unknown {
  const config = parse(source) as { clusters: { cluster: { server: string } }[] };
  for (const entry of config.clusters) entry.cluster.server = server;
  // What KubeCell writes when k3k leaves it out.
  return { apiVersion: 'v1', kind: 'Config', users: [], contexts: [], preferences: {}, ...config };
}

/**
 * Checks a published kubeconfig text: KubeCell's writing (printable ASCII, every value
 * double-quoted) of `source`'s values at `server`.
 */
export function expectPublishedKubeconfig(
  text: string,
  server: string,
  source: string = K3K_KUBECONFIG,
): void {
  expect(parse(text)).to.deep.equal(k3kKubeconfigAt(server, source));
  expect(text, 'printable ASCII').to.match(/^[\x20-\x7e\n]*$/);
  expect(text, 'only quoted values').to.not.match(/^\s*-?\s*[\w-]+: [^"{\s]/m);
}

export function k3kKubeconfigSecret(
  text: string = K3K_KUBECONFIG,
  namespace = 'tenant-a',
  cluster = 'team-a',
): SecretObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `k3k-${cluster}-kubeconfig`, namespace, uid: 'k3k-secret-uid' },
    type: 'Opaque',
    data: { 'kubeconfig.yaml': Buffer.from(text, 'utf8').toString('base64') },
  };
}

/** Every related group the customize rules produce, present (possibly empty). */
const RELATED_GROUPS = [
  TYPE_KEYS.cell,
  TYPE_KEYS.configMap,
  TYPE_KEYS.virtualNodeClass,
  TYPE_KEYS.virtualCluster,
  TYPE_KEYS.secret,
  TYPE_KEYS.namespace,
  MANIFEST_WORK_TYPE_KEY,
];
const CHILD_GROUPS = Object.values(CHILD_TYPES);

function withGroups(objects: readonly KubernetesObject[], groups: readonly string[]): ObjectMap {
  const map = toObjectMap(objects);
  for (const type of groups) map[type] ??= {};
  return map;
}

/** The related objects of an accepted placement: Cell (two Node addresses), class, Namespace. */
export function acceptedRelated(): KubernetesObject[] {
  return [cell(), smallClass(), hostNamespace()];
}

export function syncRequest(
  parent: VirtualCluster,
  related: readonly KubernetesObject[] = acceptedRelated(),
  children: readonly KubernetesObject[] = [],
  finalizing = false,
): CompositeSyncRequest<VirtualCluster> {
  return {
    parent,
    related: withGroups([...related, ...livenessRecords(related)], RELATED_GROUPS),
    children: withGroups(children, CHILD_GROUPS),
    finalizing,
  };
}

/**
 * The liveness record the kubecell-cell controller writes beside each Cell that has a status (its
 * child, hooks/api/cell-liveness-record.ts), unless the test gives one of its own: a resolved
 * VirtualCluster reads its Cell's liveness there.
 */
function livenessRecords(related: readonly KubernetesObject[]): KubernetesObject[] {
  const given = new Set(
    related.filter((object) => object.kind === 'ConfigMap').map((object) => object.metadata.name),
  );
  return related
    .filter(
      (object): object is Cell => object.kind === 'Cell' && isJsonObject((object as Cell).status),
    )
    .map((cell) => cellLivenessRecord(cell, cell.status ?? {}) as unknown as KubernetesObject)
    .filter((record) => !given.has(record.metadata.name));
}

/**
 * What the apiserver and Metacontroller would make of a desired child: server-side metadata,
 * the controller-uid label, and for a Service an allocated NodePort.
 */
export function asObserved(
  desired: KubernetesObject,
  options: { nodePort?: number; uid?: string } = {},
): KubernetesObject {
  const observed = structuredClone(desired) as KubernetesObject & Record<string, unknown>;
  observed.metadata = {
    ...observed.metadata,
    uid: options.uid ?? `${desired.kind.toLowerCase()}-uid`,
    resourceVersion: '42',
    creationTimestamp: '2026-11-30T00:00:01Z',
    labels: { ...observed.metadata.labels, 'controller-uid': VC_UID },
    annotations: {
      'metacontroller.k8s.io/last-applied-configuration': JSON.stringify(desired),
    },
    ownerReferences: [
      {
        apiVersion: API_VERSION,
        kind: 'VirtualCluster',
        name: 'team-a',
        uid: VC_UID,
        controller: true,
        blockOwnerDeletion: true,
      },
    ],
  };
  if (desired.kind === 'Service') {
    const spec = observed['spec'] as { ports: { nodePort?: number }[]; clusterIP?: string };
    spec.clusterIP = '10.43.100.10';
    if (options.nodePort !== undefined) {
      for (const port of spec.ports) port.nodePort = options.nodePort;
    }
  }
  return observed;
}

/** A copy of `vc` carrying `status`, as the next sync would receive it. */
export function withStatus(vc: VirtualCluster, status: unknown): VirtualCluster {
  return { ...structuredClone(vc), status: structuredClone(status) as VirtualCluster['status'] };
}

// --- one sync, and what it answered ---

export const LATER = new Date('2026-11-30T01:00:00Z');

/**
 * The sync hook as the hook server runs it, behind the validation layer: a request it refuses
 * throws InvalidHookInputError (answered 400, naming the field) and reaches no handler.
 */
export function validatedSync(
  request: CompositeSyncRequest<VirtualCluster>,
  now = NOW,
): Awaitable<CompositeSyncResponse> {
  const hooks = validatedCompositeHooks(
    createVirtualClusterHooks({ config: CONFIG, clock: () => now }),
    {
      controller: 'kubecell-virtualcluster CompositeController',
      apiVersion: API_VERSION,
      kind: 'VirtualCluster',
    },
  );
  return hooks.sync(request);
}

/** One sync of `vc` with the accepted related objects (by default), CONFIG and NOW. */
export function runSync(
  vc: VirtualCluster,
  related: KubernetesObject[] = acceptedRelated(),
  children: KubernetesObject[] = [],
  now = NOW,
): CompositeSyncResponse {
  return syncVirtualCluster(syncRequest(vc, related, children), CONFIG, now);
}

export function statusOf(response: CompositeSyncResponse): VirtualClusterStatus {
  return response.status as VirtualClusterStatus;
}

export function condition(response: CompositeSyncResponse, type: string) {
  return statusOf(response).conditions?.find((c) => c.type === type);
}

export function byKind(children: KubernetesObject[], kind: string) {
  return children.find((child) => child.kind === kind);
}

/** A resolved VirtualCluster and the children Metacontroller created for it. */
export function resolvedWorld(options: { nodePort?: number } = {}) {
  const vc = virtualCluster();
  const first = runSync(vc);
  const resolvedVc = withStatus(vc, first.status);
  const children = first.children.map((child) =>
    asObserved(child, child.kind === 'Service' ? { nodePort: options.nodePort ?? 31234 } : {}),
  );
  return { vc: resolvedVc, first, children };
}

// --- kubeconfigs for the allowlist tests ---

/** Planted in kubeconfigs: it must never come back in a status, a problem or a log line. */
export const MARKER = 'KUBECONFIGMARKER7f3c';

/**
 * K3K_KUBECONFIG with `lines` added at the end of `users[0].user`, of `clusters[0].cluster`, or
 * of the document (`top`), indented for the first two.
 */
export function withFields(where: 'user' | 'cluster' | 'top', lines: string[]): string {
  if (where === 'top') return `${K3K_KUBECONFIG}${lines.join('\n')}\n`;
  const anchor =
    where === 'user' ? '    client-key-data: ' : '    server: https://10.43.12.34:443\n';
  const at = K3K_KUBECONFIG.indexOf(anchor);
  const end = where === 'user' ? K3K_KUBECONFIG.indexOf('\n', at) + 1 : at + anchor.length;
  const added = lines.map((line) => `    ${line}\n`).join('');
  return `${K3K_KUBECONFIG.slice(0, end)}${added}${K3K_KUBECONFIG.slice(end)}`;
}

/** The kubeconfigs the issue names, each with the path its refusal must name. */
export const FORBIDDEN_KUBECONFIGS: readonly { what: string; source: string; path: string }[] = [
  {
    what: 'an exec command',
    source: withFields('user', [
      'exec:',
      '  apiVersion: client.authentication.k8s.io/v1',
      `  command: /tmp/${MARKER}`,
    ]),
    path: 'users[0].user.exec',
  },
  {
    what: 'an auth-provider',
    source: withFields('user', [
      'auth-provider:',
      '  name: oidc',
      `  config: {id-token: ${MARKER}}`,
    ]),
    path: 'users[0].user.auth-provider',
  },
  {
    what: 'a proxy-url',
    source: withFields('cluster', [`proxy-url: http://${MARKER}.example:3128`]),
    path: 'clusters[0].cluster.proxy-url',
  },
  {
    what: 'a CA file',
    source: withFields('cluster', [`certificate-authority: /etc/${MARKER}/ca.crt`]),
    path: 'clusters[0].cluster.certificate-authority',
  },
  {
    what: 'a client certificate file',
    source: withFields('user', [`client-certificate: /home/${MARKER}/cert`]),
    path: 'users[0].user.client-certificate',
  },
  {
    what: 'a client key file',
    source: withFields('user', [`client-key: /home/${MARKER}/key`]),
    path: 'users[0].user.client-key',
  },
  {
    what: 'a token file',
    source: withFields('user', [`tokenFile: /var/run/${MARKER}`]),
    path: 'users[0].user.tokenFile',
  },
];

// --- a Cell with delivery ManifestWork (decision D34) ---

/** The ManagedCluster of remoteCell(): the hub namespace of its ManifestWorks. */
export const REMOTE_CLUSTER = 'cell-remote';

/** cell() with `delivery: ManifestWork`, bound to REMOTE_CLUSTER. */
export function remoteCell(): Cell {
  const remote = cell();
  remote.spec.delivery = 'ManifestWork';
  remote.spec.managedClusterRef = { name: REMOTE_CLUSTER };
  return remote;
}

export function remoteRelated(): KubernetesObject[] {
  return [remoteCell(), smallClass(), hostNamespace()];
}

let testKeys: { privateKey: KeyObject; publicKeyPem: string } | undefined;
let testAgentKey: KeyObject | undefined;

/** The signing key of the test cell agent on REMOTE_CLUSTER (Ed25519, made once per run). */
export function agentKey(): KeyObject {
  testAgentKey ??= generateAgentKey();
  return testAgentKey;
}

/** A 2048-bit RSA sealing key pair made once per test run (never a key of any installation). */
export function sealingKeys(): { privateKey: KeyObject; publicKeyPem: string } {
  if (testKeys === undefined) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    testKeys = { privateKey, publicKeyPem };
  }
  return testKeys;
}

/** CONFIG with the hub's private key of sealingKeys(). */
export function remoteConfig(): VirtualClusterConfig {
  return { ...CONFIG, sealingKeys: { current: sealingKeys().privateKey } };
}

/**
 * K3K_KUBECONFIG (or `text`) sealed for the VirtualCluster `uid` by the agent of REMOTE_CLUSTER
 * (or as `origin` says).
 */
export function sealedKubeconfig(
  uid: string = VC_UID,
  text: string = K3K_KUBECONFIG,
  origin: SealOrigin = { managedCluster: REMOTE_CLUSTER, signingKey: agentKey() },
): string {
  return sealFor(sealingKeys().publicKeyPem, uid, text, origin);
}

/** k3k's status of its Cluster on the managed cluster, as the work feeds it back. */
export interface FedBackK3k {
  phase?: string;
  ready?: { status: string; reason?: string; message?: string };
}
/** What k3k reports once the Cluster runs. */
export const K3K_RUNNING: FedBackK3k = Object.freeze({
  phase: 'Ready',
  ready: { status: 'True', reason: 'Provisioned', message: 'Cluster is ready' },
});

/** The feedback values (`k3kPhase`, `k3kReady*`) of `k3k`, as String values. */
function k3kFeedback(k3k: FedBackK3k): unknown[] {
  const value = (name: string, text: string | undefined) =>
    text === undefined ? [] : [{ name, fieldValue: { type: 'String', string: text } }];
  return [
    ...value('k3kPhase', k3k.phase),
    ...value('k3kReadyStatus', k3k.ready?.status),
    ...value('k3kReadyReason', k3k.ready?.reason),
    ...value('k3kReadyMessage', k3k.ready?.message),
  ];
}

/**
 * The ManifestWork kubecell-vc-<VC_UID> as OCM's work agent reports it (ocm v1.3.1: `Applied`
 * from manifestwork_reconciler.go, `Available` from spoke/conditions/helpers.go), with the
 * NodePort of the API Service and the sealed kubeconfig fed back when given, and the k3k
 * Cluster (reported existing, `K3K_RUNNING` unless told) while the work is applied; `k3k:
 * 'gone'` reports it not existing any more, its last values kept (as the work agent keeps them).
 */
export function manifestWork(
  options: {
    applied?: boolean;
    available?: boolean;
    nodePort?: number;
    sealed?: string;
    namespace?: string;
    k3k?: FedBackK3k | 'gone';
    /** The agent key kubecell-delivery recorded on the work: agentKey()'s unless told; null: none. */
    agentKey?: KeyObject | null;
  } = {},
): KubernetesObject {
  const condition = (type: string, holds: boolean, reason: string, message: string) => ({
    type,
    status: holds ? 'True' : 'False',
    reason,
    message,
    lastTransitionTime: '2026-11-30T00:00:05Z',
    observedGeneration: 1,
  });
  const manifest = (
    ordinal: number,
    [group, version, kind]: [string, string, string],
    name: string,
    values: unknown[],
    conditions: unknown[] = [],
  ) => ({
    resourceMeta: {
      ordinal,
      group,
      version,
      kind,
      resource: `${kind.toLowerCase()}s`,
      name,
      namespace: 'tenant-a',
    },
    statusFeedback: { values },
    conditions,
  });
  const exists = (holds: boolean) =>
    holds
      ? condition('Available', true, 'ResourceAvailable', 'Resource is available')
      : condition('Available', false, 'ResourceNotAvailable', 'Resource is not available');
  const k3k = options.k3k ?? K3K_RUNNING;
  const cluster = manifest(
    3,
    ['k3k.io', 'v1beta1', 'Cluster'],
    'team-a',
    k3kFeedback(k3k === 'gone' ? K3K_RUNNING : k3k),
    [exists(k3k !== 'gone')],
  );
  const applied = options.applied ?? true;
  const available = options.available ?? applied;
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: {
      name: `kubecell-vc-${VC_UID}`,
      namespace: options.namespace ?? REMOTE_CLUSTER,
      uid: 'work-uid',
      ...(options.agentKey === null
        ? {}
        : {
            annotations: {
              [CELL_AGENT_KEY_ANNOTATION]: agentPublicKeyText(options.agentKey ?? agentKey()),
            },
          }),
    },
    spec: { workload: { manifests: [] } },
    status: {
      conditions: [
        applied
          ? condition(
              'Applied',
              true,
              'AppliedManifestWorkComplete',
              'Apply manifest work complete',
            )
          : condition(
              'Applied',
              false,
              'AppliedManifestWorkFailed',
              'Failed to apply manifest work',
            ),
        available
          ? condition('Available', true, 'ResourcesAvailable', 'All resources are available')
          : condition(
              'Available',
              false,
              'ResourcesNotAvailable',
              '1 of 7 resources are not available',
            ),
      ],
      resourceStatus: {
        manifests: [
          ...(applied ? [cluster] : []),
          manifest(
            4,
            ['', 'v1', 'Service'],
            'kubecell-team-a-api',
            options.nodePort === undefined
              ? []
              : [{ name: 'nodePort', fieldValue: { type: 'Integer', integer: options.nodePort } }],
          ),
          manifest(
            6,
            ['', 'v1', 'ConfigMap'],
            'kubecell-team-a-sealed-kubeconfig',
            options.sealed === undefined
              ? []
              : [
                  {
                    name: 'sealedKubeconfig',
                    fieldValue: { type: 'String', string: options.sealed },
                  },
                ],
          ),
        ],
      },
    },
  } as KubernetesObject;
}

/** A VirtualCluster resolved on remoteCell(), as the next sync receives it. */
export function remoteResolved(): VirtualCluster {
  const vc = virtualCluster();
  return withStatus(vc, runSync(vc, remoteRelated()).status);
}
