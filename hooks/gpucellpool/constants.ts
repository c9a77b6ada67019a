/**
 * Every fixed value and default of the kubecell-gpucellpool controller, in one place (the
 * condition reasons are in reasons.ts).
 *
 * docs/autoscaling.md lists the autoscaling defaults, and docs/cell-image.md the template
 * variables, the join Secret keys and the phases; `docs.test.ts` fails when a document and this
 * module disagree. The spec defaults are the schema's own (`schemas/gpucellpool.schema.json`),
 * checked by the same test: the hook applies them too, because a parent that reaches it without
 * the apiserver's defaulting must mean the same thing.
 */
import type { GPUCellStatus } from '../generated/types/index.js';

// --- spec defaults (the schema's `default`s) ---

export const SPEC_DEFAULTS = Object.freeze({
  /** spec.replicas */
  replicas: 1,
  /** spec.provisioner.kubeVirt.firmware */
  firmware: 'uefi',
  /** spec.autoscaling.minReplicas */
  minReplicas: 1,
  /** spec.autoscaling.scaleDownDelaySeconds */
  scaleDownDelaySeconds: 600,
  /** spec.health.nodeStartupTimeoutSeconds: Cluster API's DefaultNodeStartupTimeoutSeconds. */
  nodeStartupTimeoutSeconds: 600,
  /** spec.health.maxUnhealthy */
  maxUnhealthy: '40%',
  /** spec.health.remediation */
  remediation: 'Replace',
} as const);

/**
 * spec.health.unhealthyConditions by default (the schema's `default`, which cites where each
 * comes from): the Node's Ready, node-problem-detector's default conditions, and the GPU
 * conditions NVIDIA NVSentinel sets True for a fatal fault.
 */
export const DEFAULT_UNHEALTHY_CONDITIONS: readonly Readonly<{
  type: string;
  status: 'True' | 'False' | 'Unknown';
  durationSeconds: number;
}>[] = Object.freeze([
  { type: 'Ready', status: 'False', durationSeconds: 300 },
  { type: 'Ready', status: 'Unknown', durationSeconds: 300 },
  { type: 'KernelDeadlock', status: 'True', durationSeconds: 300 },
  { type: 'ReadonlyFilesystem', status: 'True', durationSeconds: 300 },
  { type: 'SysLogsXIDError', status: 'True', durationSeconds: 0 },
  { type: 'SysLogsGPUFallenOff', status: 'True', durationSeconds: 0 },
  { type: 'GpuMemWatch', status: 'True', durationSeconds: 0 },
  { type: 'GpuPcieWatch', status: 'True', durationSeconds: 0 },
  { type: 'GpuInforomWatch', status: 'True', durationSeconds: 0 },
]);

// --- autoscaling ---

/** Cells the autoscaler adds per step; the next step waits until every cell is Ready. */
export const SCALE_UP_STEP = 1;

// --- cell phases ---

/** The phases of a cell, in lifecycle order (status.cells[].phase). */
export const CELL_PHASES = [
  'Provisioning',
  'NotReady',
  'Ready',
  'Retiring',
  'Deleting',
  'Failed',
] as const satisfies readonly NonNullable<GPUCellStatus['phase']>[];
export type CellPhase = (typeof CELL_PHASES)[number];

/** The health of a cell (status.cells[].health). */
export const CELL_HEALTH_STATES = [
  'Healthy',
  'Unhealthy',
  'Remediating',
] as const satisfies readonly NonNullable<GPUCellStatus['health']>[];
export type CellHealthState = (typeof CELL_HEALTH_STATES)[number];

// --- bootstrap: the join Secret and its template ---

/** Keys of the join Secret (spec.bootstrap.joinSecretRef). */
export const JOIN_SECRET_KEYS = {
  userData: 'user-data',
  token: 'token',
  caCertHash: 'caCertHash',
  apiServer: 'apiServer',
  sshAuthorizedKeys: 'sshAuthorizedKeys',
  nodeSubnet: 'nodeSubnet',
} as const;

/**
 * The closed set of template variables, written `${NAME}`, and where each value comes from: the
 * pool (`pool`) or a join Secret key. `docs/cell-image.md` documents each.
 */
export const TEMPLATE_VARIABLES = {
  CELL_NAME: { source: 'pool' },
  NODE_NAME: { source: 'pool' },
  POOL_NAME: { source: 'pool' },
  MACHINE_PROFILE: { source: 'pool' },
  NODE_LABELS: { source: 'pool' },
  API_SERVER: { source: JOIN_SECRET_KEYS.apiServer },
  JOIN_TOKEN: { source: JOIN_SECRET_KEYS.token },
  CA_CERT_HASH: { source: JOIN_SECRET_KEYS.caCertHash },
  NODE_SUBNET: { source: JOIN_SECRET_KEYS.nodeSubnet },
  SSH_AUTHORIZED_KEYS: { source: JOIN_SECRET_KEYS.sshAuthorizedKeys },
} as const;
export type TemplateVariable = keyof typeof TEMPLATE_VARIABLES;

