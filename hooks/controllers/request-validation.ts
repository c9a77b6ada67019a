/**
 * The one validation layer: every hook request is checked here, once, before its handler runs
 * (register.ts wraps every controller's hooks with it). The envelope (`parent`, the object maps,
 * the identity of each object) was already checked by the registry's request parser
 * (hooks/metacontroller/request-shape.ts); this layer checks the content:
 *
 * - a KubeCell object (the parent, a child or a related object) against its kind's CRD schema and
 *   CEL rules, the admission webhook's own rules (hooks/api/validate-object.ts);
 * - any other object against the shape the apiserver guarantees for the fields KubeCell reads
 *   (observed-object.ts).
 *
 * A request that fails gets a 400 naming the field, and Metacontroller keeps every child: a hook
 * that cannot trust its input changes nothing.
 *
 * Finalize has one policy for every kind (docs/design/decisions.md, D31): an object annotated
 * `kubecell.io/skip-cleanup=true` is always let go (`finalized: true`, so Metacontroller removes
 * its finalizer). With a valid input the kind's handler still runs and reports what is left; with
 * an invalid one it is not called, and the status is kept as it is. Without the annotation an
 * invalid input holds the deletion: a 400 that says how to fix it or let go.
 */
import { API_VERSION, isKindName } from '../api/kinds.js';
import { echo } from '../json/echo.js';
import { keySegment, summarizeProblems } from '../json/json.js';
import { ANNOTATIONS } from '../kube/labels.js';
import type { CompositeHooks, DecoratorHooks } from '../metacontroller/controller-hooks.js';
import { InvalidHookInputError } from '../metacontroller/invalid-input.js';
import type { Awaitable, KubernetesObject, ObjectMap } from '../metacontroller/protocol.js';
import { observedObjectProblems } from './observed-object.js';
import { kubeCellObjectProblems } from './verdict-memo.js';

/** At most this many problems are collected: a request with thousands stays cheap to refuse. */
const MAX_PROBLEMS = 11;

/** Problems of one object of the request, `path` naming where it sits. */
export function objectProblems(object: KubernetesObject, path: string): string[] {
  if (object.apiVersion === API_VERSION && isKindName(object.kind)) {
    return kubeCellObjectProblems(object.kind, object).map((message) => `${path}: ${message}`);
  }
  return observedObjectProblems(object, path);
}

/** The parent a controller's `parentResource` selects; anything else is a selector mistake. */
export interface ParentType {
  /** The Metacontroller object, for messages: `kubecell-class-usage DecoratorController`. */
  controller: string;
  apiVersion: string;
  kind: string;
}

function wrongParent(parent: KubernetesObject, expected: ParentType): string | undefined {
  if (parent.apiVersion === expected.apiVersion && parent.kind === expected.kind) return undefined;
  return (
    `parent is ${echo(parent.apiVersion)} ${echo(parent.kind)} ${echo(parent.metadata.name)}, ` +
    `expected a ${expected.apiVersion} ${expected.kind}: the ${expected.controller} must select ` +
    `${expected.kind} objects only`
  );
}

/** Problems of the parent: for a KubeCell kind, named by kind and namespace/name. */
function parentProblems(
  parent: KubernetesObject,
  field: string,
  hook: HookName,
): string | undefined {
  const problems = objectProblems(parent, `request.${field}`);
  if (problems.length === 0) return undefined;
  if (parent.apiVersion === API_VERSION && isKindName(parent.kind)) {
    const { namespace, name } = parent.metadata;
    const where = echo([namespace, name].filter(Boolean).join('/'));
    const fields = problems.map((problem) => problem.replace(`request.${field}: `, ''));
    return `${parent.kind} ${where} is invalid: ${summarizeProblems(fields)}`;
  }
  return `invalid ${hook} request: ${summarizeProblems(problems)}`;
}

function mapProblems(map: ObjectMap, field: string): string[] {
  const problems: string[] = [];
  for (const [type, group] of Object.entries(map)) {
    for (const key of Object.keys(group)) {
      // Checked with an empty path, the path put in front of each problem found: every problem
      // starts with its path, and building a path for each of a Cell's Nodes and pods cost as
      // much as checking them (issue 25).
      const found = objectProblems(group[key] as KubernetesObject, '');
      if (found.length === 0) continue;
      const path = `request.${field}${keySegment(type)}${keySegment(key)}`;
      for (const problem of found) problems.push(`${path}${problem}`);
      if (problems.length >= MAX_PROBLEMS) return problems;
    }
  }
  return problems;
}

