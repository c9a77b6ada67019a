/**
 * What Metacontroller delivered for one pool, sorted into the inputs of a sync.
 *
 * A list is `undefined` when its group is missing from the request altogether: the source was
 * not observed, which is not the same as observed and empty (hooks/cell/observe.ts does the
 * same). A single object is `undefined` when its group was observed without it.
 *
 * For the kinds the customize hook looks up through API discovery (the GPU claim's, the Cluster
 * API templates' and their clones'), a missing group means the kind is not served: the customize
 * hook left its rule out, and Metacontroller delivers every group it was asked for or fails the
 * whole sync (customize.ts, served-kinds.ts).
 */
import type { GPUCellPool, TypedObjectReference } from '../generated/types/index.js';
import { TYPE_KEYS } from '../kube/objects.js';
import {
  childKey,
  listObjects,
  type KubernetesObject,
  type ObjectMap,
} from '../metacontroller/protocol.js';
import type { GPUCellPoolConfig } from './config.js';
import { API_VERSIONS, LABEL_KEYS } from './constants.js';
import { clonedKind } from './names.js';
import type {
  ClaimObject,
  MachineObject,
  NodeObject,
  PodObject,
  SecretObject,
  TemplateObject,
} from './objects.js';

/** Outer keys of the children map. */
export const CHILD_TYPES = {
  virtualMachine: childKey(API_VERSIONS.virtualMachine, 'VirtualMachine'),
  machine: childKey(API_VERSIONS.machine, 'Machine'),
  secret: TYPE_KEYS.secret,
  node: TYPE_KEYS.node,
} as const;

/** A related object that may or may not have been observed. */
export interface Observed<T> {
  observed: boolean;
  object?: T;
}

export interface PoolObservation {
  /** The pool's VMs (KubeVirt) or Machines (ClusterAPI) in spec.namespace, by name. */
  machines?: Map<string, MachineObject>;
  /** Rendered user-data Secrets in spec.namespace, by name. */
  secrets?: Map<string, SecretObject>;
  /** The pool's Nodes (labelled controller-uid=<pool uid>), sorted by name. */
  nodes?: NodeObject[];
  /** Every observed child, whatever its type or name, sorted by type then key. */
  allChildren: KubernetesObject[];
  joinSecret: Observed<SecretObject>;
  claim: Observed<ClaimObject>;
  /** Pods of the consumer namespaces, sorted by namespace/name. */
  consumerPods?: PodObject[];
  bootstrapTemplate: Observed<TemplateObject>;
  infrastructureTemplate: Observed<TemplateObject>;
  /** Names of the Cluster API clones made for this pool, per role; undefined when not observed. */
  bootstrapClones?: Set<string>;
  infrastructureClones?: Set<string>;
}

/**
 * The objects of one group, or undefined when the group is missing. The request parser made every
 * group an object map and checked every object's identity (hooks/metacontroller/request-shape.ts).
 */
function group<T extends KubernetesObject>(map: ObjectMap, key: string): T[] | undefined {
  return map[key] === undefined ? undefined : listObjects<T>(map, key);
}

function inNamespace<T extends KubernetesObject>(
  objects: T[] | undefined,
  namespace: string,
): Map<string, T> | undefined {
  if (objects === undefined) return undefined;
  return new Map(
    objects
      .filter((object) => object.metadata.namespace === namespace)
      .map((object) => [object.metadata.name, object]),
  );
}

function named<T extends KubernetesObject>(
  map: ObjectMap,
  key: string,
  namespace: string,
  name: string | undefined,
): Observed<T> {
  const objects = group<T>(map, key);
  if (objects === undefined || name === undefined) return { observed: objects !== undefined };
  const object = objects.find(
    (candidate) => candidate.metadata.name === name && candidate.metadata.namespace === namespace,
  );
  return { observed: true, ...(object ? { object } : {}) };
}

function cloneNames(
  related: ObjectMap,
  template: TypedObjectReference | undefined,
  pool: string,
  namespace: string,
): Set<string> | undefined {
  if (template === undefined) return new Set();
  const objects = group(related, childKey(template.apiVersion, clonedKind(template.kind)));
  if (objects === undefined) return undefined;
  return new Set(
    objects
      .filter(
        (object) =>
          object.metadata.namespace === namespace &&
          object.metadata.labels?.[LABEL_KEYS.pool] === pool,
      )
      .map((object) => object.metadata.name),
  );
}

function matchesLabels(
  labels: Record<string, string> | undefined,
  wanted: Readonly<Record<string, string>>,
): boolean {
  return Object.entries(wanted).every(([key, value]) => labels?.[key] === value);
}

export function observePool(
  pool: GPUCellPool,
  children: ObjectMap,
  related: ObjectMap,
  config: Pick<GPUCellPoolConfig, 'consumerNamespaceLabels'>,
): PoolObservation {
  return {
    ...observeChildren(pool, children),
    ...optional('consumerPods', consumerPods(related, config.consumerNamespaceLabels)),
    ...observeInputs(pool, related),
  };
}