/** Key of the rendered user-data Secret a KubeVirt VM boots from (KubeVirt reads `userdata`). */
export const KUBEVIRT_USER_DATA_KEY = 'userdata';
/** Key of the rendered bootstrap data Secret a Cluster API Machine boots from (the contract's `value`). */
export const CLUSTER_API_DATA_KEY = 'value';
/** Suffix of the rendered per-cell user-data Secret: `<machine>-user-data`. */
export const USER_DATA_SECRET_SUFFIX = '-user-data';

// --- labels, annotations and fixed names ---

export const LABEL_KEYS = {
  /** Metacontroller's generated selector label; the kubelet registers the Node with it. */
  controllerUid: 'controller-uid',
  pool: 'kubecell.io/pool',
  machineProfile: 'kubecell.io/machine-profile',
  /** The cell an object belongs to (VMs, Machines, Secrets, Cluster API clones). */
  cell: 'kubecell.io/gpu-cell',
  managedBy: 'app.kubernetes.io/managed-by',
  clusterName: 'cluster.x-k8s.io/cluster-name',
} as const;
export const MANAGED_BY = 'kubecell';

/** The taint (and cordon) a retiring cell's Node gets; pods are never evicted. */
export const RETIRING_TAINT = Object.freeze({ key: 'kubecell.io/retiring', effect: 'NoSchedule' });

/**
 * On a rendered user-data Secret: the join Secret content it was rendered from (joinContentHash),
 * never the content itself.
 */
export const JOIN_CONTENT_HASH_ANNOTATION = 'kubecell.io/join-content-hash';
/** Hex digits of SHA-256 a join content hash keeps. */
export const JOIN_CONTENT_HASH_LENGTH = 16;
/**
 * On a cell's machine (VirtualMachine or Cluster API Machine), set by a user to `"true"`: the
 * cell is retired and replaced the way an unhealthy cell is, never evicted (remediation.ts).
 * Metacontroller's apply keeps an annotation its last-applied configuration does not name.
 */
export const REPLACE_ANNOTATION = 'kubecell.io/replace';

/** Cluster API skips its drain (which evicts) for a Machine with this annotation. */
export const EXCLUDE_NODE_DRAINING_ANNOTATION = 'machine.cluster.x-k8s.io/exclude-node-draining';
/** Cluster API's record of the template an object was cloned from. */
export const CLONED_FROM_NAME_ANNOTATION = 'cluster.x-k8s.io/cloned-from-name';
export const CLONED_FROM_GROUPKIND_ANNOTATION = 'cluster.x-k8s.io/cloned-from-groupkind';
/** The kubeadm bootstrap provider's group: a KubeadmConfigTemplate clone gets the pool's Node labels. */
export const KUBEADM_BOOTSTRAP_GROUP = 'bootstrap.cluster.x-k8s.io';
/** The kubelet flag (kubeadm `kubeletExtraArgs` name) that registers a Node's labels. */
export const NODE_LABELS_ARG = 'node-labels';

export const API_VERSIONS = {
  virtualMachine: 'kubevirt.io/v1',
  machine: 'cluster.x-k8s.io/v1beta2',
  resource: 'resource.k8s.io/v1',
} as const;

/** The KubeVirt names inside each VM. */
export const VM_NAMES = {
  rootDisk: 'rootdisk',
  cloudInitDisk: 'cloudinitdisk',
  podNetwork: 'default',
  gpu: 'gpu',
  claim: 'gpu',
} as const;
/** KubeVirt runs the VM whenever it is stopped (spec.running is deprecated). */
export const VM_RUN_STRATEGY = 'Always';

/**
 * Namespace UUID of the name-based (version 5) firmware UUIDs: a cell incarnation's UUID is
 * derived from it, the pool UID, the cell name and the incarnation, so it never depends on
 * when or where the hook ran.
 */
export const FIRMWARE_UUID_NAMESPACE = 'a4d3f0c2-6b1e-4f57-9c8a-2e5d7b9f1c3a';

/**
 * How long the hook server reuses an API discovery list to say a kind is served (served-kinds.ts;
 * "not served" is always checked afresh), in milliseconds. Metacontroller itself refreshes its
 * discovery every 30 s by default.
 */
export const DISCOVERY_TTL_MS = 30_000;
/** How long one API discovery request may take before the kind counts as not known (ms). */
export const DISCOVERY_TIMEOUT_MS = 3_000;

/** How often a pool being deleted is looked at again while cells remain (seconds). */
export const FINALIZE_RESYNC_SECONDS = 30;

/** Longest a status lists (its schema maxItems). */
export const MAX_CELLS = 512;

// --- controller settings (environment variables of the hook server) ---

/**
 * Settings read once at startup (hooks/gpucellpool/config.ts); docs/autoscaling.md lists them.
 * - the consumer namespaces: a label selector, `key=value` pairs joined by commas;
 * - the extended resource a consumer pod requests for (a share of) a cell's GPU.
 */
export const SETTINGS_DEFAULTS = Object.freeze({
  KUBECELL_GPUCELLPOOL_CONSUMER_NAMESPACE_SELECTOR: 'kubecell.io/host-namespace=true',
  KUBECELL_GPUCELLPOOL_GPU_RESOURCE: 'nvidia.com/gpu',
} as const);