type HookName = 'customize' | 'sync' | 'finalize';
interface FieldNames {
  parent: string;
  children: string;
}

interface ObjectsOfRequest {
  parent: KubernetesObject;
  children?: ObjectMap;
  related?: ObjectMap;
}

/** Why the request cannot be acted on, or undefined when every object is valid. */
function requestProblems(
  request: ObjectsOfRequest,
  names: FieldNames,
  hook: HookName,
  expected: ParentType,
) {
  const parent =
    wrongParent(request.parent, expected) ?? parentProblems(request.parent, names.parent, hook);
  if (parent !== undefined) return parent;
  const problems = [
    ...mapProblems(request.children ?? {}, names.children),
    ...mapProblems(request.related ?? {}, 'related'),
  ];
  return problems.length > 0
    ? `invalid ${hook} request: ${summarizeProblems(problems)}`
    : undefined;
}

function skipsCleanup(parent: KubernetesObject): boolean {
  return parent.metadata.annotations?.[ANNOTATIONS.skipCleanup] === 'true';
}

/** The status an object being let go keeps: the one it has. */
function currentStatus(parent: KubernetesObject): Record<string, unknown> {
  const status = (parent as { status?: unknown }).status;
  return typeof status === 'object' && status !== null && !Array.isArray(status)
    ? (status as Record<string, unknown>)
    : {};
}

const COMPOSITE_NAMES = { parent: 'parent', children: 'children' };
// Metacontroller's decorator request carries `object` and `attachments` (request-shape.ts).
const DECORATOR_NAMES = { parent: 'object', children: 'attachments' };

function checked<R extends ObjectsOfRequest, T>(
  handler: (request: R) => T,
  names: FieldNames,
  hook: HookName,
  expected: ParentType,
): (request: R) => T {
  return (request) => {
    const problems = requestProblems(request, names, hook, expected);
    if (problems !== undefined) throw new InvalidHookInputError(problems);
    return handler(request);
  };
}

/** Finalize, for every kind: see the policy at the top of this module. */
function checkedFinalize<R extends ObjectsOfRequest, T extends { finalized?: boolean }>(
  handler: (request: R) => Awaitable<T>,
  names: FieldNames,
  expected: ParentType,
  letGo: (parent: KubernetesObject) => T,
): (request: R) => Awaitable<T> {
  return (request) => {
    const skip = skipsCleanup(request.parent);
    const problems = requestProblems(request, names, 'finalize', expected);
    if (problems !== undefined) {
      if (skip) return letGo(request.parent);
      throw new InvalidHookInputError(
        `${problems}; the deletion waits until this is fixed, or until the object is annotated ` +
          `${ANNOTATIONS.skipCleanup}=true to let it go without cleanup`,
      );
    }
    if (!skip) return handler(request);
    // The kind reports what is left; the annotation decides that nothing more is waited for.
    return Promise.resolve(handler(request)).then((response) => ({ ...response, finalized: true }));
  };
}

/** A CompositeController's hooks, each refusing a request whose content is invalid. */
export function validatedCompositeHooks<P extends KubernetesObject>(
  hooks: CompositeHooks<P>,
  parent: ParentType,
): CompositeHooks<P> {
  const { customize, sync, finalize } = hooks;
  return {
    sync: checked(sync, COMPOSITE_NAMES, 'sync', parent),
    ...(customize ? { customize: checked(customize, COMPOSITE_NAMES, 'customize', parent) } : {}),
    ...(finalize
      ? {
          finalize: checkedFinalize(finalize, COMPOSITE_NAMES, parent, (object) => ({
            status: currentStatus(object),
            children: [],
            finalized: true,
          })),
        }
      : {}),
  };
}

/** A DecoratorController's hooks, each refusing a request whose content is invalid. */
export function validatedDecoratorHooks<P extends KubernetesObject>(
  hooks: DecoratorHooks<P>,
  parent: ParentType,
): DecoratorHooks<P> {
  const { customize, sync, finalize } = hooks;
  return {
    sync: checked(sync, DECORATOR_NAMES, 'sync', parent),
    ...(customize ? { customize: checked(customize, COMPOSITE_NAMES, 'customize', parent) } : {}),
    ...(finalize
      ? {
          finalize: checkedFinalize(finalize, DECORATOR_NAMES, parent, () => ({
            attachments: [],
            finalized: true,
          })),
        }
      : {}),
  };
}
