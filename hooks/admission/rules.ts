/**
 * The admission rules that JSON Schema and CEL cannot express because they need the request's
 * namespace or other objects (DESIGN.md §4). Each rule is a pure function over what it needs, so
 * `kubecell validate` can apply the ones it can answer offline; `requestRules` applies those that
 * need only the request, and `crossObjectRules` (cross-object.ts) gathers the inputs of the others
 * through a `ClusterLookup`.
 *
 *   - A Cell lives only in the controller namespace.
 *   - A Cell's spec.managedClusterRef.name, spec.machineProfile.name and spec.delivery (absent
 *     means Local) are immutable while a VirtualCluster has resolved the Cell (found by label kubecell.io/cell, confirmed by its
 *     status.resolved.cell).
 *   - VirtualClusters and VirtualClusterPlans are created only in namespaces labelled
 *     kubecell.io/host-namespace=true.
 *   - A namespace hosts at most one VirtualCluster.
 *   - VirtualClusters and VirtualClusterPlans use a Cell and a VirtualNodeClass only from a
 *     namespace their spec.namespaceSelector selects (when they set one); checked on CREATE, and
 *     on a plan's UPDATE that changes a ref. The feasibility evaluation checks the same
 *     (NamespaceAllowed), so the rule holds when the webhook is bypassed.
 *   - A GPUCellPool's label kubecell.io/provisioner, when set, matches spec.provisioner.type (CEL
 *     in a CRD cannot read labels, so this one is here although it needs only the object).
 *
 * VirtualCluster refs immutability and the GPUCellPool claim rules are CEL rules of the schemas.
 */
import { evaluateSelector, formatSelector } from '../feasibility/namespace-selector.js';
import { LABELS, PROVISIONER_LABEL_VALUES } from '../kube/labels.js';
import { fieldError, type FieldError } from '../api/field-errors.js';
import type { KindName } from '../api/kinds.js';
import { isJsonObject } from '../json/json.js';
import type { PlacementTargetSummary, VirtualClusterSummary } from './lookup.js';

export const DEFAULT_CONTROLLER_NAMESPACE = 'kubecell-system';
/** How many objects a message names before it says "and N more". */
const MAX_NAMED = 5;

export type Operation = 'CREATE' | 'UPDATE';

export interface RuleInput {
  operation: Operation;
  kind: KindName;
  /** The request's namespace (namespaced kinds). */
  namespace?: string;
  object: Record<string, unknown>;
  /** The stored object, on UPDATE. */
  oldObject?: Record<string, unknown>;
  controllerNamespace: string;
}

/** `object.a.b.c` when every step is an object; undefined otherwise. */
export function pathValue(object: unknown, ...path: string[]): unknown {
  let value: unknown = object;
  for (const key of path) {
    if (!isJsonObject(value)) return undefined;
    value = value[key];
  }
  return value;
}

function named(items: readonly string[]): string {
  const shown = items.slice(0, MAX_NAMED).join(', ');
  const more = items.length - MAX_NAMED;
  return more > 0 ? `${shown} and ${more} more` : shown;
}

// ---------- the rules, pure ----------

/** The `kubecell.io/provisioner` value of a spec.provisioner.type; undefined for anything else. */
export function provisionerLabelFor(type: unknown): string | undefined {
  return typeof type === 'string' && Object.hasOwn(PROVISIONER_LABEL_VALUES, type)
    ? PROVISIONER_LABEL_VALUES[type as keyof typeof PROVISIONER_LABEL_VALUES]
    : undefined;
}

/**
 * A GPUCellPool whose label `kubecell.io/provisioner` contradicts spec.provisioner.type: the
 * controller of the other provisioner would pick it up, and its own would not. A missing label is
 * not an error (the mutating webhook sets it, and `kubecell validate` checks manifests written for
 * a cluster that runs it). On UPDATE the rule ratchets like the schema rules: a contradiction the
 * stored object already had is not reported again, so Metacontroller can always remove its
 * finalizer.
 */
