// SIMULATED first boot of a GPU cell (the cell image running its user-data, kubeadm join, the
// kubelet registering): shared by the KubeVirt and Cluster API simulators.
//
// A real cell registers the Node named and labelled by its join data: the user-data the pool
// rendered (docs/cell-image.md; samples/30-cell-join-secret.yaml puts NODE_NAME into a kubeadm
// JoinConfiguration's nodeRegistration.name and NODE_LABELS into its kubelet `node-labels`), or
// the KubeadmConfig of a Cluster API bootstrap. This module reads the same places. When the join
// data carries no node labels, the labels a correct template gives (`controller-uid=<pool uid>`,
// `kubecell.io/machine-profile=<profile>`, `kubecell.io/pool=<pool>`) are taken from the pool,
// and the result says so (`labelSource: 'pool'`).
import { parse } from 'yaml';
import { API_VERSION } from '../../hooks/api/kinds.js';
import { isJsonObject } from '../../hooks/json/json.js';
import { KubeClient, isNotFound, resourcePath, type KubeObject } from './kube-client.js';
import { DEFAULT_NODE_CAPACITY, loopbackAddressFor, type NodeRegistration } from './kubelet.js';

/** The cell's kubelet (the same actor as kubelet.ts, on the cell's machine). */
export const CELL_KUBELET_FIELD_MANAGER = 'simulated-kubelet';

/** What the join data says about the Node to register. */
export interface BootIdentity {
  nodeName?: string;
  labels?: Record<string, string>;
}

/** `a=b,c=d` (the kubelet's --node-labels) as a map; entries without `=` are ignored. */
export function parseNodeLabels(value: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const entry of value.split(',')) {
    const trimmed = entry.trim();
    const at = trimmed.indexOf('=');
    if (at <= 0) continue;
    labels[trimmed.slice(0, at)] = trimmed.slice(at + 1);
  }
  return labels;
}

type ExtraArgs = Record<string, string> | { name?: string; value?: string }[] | undefined;

/** A kubelet extra argument from kubeadm's v1beta4 list form or the older map form. */
function extraArg(args: ExtraArgs, name: string): string | undefined {
  if (Array.isArray(args)) {
    const found = args.find((arg) => arg?.name === name)?.value;
    return typeof found === 'string' ? found : undefined;
  }
  const value = args?.[name];
  return typeof value === 'string' ? value : undefined;
}

interface NodeRegistrationOptions {
  name?: string;
  kubeletExtraArgs?: ExtraArgs;
}

function fromNodeRegistration(registration: NodeRegistrationOptions | undefined): BootIdentity {
  const labels = extraArg(registration?.kubeletExtraArgs, 'node-labels');
  return {
    ...(typeof registration?.name === 'string' && registration.name !== ''
      ? { nodeName: registration.name }
      : {}),
    ...(labels ? { labels: parseNodeLabels(labels) } : {}),
  };
}

