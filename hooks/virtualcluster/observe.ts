/**
 * What Metacontroller delivered for one VirtualCluster, sorted into the inputs of a sync.
 *
 * A list is `undefined` when its group is missing from `related` altogether: the source was
 * not observed, which is not the same as observed and empty (hooks/cell/observe.ts does the
 * same). Children are found by the names the controller gives them. `priorStatus` reads what
 * the previous sync wrote.
 */
import { cellLivenessRecordName, type ConfigMapObject } from '../api/cell-liveness-record.js';
import type {
  Cell,
  Condition,
  ResolvedPlacement,
  VirtualCluster,
  VirtualClusterStatus,
  VirtualNodeClass,
} from '../generated/types/index.js';
import { TYPE_KEYS, type Namespace } from '../kube/objects.js';
import { isPort } from '../kube/addresses.js';
import {
  childKey,
  findObject,
  observedGroup,
  type KubernetesObject,
  type ObjectMap,
} from '../metacontroller/protocol.js';
import { API_PORT_NAME } from './constants.js';
import type { VirtualClusterConfig } from './config.js';
import { virtualClusterWorkName } from '../remote/contract.js';
import type { WorkCleanup } from './cleanup.js';
import { MANIFEST_WORK_TYPE_KEY, type ObservedManifestWork } from '../remote/manifest-work.js';
import { findWork, snapshotWorkRef } from './work-ref.js';
import { childNames, k3kKubeconfigSecretName, type ChildNames } from './names.js';

/** Outer keys of the children map, in the order children are rendered and reported. */
export const CHILD_TYPES = {
  cluster: TYPE_KEYS.k3kCluster,
  resourceQuota: TYPE_KEYS.resourceQuota,
  limitRange: TYPE_KEYS.limitRange,
  service: TYPE_KEYS.service,
  secret: TYPE_KEYS.secret,
} as const;
export type ChildRole = keyof typeof CHILD_TYPES;

// The observed objects below have the shape the validation layer checked
// (hooks/controllers/observed-object.ts): the fields read have their Kubernetes types, or are
// `null` where Go leaves a value out.

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
export interface ResourceQuota extends KubernetesObject {
  status?: { hard?: unknown; used?: unknown } | null;
}

export interface ServiceObject extends KubernetesObject {
  spec?: {
    ports?: { name?: string | null; nodePort?: number | null }[] | null;
  } | null;
}

export interface SecretObject extends KubernetesObject {
  type?: string | null;
  data?: Record<string, string> | null;
}

export interface ObservedChildren {
  cluster?: K3kCluster;
  resourceQuota?: ResourceQuota;
  limitRange?: KubernetesObject;
  service?: ServiceObject;
  /** The NodePort the apiserver allocated to the API Service, when it is a port number. */
  nodePort?: number;
  secret?: SecretObject;
  /** Every observed child, whatever its name, sorted by type then key. */
  all: KubernetesObject[];
}

export interface VirtualClusterObservation {
  cellName: string;
  className: string;
  namespace: string;
  names: ChildNames;
  /** False when Metacontroller sent no Cell group at all (not observed). */
  cellObserved: boolean;
  cell?: Cell;
  /**
   * The liveness record of the resolved Cell (a ConfigMap), when ConfigMaps were observed; what a
   * resolved VirtualCluster reads instead of the Cell (customize.ts).
   */
  cellRecord?: { observed: false } | { observed: true; configMap?: ConfigMapObject };
  virtualNodeClass?: VirtualNodeClass;
  /** The other VirtualClusters of this namespace; never this one. */
  virtualClusters?: VirtualCluster[];
  /** The VirtualCluster's own Namespace; undefined when not observed or absent. */
  hostNamespace?: Namespace;
  /** k3k's admin kubeconfig Secret `k3k-<name>-kubeconfig`, when it exists. */
  k3kKubeconfig?: SecretObject;
  /**
   * The ManifestWorks named `kubecell-vc-<uid>`, in any namespace (work-ref.ts picks the one
   * of the resolved ManagedCluster); undefined when ManifestWorks were not observed.
   */
  works?: ObservedManifestWork[];
  children: ObservedChildren;
}

