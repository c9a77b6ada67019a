/**
 * What Metacontroller delivered for one VirtualCluster, sorted into the inputs of a sync and
 * narrowed to types once, here: the later phases read these types and check nothing again.
 *
 * The validation layer checked the parent (its spec and status against the schema), the Cell,
 * class and neighbours (each against its kind's schema), and the fields read of every other
 * object (hooks/controllers/request-validation.ts). What comes from outside that check is read
 * here, once: the children's NodePort, quota and published kubeconfig (observe-children.ts),
 * k3k's kubeconfig Secret, the Cell's liveness record, and what the VirtualCluster's
 * ManifestWorks feed back (work-feedback.ts, the sealed kubeconfig opened).
 *
 * A list is `undefined` when its group is missing from `related` altogether: the source was
 * not observed, which is not the same as observed and empty (hooks/cell/observe.ts does the
 * same). `prior` is what the previous sync wrote.
 */
import {
  cellLivenessRecordName,
  readCellLivenessRecord,
  type CellLivenessRecord,
  type ConfigMapObject,
} from '../api/cell-liveness-record.js';
import type {
  Cell,
  Condition,
  ResolvedPlacement,
  VirtualCluster,
  VirtualClusterPlan,
  VirtualClusterStatus,
  VirtualNodeClass,
} from '../generated/types/index.js';
import { TYPE_KEYS, type Namespace } from '../kube/objects.js';
import {
  childKey,
  findObject,
  observedGroup,
  type KubernetesObject,
  type ObjectMap,
} from '../metacontroller/protocol.js';
import { sealedKubeconfigConfigMapName, virtualClusterWorkName } from '../remote/contract.js';
import { MANIFEST_WORK_TYPE_KEY, type ObservedManifestWork } from '../remote/manifest-work.js';
import type { WorkCleanup } from './cleanup.js';
import type { VirtualClusterConfig } from './config.js';
import { childNames, k3kKubeconfigSecretName, type ChildNames } from './names.js';
import {
  allChildren,
  kubeconfigSecret,
  observeChildren,
  type KubeconfigSecret,
  type ObservedChildren,
  type SecretObject,
} from './observe-children.js';
import { readWorkFeedback, type FedBackObjects, type WorkFeedback } from './work-feedback.js';
import { plannedName, type ObservedPlan } from './planned-cell.js';
import { refOf, sameWork, snapshotWorkRef } from './work-ref.js';

/** The status the previous sync wrote (valid: the validation layer checked it). */
export interface PriorStatus {
  /** `.status` as received, or `{}` when there is none yet. */
  status: VirtualClusterStatus;
  /** Its conditions, if any. */
  conditions: Condition[] | undefined;
}

export interface VirtualClusterObservation {
  prior: PriorStatus;
  cellName: string;
  className: string;
  namespace: string;
  names: ChildNames;
  /** False when Metacontroller sent no Cell group at all (not observed). */
  cellObserved: boolean;
  cell?: Cell;
  /**
   * With `spec.cellSelector`, before resolution: the Cells of the controller namespace the
   * selector matched (Metacontroller applied it, customize.ts), one of which resolution chooses;
   * undefined when Cells were not observed.
   */
  selectedCells?: Cell[];
  /** With `spec.cellSelector` and `kubecell.io/plan`, before resolution: that plan. */
  plan?: ObservedPlan;
  /**
   * The liveness record of the resolved Cell (a ConfigMap) read, when ConfigMaps were observed;
   * what a resolved VirtualCluster reads instead of the Cell (customize.ts).
   */
  cellRecord?:
    { observed: false } | { observed: true; read?: CellLivenessRecord | { invalid: string } };
  virtualNodeClass?: VirtualNodeClass;
  /** The other VirtualClusters of this namespace; never this one. */
  virtualClusters?: VirtualCluster[];
  /** The VirtualCluster's own Namespace; undefined when not observed or absent. */
  hostNamespace?: Namespace;
  /** k3k's admin kubeconfig Secret `k3k-<name>-kubeconfig` and its kubeconfig, when it exists. */
  k3kKubeconfig?: KubeconfigSecret;
  /**
   * What the ManifestWorks named `kubecell-vc-<uid>` feed back, in any namespace (work-ref.ts
   * picks the one of the resolved ManagedCluster); undefined when ManifestWorks were not
   * observed.
   */
  works?: WorkFeedback[];
  children: ObservedChildren;
}

export function observeVirtualCluster(
  vc: VirtualCluster,
  related: ObjectMap,
  children: ObjectMap,
  config: Pick<VirtualClusterConfig, 'cellNamespace' | 'sealingKeys'>,
): VirtualClusterObservation {
  const refs: ObservedRefs = {
    prior: priorStatus(vc),
    cellName: vc.status?.resolved?.cell.name ?? vc.spec.cellRef?.name ?? '',
    className: vc.spec.classRef.name,
    namespace: vc.metadata.namespace ?? '',
    names: childNames(vc.metadata.name, vc.metadata.uid),
  };
  return {
    ...refs,
    ...observeRelated(vc, related, refs, config),
    children: observeChildren(children, refs.names, refs.namespace),
  };
}