function parseYaml(text: string): unknown {
  try {
    return parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The Node name and labels a cell's user-data registers (pure): a cloud-config whose write_files
 * hold a kubeadm JoinConfiguration (nodeRegistration.name, kubeletExtraArgs node-labels), or,
 * failing that, `--node-labels` / `--node-name` flags anywhere in the text, and the cloud-config
 * `hostname` as the name.
 */
export function bootIdentityFromUserData(userData: string): BootIdentity {
  const config = parseYaml(userData);
  let identity: BootIdentity = {};
  if (isJsonObject(config)) {
    for (const file of Array.isArray(config.write_files) ? config.write_files : []) {
      const content = isJsonObject(file) ? file.content : undefined;
      if (typeof content !== 'string' || !content.includes('JoinConfiguration')) continue;
      for (const document of content.split(/^---$/m)) {
        const parsed = parseYaml(document);
        if (isJsonObject(parsed) && parsed.kind === 'JoinConfiguration') {
          identity = fromNodeRegistration(parsed.nodeRegistration as NodeRegistrationOptions);
        }
      }
    }
    if (!identity.nodeName && typeof config.hostname === 'string' && config.hostname !== '') {
      identity = { ...identity, nodeName: config.hostname };
    }
  }
  if (!identity.labels) {
    const flag = /--node-labels[= ]["']?([^"'\s]+)/.exec(userData)?.[1];
    if (flag) identity = { ...identity, labels: parseNodeLabels(flag) };
  }
  if (!identity.nodeName) {
    const flag = /--node-name[= ]["']?([^"'\s]+)/.exec(userData)?.[1];
    if (flag) identity = { ...identity, nodeName: flag };
  }
  return identity;
}

/** The Node name and labels of a Cluster API KubeadmConfig's join configuration (pure). */
export function bootIdentityFromKubeadmConfig(config: KubeObject): BootIdentity {
  const spec = config.spec as {
    joinConfiguration?: { nodeRegistration?: NodeRegistrationOptions };
  };
  return fromNodeRegistration(spec?.joinConfiguration?.nodeRegistration);
}

/** A Secret value decoded from base64, or undefined. */
export function secretValue(secret: KubeObject | undefined, ...keys: string[]): string | undefined {
  const data = secret?.data as Record<string, string> | undefined;
  for (const key of keys) {
    const value = data?.[key];
    if (typeof value === 'string') return Buffer.from(value, 'base64').toString('utf8');
  }
  return undefined;
}

/** Reads a Secret, or undefined when it does not exist. */
export function findSecret(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<KubeObject | undefined> {
  return client.find(resourcePath({ apiVersion: 'v1', resource: 'secrets', namespace, name }));
}

/**
 * The labels a correct join template gives a pool's Node, from the machine and its pool: the
 * pool UID (Metacontroller's `controller-uid` label on the machine), the pool name and its
 * machine profile. Undefined when the machine is not a pool's.
 */
export async function poolNodeLabels(
  client: KubeClient,
  machine: KubeObject,
): Promise<Record<string, string> | undefined> {
  const labels = machine.metadata.labels ?? {};
  const owner = machine.metadata.ownerReferences?.find((ref) => ref.kind === 'GPUCellPool');
  const poolName = labels['kubecell.io/pool'] ?? owner?.name;
  if (!poolName) return undefined;
  const pool = await client.find(
    resourcePath({ apiVersion: API_VERSION, resource: 'gpucellpools', name: poolName }),
  );
  const uid = labels['controller-uid'] ?? owner?.uid ?? pool?.metadata.uid;
  const profile = (pool?.spec as { machineProfile?: string } | undefined)?.machineProfile;
  if (!uid || !profile) return undefined;
  return {
    'controller-uid': uid,
    'kubecell.io/machine-profile': profile,
    'kubecell.io/pool': poolName,
  };
}

/** Whether a VM or Machine was made by a GPUCellPool (its label or owner reference). */
export function isPoolMachine(machine: KubeObject): boolean {
  return (
    machine.metadata.labels?.['kubecell.io/pool'] !== undefined ||
    (machine.metadata.ownerReferences ?? []).some((ref) => ref.kind === 'GPUCellPool')
  );
}

export interface CellNodeOptions {
  /** The GPU extended resource the cell's device plugin (HAMi) advertises; default nvidia.com/gpu. */
  gpuResource?: string;
  /**
   * How many of it the Node offers; default 10: one passthrough GPU that HAMi splits into its
   * default 10 shares.
   */
  gpuCount?: number;
  /** Further capacity (e.g. `nvidia.com/gpumem`). */
  extraCapacity?: Record<string, string>;
  /** When the join data has no node labels: `pool` (default) takes them from the pool; `none` registers the Node without them, so the pool never adopts it. */
  labelFallback?: 'pool' | 'none';
}

export interface CellNode {
  registration: NodeRegistration;
  labelSource: 'join-data' | 'pool' | 'none';
}

/** The Node a booted cell registers (pure): its name, labels, identity and capacity. */
export function cellNodeRegistration(input: {
  machineName: string;
  boot: BootIdentity;
  poolLabels: Record<string, string> | undefined;
  systemUUID: string;
  cpu?: string;
  memory?: string;
  providerID?: string;
  options?: CellNodeOptions;
}): CellNode {
  const options = input.options ?? {};
  const name = input.boot.nodeName ?? input.machineName;
  const fromJoin = input.boot.labels !== undefined && Object.keys(input.boot.labels).length > 0;
  const labels = fromJoin
    ? input.boot.labels
    : options.labelFallback === 'none'
      ? undefined
      : input.poolLabels;
  const capacity: Record<string, string> = {
    ...DEFAULT_NODE_CAPACITY,
    ...(input.cpu ? { cpu: input.cpu } : {}),
    ...(input.memory ? { memory: input.memory } : {}),
    [options.gpuResource ?? 'nvidia.com/gpu']: String(options.gpuCount ?? 10),
    ...options.extraCapacity,
  };
  return {
    registration: {
      name,
      ...(labels ? { labels } : {}),
      capacity,
      systemUUID: input.systemUUID,
      address: loopbackAddressFor(name),
      ...(input.providerID ? { providerID: input.providerID } : {}),
    },
    labelSource: fromJoin ? 'join-data' : labels ? 'pool' : 'none',
  };
}

/** Lists a collection, or [] when its resource is not served (a CRD not installed). */
export async function listIfServed(client: KubeClient, path: string): Promise<KubeObject[]> {
  try {
    return await client.list(path);
  } catch (error) {
    if (isNotFound(error)) return [];
    throw error;
  }
}
