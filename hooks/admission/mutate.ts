/**
 * The mutating part of the webhook: labels derived from the spec, so that label selectors work
 * everywhere (and, in finalizer.ts, the VirtualCluster's Metacontroller finalizer at CREATE).
 *
 * - VirtualClusters and VirtualClusterPlans carry `kubecell.io/cell` and `kubecell.io/class`
 *   copied from their refs (the Cell-in-use rule, `kubectl get vc -l kubecell.io/cell=cell1`, the
 *   controllers' related objects).
 * - GPUCellPools carry `kubecell.io/provisioner` (`kubevirt` or `cluster-api`) from
 *   spec.provisioner.type: each provisioner's CompositeController selects its pools by it
 *   (metacontroller/gpucellpool/<value>/controller.yaml), so a pool without it is run by none.
 *
 * The patch is minimal: nothing when the labels are already right, a `replace` for a wrong value,
 * an `add` for a missing one, a `remove` of `kubecell.io/cell` from a plan that chooses among
 * Cells by `spec.cellSelector` instead (its Cell is the one it chooses, not one it names).
 */
import type { KindName } from '../api/kinds.js';
import { isJsonObject } from '../json/json.js';
import { LABELS, isLabelValue } from '../kube/labels.js';
import { pathValue, provisionerLabelFor } from './rules.js';

export type JsonPatchOperation =
  | { op: 'add'; path: string; value: unknown }
  | { op: 'replace'; path: string; value: unknown }
  | { op: 'remove'; path: string };

/** Kinds the mutating webhook labels. */
export const LABELLED_KINDS: readonly KindName[] = [
  'GPUCellPool',
  'VirtualCluster',
  'VirtualClusterPlan',
];

/** One JSON Pointer token (RFC 6901): `~` → `~0`, `/` → `~1`. */
export function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * The labels an object of `kind` must carry, from its refs. A ref that is absent or not a valid
 * label value is left out: the validating webhook rejects such an object anyway, and a label
 * the apiserver refuses would only hide the real error.
 *
 * A VirtualCluster choosing by `spec.cellSelector` carries `kubecell.io/cell` only once
 * resolved, naming the Cell of `status.resolved` (the Cell counts the VirtualClusters so
 * labelled), read from the object or, when the request left the status out (a replace without
 * it), from the stored one: `oldObject`. The kubecell-cell-label
 * DecoratorController sets it right after resolution (D49).
 */
export function desiredLabels(
  kind: string,
  object: unknown,
  oldObject?: unknown,
): Record<string, string> {
  if (!(LABELLED_KINDS as readonly string[]).includes(kind)) return {};
  const labels: Record<string, string> = {};
  if (kind === 'GPUCellPool') {
    const value = provisionerLabelFor(pathValue(object, 'spec', 'provisioner', 'type'));
    if (value !== undefined) labels[LABELS.provisioner] = value;
    return labels;
  }
  const cell = selectsCells(kind, object)
    ? resolvedCell(object, oldObject)
    : pathValue(object, 'spec', 'cellRef', 'name');
  const klass = pathValue(object, 'spec', 'classRef', 'name');
  if (isLabelValue(cell) && cell !== '') labels[LABELS.cell] = cell;
  if (isLabelValue(klass) && klass !== '') labels[LABELS.class] = klass;
  return labels;
}

/** A plan or VirtualCluster choosing among Cells by selector. */
function selectsCells(kind: string, object: unknown): boolean {
  return (
    (kind === 'VirtualClusterPlan' || kind === 'VirtualCluster') &&
    pathValue(object, 'spec', 'cellSelector') !== undefined
  );
}

/** The Cell a VirtualCluster resolved to, from the object or else the stored one. */
function resolvedCell(object: unknown, oldObject: unknown): unknown {
  const path = ['status', 'resolved', 'cell', 'name'] as const;
  return pathValue(object, ...path) ?? pathValue(oldObject, ...path);
}

/**
 * The JSON Patch that gives `object` its desired labels; empty when it has them already. A
 * selector's object loses a `kubecell.io/cell` it must not carry.
 */
export function labelPatch(
  kind: string,
  object: unknown,
  oldObject?: unknown,
): JsonPatchOperation[] {
  if (!isJsonObject(object)) return [];
  const desired = desiredLabels(kind, object, oldObject);
  const empty = Object.keys(desired).length === 0;
  const selecting = selectsCells(kind, object);
  if (empty && !selecting) return [];
  const metadata = object.metadata;
  if (!isJsonObject(metadata))
    return empty ? [] : [{ op: 'add', path: '/metadata', value: { labels: desired } }];
  const labels = metadata.labels;
  if (!isJsonObject(labels))
    return empty ? [] : [{ op: 'add', path: '/metadata/labels', value: desired }];
  const patch: JsonPatchOperation[] = [];
  if (selecting && LABELS.cell in labels && !(LABELS.cell in desired)) {
    patch.push({ op: 'remove', path: `/metadata/labels/${escapePointerToken(LABELS.cell)}` });
  }
  for (const [key, value] of Object.entries(desired)) {
    if (labels[key] === value) continue;
    const path = `/metadata/labels/${escapePointerToken(key)}`;
    patch.push(key in labels ? { op: 'replace', path, value } : { op: 'add', path, value });
  }
  return patch;
}

/**
 * Applies a patch the mutating webhook made (add/replace on object members, add at the end of
 * an array with `-`). For tests, which label objects the way the webhook would before
 * validating them.
 */
export function applyMutationPatch<T>(object: T, patch: readonly JsonPatchOperation[]): T {
  const copy = structuredClone(object) as unknown;
  for (const operation of patch) {
    const tokens = operation.path
      .split('/')
      .slice(1)
      .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = tokens.pop();
    let target = copy;
    for (const token of tokens) target = (target as Record<string, unknown>)[token];
    if (operation.op === 'remove') {
      if (!isJsonObject(target) || last === undefined || !(last in target))
        throw new Error(`cannot remove missing ${operation.path}`);
      delete target[last];
      continue;
    }
    if (Array.isArray(target) && last === '-' && operation.op === 'add') {
      target.push(structuredClone(operation.value));
      continue;
    }
    if (!isJsonObject(target) || last === undefined)
      throw new Error(`cannot apply ${operation.path}`);
    if (operation.op === 'replace' && !(last in target)) {
      throw new Error(`cannot replace missing ${operation.path}`);
    }
    target[last] = structuredClone(operation.value);
  }
  return copy as T;
}
