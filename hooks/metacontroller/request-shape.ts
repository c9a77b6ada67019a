/**
 * Runtime checks of a hook request body before it reaches a handler.
 *
 * Handlers are typed against `protocol.ts`; these checks make the types true
 * at runtime for the fields the server and every handler rely on (the parent's
 * identity and the shape of the object maps). They do not check a parent's
 * `spec`: the CRD schema and the admission webhook own that.
 *
 * Every problem names the field, e.g. `request.parent: required`,
 * `request.object.metadata.name: required` or
 * `request.children["Service.v1"]: must be an object, got array`. Nothing from the body is
 * quoted whole: map keys are cut by `keySegment`, other values by `quoted` (hooks/json/echo.ts).
 */
import { quoted } from '../json/echo.js';
import {
  MAX_BODY_DEPTH,
  isJsonObject,
  jsonTypeOf,
  keySegment,
  nestingDepthExceeds,
} from '../json/json.js';
import {
  objectKey,
  type CompositeSyncRequest,
  type CustomizeHookRequest,
  type DecoratorSyncRequest,
  type KubernetesObject,
  type ObjectMap,
} from './protocol.js';

export type ShapeResult<T> = { ok: true; value: T } | { ok: false; problems: string[] };

/** `Kind.version` or `Kind.group/version`, as Metacontroller writes map keys. */
const TYPE_KEY = /^[A-Za-z][A-Za-z0-9]*\.(?:[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?\/)?[a-z0-9]+$/;

/**
 * customize: `{controller, parent}`, for a DecoratorController too: both use the common
 * `CustomizeHookRequest` (`pkg/controller/common/customize/api/v2/hooks.go`).
 */
export function parseCustomizeRequest(body: unknown): ShapeResult<CustomizeHookRequest> {
  if (nestingDepthExceeds(body, MAX_BODY_DEPTH)) return tooDeep();
  const problems: string[] = [];
  if (!isJsonObject(body)) return notAnObject(body);
  checkController(body, problems);
  checkParent(body, 'parent', problems);
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, value: { ...controllerOf(body), parent: body.parent as KubernetesObject } };
}

/** CompositeController sync/finalize: `{controller, parent, children, related, finalizing}`. */
export function parseCompositeSyncRequest(body: unknown): ShapeResult<CompositeSyncRequest> {
  if (nestingDepthExceeds(body, MAX_BODY_DEPTH)) return tooDeep();
  if (!isJsonObject(body)) return notAnObject(body);
  const problems: string[] = [];
  checkController(body, problems);
  checkParent(body, 'parent', problems);
  const children = checkObjectMap(body.children, 'request.children', problems);
  const rest = checkRelatedAndFinalizing(body, problems);
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    value: { ...controllerOf(body), parent: body.parent as KubernetesObject, children, ...rest },
  };
}

/**
 * DecoratorController sync/finalize: `{controller, object, attachments, related, finalizing}`,
 * the JSON tags of `DecoratorHookRequest` in Metacontroller's
 * `pkg/controller/decorator/api/v2/hooks.go`. Handlers get it under the Go field names
 * (`parent`, `children`; see `DecoratorSyncRequest`). A body in the composite shape (`parent`,
 * `children`) did not come from a DecoratorController and is refused with a message that says so.
 */
export function parseDecoratorSyncRequest(body: unknown): ShapeResult<DecoratorSyncRequest> {
  if (nestingDepthExceeds(body, MAX_BODY_DEPTH)) return tooDeep();
  if (!isJsonObject(body)) return notAnObject(body);
  const problems: string[] = [];
  checkController(body, problems);
  if (isAbsent(body.object) && !isAbsent(body.parent)) {
    problems.push(
      'request.object: required (the body has "parent", the CompositeController shape; ' +
        "a DecoratorController's sync and finalize requests carry the decorated object under " +
        '"object" and its attachments under "attachments")',
    );
  } else {
    checkParent(body, 'object', problems);
  }
  let children: ObjectMap = {};
  if (body.attachments === undefined && !isAbsent(body.children)) {
    problems.push(
      'request.attachments: required (the body has "children", the CompositeController shape; ' +
        'a DecoratorController request carries its attachments under "attachments")',
    );
  } else {
    children = checkObjectMap(body.attachments, 'request.attachments', problems);
  }
  const rest = checkRelatedAndFinalizing(body, problems);
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    value: { ...controllerOf(body), parent: body.object as KubernetesObject, children, ...rest },
  };
}

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null;
}

function controllerOf(body: Record<string, unknown>): { controller?: KubernetesObject } {
  return isJsonObject(body.controller)
    ? { controller: body.controller as unknown as KubernetesObject }
    : {};
}

function checkRelatedAndFinalizing(
  body: Record<string, unknown>,
  problems: string[],
): { related: ObjectMap; finalizing: boolean } {
  const related = checkObjectMap(body.related, 'request.related', problems);
  let finalizing = false;
  if (body.finalizing !== undefined && body.finalizing !== null) {
    if (typeof body.finalizing === 'boolean') finalizing = body.finalizing;
    else problems.push(`request.finalizing: must be a boolean, got ${jsonTypeOf(body.finalizing)}`);
  }
  return { related, finalizing };
}

/** Checked first: the checks below, and the handlers, recurse into the objects. */
function tooDeep(): { ok: false; problems: string[] } {
  return {
    ok: false,
    problems: [
      `request body nests deeper than ${MAX_BODY_DEPTH} levels; no Kubernetes object does`,
    ],
  };
}

function notAnObject(body: unknown): { ok: false; problems: string[] } {
  return { ok: false, problems: [`request: must be a JSON object, got ${jsonTypeOf(body)}`] };
}