/** What the spec, name and namespace name: the Cell, the class, the host namespace, children. */
type ObservedRefs = Pick<
  VirtualClusterObservation,
  'prior' | 'cellName' | 'className' | 'namespace' | 'names'
>;

/** The related objects this VirtualCluster depends on, each only when observed. */
function observeRelated(
  vc: VirtualCluster,
  related: ObjectMap,
  refs: ObservedRefs,
  config: Pick<VirtualClusterConfig, 'cellNamespace' | 'sealingKeys'>,
): Omit<VirtualClusterObservation, keyof ObservedRefs | 'children'> {
  const { cellName, className, namespace } = refs;
  const cells = kubeCellObjects<Cell>(related, TYPE_KEYS.cell);
  const inCellNamespace = cells?.filter((c) => c.metadata.namespace === config.cellNamespace);
  const cell = inCellNamespace?.find((c) => c.metadata.name === cellName);
  const selecting = vc.spec.cellSelector !== undefined;
  const resolved = vc.status?.resolved !== undefined;
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
  const works = observeWorks(vc, related)?.map((work) =>
    readWorkFeedback(vc, work, fedBackObjects(vc, refs), config.sealingKeys),
  );
  return {
    cellRecord: observeCellRecord(vc, related, config.cellNamespace),
    cellObserved: cells !== undefined && (cell !== undefined || !(selecting && resolved)),
    ...(cell ? { cell } : {}),
    ...(selecting && !resolved && inCellNamespace ? { selectedCells: inCellNamespace } : {}),
    ...observePlan(vc, related, resolved),
    ...(virtualNodeClass ? { virtualNodeClass } : {}),
    ...(virtualClusters ? { virtualClusters } : {}),
    ...(hostNamespace ? { hostNamespace } : {}),
    ...(k3kKubeconfig ? { k3kKubeconfig: kubeconfigSecret(k3kKubeconfig) } : {}),
    ...(works ? { works } : {}),
  };
}

/** The plan the annotation names, before resolution (customize.ts relates it then). */
function observePlan(
  vc: VirtualCluster,
  related: ObjectMap,
  resolved: boolean,
): Pick<VirtualClusterObservation, 'plan'> {
  const name = resolved ? undefined : plannedName(vc);
  if (name === undefined) return {};
  const plans = kubeCellObjects<VirtualClusterPlan>(related, TYPE_KEYS.virtualClusterPlan);
  if (plans === undefined) return { plan: { name, observed: false } };
  const plan = plans.find(
    (p) => p.metadata.name === name && p.metadata.namespace === vc.metadata.namespace,
  );
  return { plan: { name, observed: true, ...(plan ? { plan } : {}) } };
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
  return { observed: true, ...(configMap ? { read: readCellLivenessRecord(configMap) } : {}) };
}

/**
 * Where a work names the VirtualCluster's objects: in the host namespace of its snapshot, the one
 * stored or, before one is, the one a resolution writes (the VirtualCluster's own namespace).
 */
function fedBackObjects(vc: VirtualCluster, refs: ObservedRefs): FedBackObjects {
  return {
    namespace: refs.prior.status.resolved?.hostNamespace ?? refs.namespace,
    names: refs.names,
    sealedConfigMap: sealedKubeconfigConfigMapName(vc.metadata.name),
  };
}

/**
 * The ManifestWorks named after this VirtualCluster's UID, in any namespace; undefined when the
 * request has no ManifestWork group (not observed). Finalize reads them too: no spec field.
 */
function observeWorks(vc: VirtualCluster, related: ObjectMap): ObservedManifestWork[] | undefined {
  const name = virtualClusterWorkName(vc.metadata.uid ?? '');
  return observedGroup<ObservedManifestWork>(related, MANIFEST_WORK_TYPE_KEY)?.filter(
    (work) => work.metadata.name === name,
  );
}

/** What finalize reads (no spec field): the prior status, the children, the work. */
export interface DeletionObservation {
  prior: PriorStatus;
  /** Every observed child, whatever its name. */
  children: KubernetesObject[];
  /** On a ManifestWork Cell (by the stored snapshot), whether its ManifestWork is still there. */
  work?: WorkCleanup;
}

export function observeDeletion(
  vc: VirtualCluster,
  related: ObjectMap,
  children: ObjectMap,
): DeletionObservation {
  const prior = priorStatus(vc);
  const work = observeOwnWork(vc, prior.status.resolved, related);
  return { prior, children: allChildren(children), ...(work ? { work } : {}) };
}

function observeOwnWork(
  vc: VirtualCluster,
  stored: ResolvedPlacement | undefined,
  related: ObjectMap,
): WorkCleanup | undefined {
  const ref = snapshotWorkRef(stored, vc.metadata.uid);
  if (ref === undefined) return undefined;
  const works = observeWorks(vc, related);
  const present = works?.some((work) => sameWork(refOf(work), ref)) ?? false;
  return { ref, observed: works !== undefined, present };
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

function priorStatus(vc: VirtualCluster): PriorStatus {
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
