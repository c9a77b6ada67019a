/**
 * The children Metacontroller observed for one VirtualCluster, each narrowed once (observe.ts):
 * found by the names the controller gives them, with what the later phases read of them already
 * read. The validation layer checked the fields read here (hooks/controllers/observed-object.ts):
 * they have their Kubernetes types, or are `null` where Go leaves a value out. What it does not
 * check is checked here, once: the NodePort is a port number, the ResourceQuota's `status.hard`
 * and `status.used` are maps of quantities, the published Secret's kubeconfig is read (decoded,
 * at most 64 KiB, its servers) without quoting it.
 */
import type { ResourceList } from '../generated/types/index.js';
import { compareStrings } from '../json/compare.js';
import { isJsonObject } from '../json/json.js';
import { isPort } from '../kube/addresses.js';
import { TYPE_KEYS } from '../kube/objects.js';
import {
  findObject,
  observedGroup,
  type KubernetesObject,
  type ObjectMap,
} from '../metacontroller/protocol.js';
import { API_PORT_NAME } from './constants.js';
import { kubeconfigServers } from './kubeconfig.js';
import { readSecretKubeconfig, type SecretKubeconfig } from './kubeconfig-secret.js';
import type { ChildNames } from './names.js';

/** Outer keys of the children map, in the order children are rendered and reported. */
export const CHILD_TYPES = {
  cluster: TYPE_KEYS.k3kCluster,
  resourceQuota: TYPE_KEYS.resourceQuota,
  limitRange: TYPE_KEYS.limitRange,
  service: TYPE_KEYS.service,
  secret: TYPE_KEYS.secret,
} as const;
export type ChildRole = keyof typeof CHILD_TYPES;

/** A condition of an observed object. */
export interface ObservedCondition {
  type?: string | null;
  status?: string | null;
  reason?: string | null;
  message?: string | null;
}

export interface K3kCluster extends KubernetesObject {
  status?: { phase?: string | null; conditions?: ObservedCondition[] | null } | null;
}

/** Its `status.hard` and `status.used` are not among the fields checked: read them as unknown. */
interface ResourceQuota extends KubernetesObject {
  status?: { hard?: unknown; used?: unknown } | null;
}

interface ServiceObject extends KubernetesObject {
  spec?: { ports?: { name?: string | null; nodePort?: number | null }[] | null } | null;
}

export interface SecretObject extends KubernetesObject {
  type?: string | null;
  data?: Record<string, string> | null;
}

/** A Secret with its `kubeconfig.yaml` read. */
export interface KubeconfigSecret {
  object: SecretObject;
  kubeconfig: SecretKubeconfig;
}

/** The published kubeconfig Secret, and the server of each cluster entry when it could be published. */
export interface PublishedSecret extends KubeconfigSecret {
  servers?: readonly string[];
}

/** The host namespace's quota as the apiserver reports it. */
export interface ObservedQuota {
  /** `status.hard`, when it is a map (its quantities only). */
  hard?: ResourceList;
  /** `status.used`, when it is a map (its quantities only). */
  used?: ResourceList;
  /** `status.hard` is a map with an entry: the quota is in force. */
  inForce: boolean;
}

export interface ObservedChildren {
  cluster?: K3kCluster;
  /** The NodePort the apiserver allocated to the API Service, when it is a port number. */
  nodePort?: number;
  quota?: ObservedQuota;
  secret?: PublishedSecret;
  /** Every observed child, whatever its name, sorted by type then key. */
  all: KubernetesObject[];
}

/** Every observed child, whatever its name, sorted by type then key: what finalize needs. */
export function allChildren(children: ObjectMap): KubernetesObject[] {
  const all: KubernetesObject[] = [];
  for (const type of Object.keys(children).sort()) {
    all.push(...(observedGroup<KubernetesObject>(children, type) ?? []));
  }
  return all;
}

/** The children by role (found by the names the controller gives them), and all of them. */
export function observeChildren(
  children: ObjectMap,
  names: ChildNames,
  namespace: string,
): ObservedChildren {
  const child = <T extends KubernetesObject>(role: ChildRole, name: string): T | undefined =>
    findObject<T>(children, CHILD_TYPES[role], name, namespace);
  const cluster = child<K3kCluster>('cluster', names.cluster);
  const nodePort = allocatedNodePort(child<ServiceObject>('service', names.service));
  const quota = child<ResourceQuota>('resourceQuota', names.resourceQuota);
  const secret = child<SecretObject>('secret', names.secret);
  return {
    ...(cluster ? { cluster } : {}),
    ...(nodePort === undefined ? {} : { nodePort }),
    ...(quota ? { quota: observeQuota(quota) } : {}),
    ...(secret ? { secret: publishedSecret(secret) } : {}),
    all: allChildren(children),
  };
}

/** The NodePort the apiserver allocated to the API Service, if any. */
function allocatedNodePort(service: ServiceObject | undefined): number | undefined {
  const ports = service?.spec?.ports ?? [];
  const port = ports.find((p) => p.name === API_PORT_NAME) ?? ports[0];
  const nodePort = port?.nodePort;
  return isPort(nodePort) ? nodePort : undefined;
}

function observeQuota(quota: ResourceQuota): ObservedQuota {
  const hard = quota.status?.hard;
  const used = quota.status?.used;
  return {
    ...(isJsonObject(hard) ? { hard: resourceList(hard) } : {}),
    ...(isJsonObject(used) ? { used: resourceList(used) } : {}),
    inForce: isJsonObject(hard) && Object.keys(hard).length > 0,
  };
}

/** The entries that are quantities (strings or numbers), sorted by name. */
function resourceList(source: Record<string, unknown>): ResourceList {
  const list: ResourceList = {};
  for (const key of Object.keys(source).sort(compareStrings)) {
    const value = source[key];
    if (typeof value === 'string' || typeof value === 'number') list[key] = value;
  }
  return list;
}

/** A Secret and its `kubeconfig.yaml`, read without quoting it. */
export function kubeconfigSecret(object: SecretObject): KubeconfigSecret {
  return { object, kubeconfig: readSecretKubeconfig(object) };
}

function publishedSecret(object: SecretObject): PublishedSecret {
  const read = kubeconfigSecret(object);
  const servers = read.kubeconfig.ok ? kubeconfigServers(read.kubeconfig.text) : undefined;
  return { ...read, ...(servers === undefined ? {} : { servers }) };
}