function checkController(body: Record<string, unknown>, problems: string[]): void {
  const controller = body.controller;
  if (controller !== undefined && controller !== null && !isJsonObject(controller)) {
    problems.push(`request.controller: must be an object, got ${jsonTypeOf(controller)}`);
  }
}

function checkParent(body: Record<string, unknown>, field: string, problems: string[]): void {
  const path = `request.${field}`;
  const parent = body[field];
  if (parent === undefined || parent === null) {
    problems.push(`${path}: required`);
    return;
  }
  if (!isJsonObject(parent)) {
    problems.push(`${path}: must be an object, got ${jsonTypeOf(parent)}`);
    return;
  }
  const metadata = checkIdentity(parent, path, problems);
  if (metadata) optionalString(metadata, 'uid', `${path}.metadata`, problems);
}

/**
 * What every object Metacontroller sends carries, as the apiserver stores it: apiVersion, kind,
 * metadata.name and, when namespaced, metadata.namespace. Returns the metadata when it is an
 * object, for further checks.
 */
function checkIdentity(
  obj: Record<string, unknown>,
  path: string,
  problems: string[],
): Record<string, unknown> | undefined {
  requireString(obj, 'apiVersion', path, problems);
  requireString(obj, 'kind', path, problems);
  const metadata = obj.metadata;
  if (!isJsonObject(metadata)) {
    problems.push(
      metadata === undefined
        ? `${path}.metadata: required`
        : `${path}.metadata: must be an object, got ${jsonTypeOf(metadata)}`,
    );
    return undefined;
  }
  requireString(metadata, 'name', `${path}.metadata`, problems);
  optionalString(metadata, 'namespace', `${path}.metadata`, problems);
  return metadata;
}

function requireString(
  obj: Record<string, unknown>,
  field: string,
  path: string,
  problems: string[],
): void {
  const value = obj[field];
  if (value === undefined) problems.push(`${path}.${field}: required`);
  else if (typeof value !== 'string') {
    problems.push(`${path}.${field}: must be a string, got ${jsonTypeOf(value)}`);
  } else if (value === '') problems.push(`${path}.${field}: must not be empty`);
}

function optionalString(
  obj: Record<string, unknown>,
  field: string,
  path: string,
  problems: string[],
): void {
  const value = obj[field];
  if (value !== undefined && value !== null && typeof value !== 'string') {
    problems.push(`${path}.${field}: must be a string, got ${jsonTypeOf(value)}`);
  }
}

/**
 * An object map: `{"Kind.group/version": {"ns/name": object}}`. Absent or
 * `null` (Go marshals an empty map as `null`) reads as empty. The inner key
 * must match the object's own namespace/name: a mismatch means the hook was
 * declared with `version: v1`, whose keys are relative to the parent.
 */
function checkObjectMap(value: unknown, path: string, problems: string[]): ObjectMap {
  if (value === undefined || value === null) return {};
  if (!isJsonObject(value)) {
    problems.push(
      `${path}: must be an object keyed by Kind.group/version, got ${jsonTypeOf(value)}`,
    );
    return {};
  }
  const map: ObjectMap = {};
  for (const [type, group] of Object.entries(value)) {
    const typePath = `${path}${keySegment(type)}`;
    if (!TYPE_KEY.test(type)) {
      problems.push(`${typePath}: key must be Kind.version or Kind.group/version`);
    }
    if (group === null) {
      map[type] = {};
      continue;
    }
    if (!isJsonObject(group)) {
      problems.push(`${typePath}: must be an object, got ${jsonTypeOf(group)}`);
      continue;
    }
    for (const key of Object.keys(group)) {
      const obj = group[key];
      // Field paths are built only for an entry with a problem: a Cell's request has one entry
      // per Node and pod, and building them all cost as much as checking them (issue 25).
      if (!isWellFormedEntry(obj, key)) {
        checkEntry(obj, key, `${typePath}${keySegment(key)}`, problems);
      }
    }
    map[type] = group as Record<string, KubernetesObject>;
  }
  return map;
}

/** Whether `checkEntry` would find nothing wrong with the entry, without building any message. */
function isWellFormedEntry(obj: unknown, key: string): boolean {
  if (!isJsonObject(obj) || !isNonEmptyString(obj.apiVersion) || !isNonEmptyString(obj.kind)) {
    return false;
  }
  const metadata = obj.metadata;
  if (!isJsonObject(metadata)) return false;
  const { name, namespace } = metadata;
  if (!isNonEmptyString(name)) return false;
  if (namespace === undefined || namespace === null || namespace === '') return name === key;
  // objectKey's `namespace/name`, compared without building it.
  return (
    typeof namespace === 'string' &&
    key.length === namespace.length + 1 + name.length &&
    key.startsWith(namespace) &&
    key[namespace.length] === '/' &&
    key.endsWith(name)
  );
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/** The problems of one entry of an object map, `objPath` naming it. */
function checkEntry(obj: unknown, key: string, objPath: string, problems: string[]): void {
  if (!isJsonObject(obj)) {
    problems.push(`${objPath}: must be an object, got ${jsonTypeOf(obj)}`);
    return;
  }
  const metadata = checkIdentity(obj, objPath, problems);
  if (!metadata) return;
  if (typeof metadata.name === 'string') {
    const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : undefined;
    const expected = objectKey({ metadata: { name: metadata.name, namespace } });
    if (expected !== key) {
      problems.push(
        `${objPath}: key must be the object's namespace/name ${quoted(expected)} ` +
          '(Metacontroller hook version v2; is the hook declared with version: v2?)',
      );
    }
  }
}