export function provisionerLabelError(
  object: unknown,
  oldObject?: unknown,
): FieldError | undefined {
  const type = pathValue(object, 'spec', 'provisioner', 'type');
  const wanted = provisionerLabelFor(type);
  if (wanted === undefined) return undefined; // the schema reports the type
  const value = pathValue(object, 'metadata', 'labels', LABELS.provisioner);
  if (value === undefined || value === wanted) return undefined;
  if (
    oldObject !== undefined &&
    pathValue(oldObject, 'metadata', 'labels', LABELS.provisioner) === value &&
    pathValue(oldObject, 'spec', 'provisioner', 'type') === type
  ) {
    return undefined;
  }
  return fieldError(
    `metadata.labels[${LABELS.provisioner}]`,
    'Invalid value',
    `must be ${JSON.stringify(wanted)} for spec.provisioner.type ${String(type)}: each ` +
      `provisioner's GPUCellPool controller selects its pools by this label ` +
      `(kubecell-gpucellpool-${wanted}); set it to ${wanted}, or leave it out and the admission ` +
      `webhook sets it`,
    { value },
  );
}

/** A Cell outside the controller namespace. */
export function cellNamespaceError(
  namespace: string | undefined,
  controllerNamespace: string,
): FieldError | undefined {
  if (namespace === undefined || namespace === controllerNamespace) return undefined;
  return fieldError(
    'metadata.namespace',
    'Invalid value',
    `a Cell must be created in the KubeCell controller namespace ${JSON.stringify(controllerNamespace)}; ` +
      `set metadata.namespace: ${controllerNamespace}`,
    { value: namespace },
  );
}

/**
 * A VirtualCluster or plan in a namespace that is not a host namespace. `labels` is undefined
 * when the namespace does not exist.
 */
export function hostNamespaceError(
  kind: KindName,
  namespace: string,
  labels: Record<string, string> | undefined,
): FieldError | undefined {
  const value = labels?.[LABELS.hostNamespace];
  if (value === 'true') return undefined;
  const fix = `kubectl label namespace ${namespace} ${LABELS.hostNamespace}=true`;
  const what = `a ${kind} may only be created in a host namespace, one labelled ${LABELS.hostNamespace}=true`;
  if (labels === undefined) {
    return fieldError(
      'metadata.namespace',
      'Forbidden',
      `namespace ${JSON.stringify(namespace)} does not exist: ${what}; a platform administrator ` +
        `can create and label it with: kubectl create namespace ${namespace} && ${fix}`,
    );
  }
  const current = value === undefined ? '' : ` (its label is ${LABELS.hostNamespace}=${value})`;
  return fieldError(
    'metadata.namespace',
    'Forbidden',
    `namespace ${JSON.stringify(namespace)} is not a KubeCell host namespace${current}: ${what}; ` +
      `a platform administrator can label it with: ${fix}${value === undefined ? '' : ' --overwrite'}`,
  );
}

/** A second VirtualCluster in a namespace; `others` are the VirtualClusters already there. */
export function namespaceTakenError(
  namespace: string,
  name: string | undefined,
  others: readonly VirtualClusterSummary[],
): FieldError | undefined {
  const existing = others.filter((vc) => vc.metadata.name !== name);
  if (existing.length === 0) return undefined;
  const names = existing.map(
    (vc) =>
      `${JSON.stringify(vc.metadata.name)}${vc.metadata.deletionTimestamp ? ' (being deleted; retry once it is gone)' : ''}`,
  );
  return fieldError(
    'metadata.namespace',
    'Forbidden',
    `namespace ${JSON.stringify(namespace)} already hosts VirtualCluster ${named(names)}: a host ` +
      `namespace hosts at most one VirtualCluster; create this one in another host namespace`,
  );
}

/** A Cell or VirtualNodeClass a VirtualCluster or plan names, as the rule reads it. */
export interface PlacementTarget {
  kind: 'Cell' | 'VirtualNodeClass';
  /** The field that names it, e.g. spec.cellRef.name. */
  field: string;
  name: string;
  /** The object; undefined when it does not exist (the feasibility evaluation reports that). */
  object: PlacementTargetSummary | undefined;
}

/**
 * A Cell or VirtualNodeClass whose spec.namespaceSelector does not select the namespace of the
 * VirtualCluster or plan that names it. An absent selector restricts nothing; a malformed one
 * selects nothing. `labels` is undefined when the namespace does not exist (another rule says so).
 */