export function observeVirtualCluster(
  vc: VirtualCluster,
  related: ObjectMap,
  children: ObjectMap,
  config: Pick<VirtualClusterConfig, 'cellNamespace'>,
): VirtualClusterObservation {
  const refs: ObservedRefs = {
    cellName: vc.spec.cellRef.name,
    className: vc.spec.classRef.name,
    namespace: vc.metadata.namespace ?? '',
    names: childNames(vc.metadata.name, vc.metadata.uid),
  };
  return {
    ...refs,
    ...observeRelated(vc, related, refs, config.cellNamespace),
    children: observeChildren(children, refs.names, refs.namespace),
  };
}

/** What the spec, name and namespace name: the Cell, the class, the host namespace, children. */
type ObservedRefs = Pick<
  VirtualClusterObservation,
  'cellName' | 'className' | 'namespace' | 'names'
>;

/** The related objects this VirtualCluster depends on, each only when observed. */
function observeRelated(
  vc: VirtualCluster,
  related: ObjectMap,
  { cellName, className, namespace }: ObservedRefs,
  cellNamespace: string,
): Omit<VirtualClusterObservation, keyof ObservedRefs | 'children'> {
  const cells = kubeCellObjects<Cell>(related, TYPE_KEYS.cell);
  const cell = cells?.find(
    (c) => c.metadata.name === cellName && c.metadata.namespace === cellNamespace,
  );
  const virtualNodeClass = kubeCellObjects<VirtualNodeClass>(
    related,
    TYPE_KEYS.virtualNodeClass,
  )?.find((c) => c.metadata.name === className);
  const virtualClusters = neighbours(vc, related, namespace);
  const hostNamespace = observedGroup<Namespace>(related, TYPE_KEYS.namespace)?.find(
    (ns) => ns.metadata.name === namespace,
  );
  const k3kKubeconfig = findObject<SecretObject>(
    related,
    TYPE_KEYS.secret,
    k3kKubeconfigSecretName(vc.metadata.name),
    namespace,
  );
  const works = observeWorks(vc, related);
  return {
    cellRecord: observeCellRecord(vc, related, cellNamespace),
    cellObserved: cells !== undefined,
    ...(cell ? { cell } : {}),
    ...(virtualNodeClass ? { virtualNodeClass } : {}),
    ...(virtualClusters ? { virtualClusters } : {}),
    ...(hostNamespace ? { hostNamespace } : {}),
    ...(k3kKubeconfig ? { k3kKubeconfig } : {}),
    ...(works ? { works } : {}),
  };
}

/** The resolved Cell's liveness record, by the name its Cell gives it, in the Cell's namespace. */
function observeCellRecord(
  vc: VirtualCluster,
  related: ObjectMap,
  cellNamespace: string,
): VirtualClusterObservation['cellRecord'] {
  const name = vc.status?.resolved?.cell.name;
  if (name === undefined) return undefined;
  if (observedGroup(related, TYPE_KEYS.configMap) === undefined) return { observed: false };
  const configMap = findObject<ConfigMapObject>(
    related,
    TYPE_KEYS.configMap,
    cellLivenessRecordName(name),
    cellNamespace,
  );
  return { observed: true, ...(configMap ? { configMap } : {}) };
}

/**
 * The ManifestWorks named after this VirtualCluster's UID, in any namespace; undefined when the
 * request has no ManifestWork group (not observed). Finalize reads them too: no spec field.
 */
export function observeWorks(
  vc: VirtualCluster,
  related: ObjectMap,
): ObservedManifestWork[] | undefined {
  const name = virtualClusterWorkName(vc.metadata.uid ?? '');
  return observedGroup<ObservedManifestWork>(related, MANIFEST_WORK_TYPE_KEY)?.filter(
    (work) => work.metadata.name === name,
  );
}