/** The pool's machines, user-data Secrets and Nodes, and every child as observed. */
function observeChildren(
  pool: GPUCellPool,
  children: ObjectMap,
): Pick<PoolObservation, 'machines' | 'secrets' | 'nodes' | 'allChildren'> {
  const { namespace } = pool.spec;
  const uid = pool.metadata.uid;
  const machineType =
    pool.spec.provisioner.type === 'ClusterAPI' ? CHILD_TYPES.machine : CHILD_TYPES.virtualMachine;
  const nodes = group<NodeObject>(children, CHILD_TYPES.node)?.filter(
    (node) => uid === undefined || node.metadata.labels?.[LABEL_KEYS.controllerUid] === uid,
  );
  return {
    ...optional('machines', inNamespace(group<MachineObject>(children, machineType), namespace)),
    ...optional(
      'secrets',
      inNamespace(group<SecretObject>(children, CHILD_TYPES.secret), namespace),
    ),
    ...optional('nodes', nodes),
    allChildren: Object.keys(children)
      .sort()
      .flatMap((type) => group(children, type) ?? []),
  };
}

/** The pods of the consumer namespaces; undefined when pods or namespaces were not observed. */
function consumerPods(
  related: ObjectMap,
  consumerNamespaceLabels: Readonly<Record<string, string>>,
): PodObject[] | undefined {
  const namespaces = group<KubernetesObject>(related, TYPE_KEYS.namespace);
  const pods = group<PodObject>(related, TYPE_KEYS.pod);
  if (namespaces === undefined || pods === undefined) return undefined;
  const consumers = new Set(
    namespaces
      .filter((ns) => matchesLabels(ns.metadata.labels, consumerNamespaceLabels))
      .map((ns) => ns.metadata.name),
  );
  return pods.filter((pod) => consumers.has(pod.metadata.namespace ?? ''));
}

/** What new machines are made from: the join Secret, the GPU claim, the Cluster API templates. */
function observeInputs(
  pool: GPUCellPool,
  related: ObjectMap,
): Pick<
  PoolObservation,
  | 'joinSecret'
  | 'claim'
  | 'bootstrapTemplate'
  | 'infrastructureTemplate'
  | 'bootstrapClones'
  | 'infrastructureClones'
> {
  const { spec } = pool;
  const { namespace, gpu } = spec;
  const claimKind = gpu.resourceClaimName !== undefined ? 'ResourceClaim' : 'ResourceClaimTemplate';
  const capi = spec.provisioner.type === 'ClusterAPI' ? spec.provisioner.clusterAPI : undefined;
  const templateOf = (ref: TypedObjectReference | undefined): Observed<TemplateObject> =>
    ref === undefined
      ? { observed: true }
      : named<TemplateObject>(related, childKey(ref.apiVersion, ref.kind), namespace, ref.name);
  const clonesOf = (ref: TypedObjectReference | undefined) =>
    capi && cloneNames(related, ref, pool.metadata.name, namespace);
  return {
    joinSecret: named<SecretObject>(
      related,
      TYPE_KEYS.secret,
      namespace,
      spec.bootstrap?.joinSecretRef?.name,
    ),
    claim: named<ClaimObject>(
      related,
      childKey(API_VERSIONS.resource, claimKind),
      namespace,
      gpu.resourceClaimName ?? gpu.resourceClaimTemplateName,
    ),
    bootstrapTemplate: templateOf(capi?.bootstrapConfigTemplateRef),
    infrastructureTemplate: templateOf(capi?.infrastructureTemplateRef),
    ...optional('bootstrapClones', clonesOf(capi?.bootstrapConfigTemplateRef)),
    ...optional('infrastructureClones', clonesOf(capi?.infrastructureTemplateRef)),
  };
}

/** The pool's machines, Secrets and Nodes, when all three were observed. */
export interface ObservedChildren {
  machines: Map<string, MachineObject>;
  secrets: Map<string, SecretObject>;
  nodes: NodeObject[];
}

/** The groups a sync needs to create or remove anything; undefined when one is missing. */
export function observedChildren(observation: PoolObservation): ObservedChildren | undefined {
  const { machines, secrets, nodes } = observation;
  if (machines === undefined || secrets === undefined || nodes === undefined) return undefined;
  return { machines, secrets, nodes };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** The first device request name of a ResourceClaim or ResourceClaimTemplate. */
export function gpuRequestName(claim: ClaimObject | undefined): string | undefined {
  const requests = claim?.spec?.devices?.requests ?? claim?.spec?.spec?.devices?.requests;
  const name = Array.isArray(requests) ? requests[0]?.name : undefined;
  return typeof name === 'string' && name !== '' ? name : undefined;
}