export function namespaceNotAllowedError(
  kind: KindName,
  namespace: string,
  labels: Record<string, string> | undefined,
  target: PlacementTarget,
): FieldError | undefined {
  const selector = target.object?.spec?.namespaceSelector;
  if (labels === undefined || selector === undefined) return undefined;
  const verdict = evaluateSelector(selector, labels);
  if (verdict.kind === 'selected') return undefined;
  const rule =
    verdict.kind === 'invalid'
      ? `the ${target.kind}'s spec.namespaceSelector is invalid (${verdict.problem}), so it selects no namespace`
      : `the ${target.kind}'s spec.namespaceSelector (${formatSelector(selector)}) does not select it`;
  return fieldError(
    target.field,
    'Forbidden',
    `namespace ${JSON.stringify(namespace)} may not use ${target.kind} ${JSON.stringify(target.name)}: ` +
      `${rule}; name a ${target.kind} whose namespaceSelector selects this namespace, or ask a ` +
      `platform administrator to label the namespace or widen the selector (a ${kind} is ` +
      `refused the same way by the feasibility evaluation, check NamespaceAllowed)`,
  );
}

/** The Cell fields that are frozen once a VirtualCluster resolved the Cell. */
const FROZEN_CELL_FIELDS: ReadonlyArray<FrozenField> = [
  { field: 'spec.managedClusterRef.name', path: ['spec', 'managedClusterRef', 'name'] },
  { field: 'spec.machineProfile.name', path: ['spec', 'machineProfile', 'name'] },
  // Absent means the schema's default: writing the default out is no change.
  { field: 'spec.delivery', path: ['spec', 'delivery'], absent: 'Local' },
];

interface FrozenField {
  field: string;
  path: readonly string[];
  /** The value an absent field stands for (its schema default). */
  absent?: string;
}

function frozenValue(object: unknown, { path, absent }: FrozenField): unknown {
  return pathValue(object, ...path) ?? absent;
}

/** The frozen Cell fields an update changes. */
export function changedFrozenCellFields(cell: unknown, oldCell: unknown): FrozenField[] {
  return FROZEN_CELL_FIELDS.filter(
    (frozen) => frozenValue(cell, frozen) !== frozenValue(oldCell, frozen),
  );
}

/** True when `vc` has resolved the Cell named `name` (and, when both are known, with this UID). */
export function resolvesCell(vc: VirtualClusterSummary, name: string, uid?: string): boolean {
  const resolved = vc.status?.resolved?.cell;
  if (resolved?.name !== name) return false;
  return uid === undefined || resolved.uid === undefined || resolved.uid === uid;
}

/** Changes to frozen fields of a Cell that `resolvers` (VirtualClusters) have resolved. */
export function cellInUseErrors(
  cell: unknown,
  oldCell: unknown,
  resolvers: readonly VirtualClusterSummary[],
): FieldError[] {
  if (resolvers.length === 0) return [];
  const names = resolvers.map((vc) => `${vc.metadata.namespace ?? ''}/${vc.metadata.name}`).sort();
  return changedFrozenCellFields(cell, oldCell).map((frozen) =>
    fieldError(
      frozen.field,
      'Invalid value',
      `field is immutable while VirtualClusters are placed on this Cell (${named(names)}); it was ` +
        `${JSON.stringify(frozenValue(oldCell, frozen))} when they were resolved: delete those ` +
        `VirtualClusters first, or create another Cell`,
      { value: frozenValue(cell, frozen) },
    ),
  );
}

// ---------- applied to one request ----------

/**
 * The rules that need only the request. A Cell's namespace is checked on CREATE only: it cannot
 * change afterwards, and an update must never be blocked by a later change of configuration. A
 * GPUCellPool's provisioner label is checked on CREATE and UPDATE (ratcheting).
 */
export function requestRules(input: RuleInput): FieldError[] {
  if (input.kind === 'Cell' && input.operation === 'CREATE') {
    const error = cellNamespaceError(input.namespace, input.controllerNamespace);
    return error ? [error] : [];
  }
  if (input.kind === 'GPUCellPool') {
    const error = provisionerLabelError(
      input.object,
      input.operation === 'UPDATE' ? input.oldObject : undefined,
    );
    return error ? [error] : [];
  }
  return [];
}