/**
 * On a ManifestWork Cell (by the stored snapshot), whether the VirtualCluster's ManifestWork is
 * still there: what finalize waits for beside the children.
 */
export function observeOwnWork(
  vc: VirtualCluster,
  stored: ResolvedPlacement | undefined,
  related: ObjectMap,
): WorkCleanup | undefined {
  const ref = snapshotWorkRef(stored, vc.metadata.uid);
  if (ref === undefined) return undefined;
  const works = observeWorks(vc, related);
  return { ref, observed: works !== undefined, present: findWork(works, ref) !== undefined };
}

/** The other VirtualClusters of this namespace (customize.ts relates no others). */
function neighbours(
  vc: VirtualCluster,
  related: ObjectMap,
  namespace: string,
): VirtualCluster[] | undefined {
  return kubeCellObjects<VirtualCluster>(related, TYPE_KEYS.virtualCluster)?.filter(
    (other) => !isSelf(vc, other) && other.metadata.namespace === namespace,
  );
}

/**
 * The objects of a KubeCell kind's group that are of that kind: the validation layer checked
 * each against its kind's schema (hooks/controllers/request-validation.ts); an object of another
 * apiVersion or kind in the group is not read as one.
 */
function kubeCellObjects<T extends KubernetesObject>(
  related: ObjectMap,
  type: string,
): T[] | undefined {
  return observedGroup<T>(related, type)?.filter(
    (object) => childKey(object.apiVersion, object.kind) === type,
  );
}

/**
 * The children alone, from the VirtualCluster's name, UID and namespace (no spec field): what
 * finalize needs.
 */
export function observeOwnChildren(vc: VirtualCluster, children: ObjectMap): ObservedChildren {
  const names = childNames(vc.metadata.name, vc.metadata.uid);
  return observeChildren(children, names, vc.metadata.namespace ?? '');
}

/** The children by role (found by the names the controller gives them), and all of them. */
function observeChildren(
  children: ObjectMap,
  names: ChildNames,
  namespace: string,
): ObservedChildren {
  const all: KubernetesObject[] = [];
  for (const type of Object.keys(children).sort()) {
    all.push(...(observedGroup<KubernetesObject>(children, type) ?? []));
  }
  const child = <T extends KubernetesObject>(role: ChildRole, name: string): T | undefined =>
    findObject<T>(children, CHILD_TYPES[role], name, namespace);
  const service = child<ServiceObject>('service', names.service);
  const nodePort = allocatedNodePort(service);
  return {
    cluster: child<K3kCluster>('cluster', names.cluster),
    resourceQuota: child<ResourceQuota>('resourceQuota', names.resourceQuota),
    limitRange: child('limitRange', names.limitRange),
    service,
    ...(nodePort === undefined ? {} : { nodePort }),
    secret: child<SecretObject>('secret', names.secret),
    all,
  };
}

/** The NodePort the apiserver allocated to the API Service, if any. */
function allocatedNodePort(service: ServiceObject | undefined): number | undefined {
  const ports = service?.spec?.ports ?? [];
  const port = ports.find((p) => p.name === API_PORT_NAME) ?? ports[0];
  const nodePort = port?.nodePort;
  return isPort(nodePort) ? nodePort : undefined;
}

/** The status the previous sync wrote (valid: the validation layer checked it). */
export interface PriorStatus {
  /** `.status` as received, or `{}` when there is none yet. */
  status: VirtualClusterStatus;
  /** Its conditions, if any. */
  conditions: Condition[] | undefined;
}

export function priorStatus(vc: VirtualCluster): PriorStatus {
  const status: VirtualClusterStatus = vc.status ?? {};
  return { status, conditions: status.conditions };
}

function isSelf(vc: VirtualCluster, other: VirtualCluster): boolean {
  if (vc.metadata.uid !== undefined && other.metadata.uid !== undefined) {
    return vc.metadata.uid === other.metadata.uid;
  }
  return (
    other.metadata.name === vc.metadata.name && other.metadata.namespace === vc.metadata.namespace
  );
}
