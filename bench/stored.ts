/**
 * Objects as the apiserver stores and serves them, for the benchmark's request bodies: server
 * metadata (uid, resourceVersion, creationTimestamp, generation) and `metadata.managedFields`,
 * one entry per field manager. Metacontroller sends objects as its informers hold them, so
 * every object in a hook request carries its managedFields; the idle benchmark measured them
 * at a third of a stored VirtualCluster (2.5 of 7.3 KB) and a hook request is made of such
 * objects.
 *
 * The fieldsV1 sets are derived from the fields each manager wrote, in the apiserver's
 * encoding (k8s.io/apimachinery/pkg/util/managedfields, sigs.k8s.io/structured-merge-diff
 * fieldpath/serialize.go): `f:<field>` for a field, `.` for the field itself when it holds
 * others, `k:{"name":…}` for an element of a list keyed by name (containers, ports, conditions
 * by type), `v:<value>` for an element of a set of strings (finalizers). Lists without such a
 * key are atomic: owned whole. Close to what the apiserver writes, not byte for byte.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { uid } from './bodies.js';
import { REPO_ROOT } from './processes.js';

export type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The key of a list element, when the list is keyed (by name, or by type for conditions). */
function elementKey(element: unknown): string | undefined {
  if (!isObject(element)) return undefined;
  for (const key of ['name', 'type']) {
    const value = element[key];
    if (typeof value === 'string') return `k:${JSON.stringify({ [key]: value })}`;
  }
  return undefined;
}

/**
 * Whether lists are keyed: in built-in kinds, by their Go tags (`listType=map`, `patchMergeKey`);
 * a custom resource's list is atomic unless its schema says otherwise, which KubeCell's and
 * k3k's do not for the lists these bodies carry.
 */
const BUILT_IN = /^(v1|(apps|batch|policy|[a-z.]+\.k8s\.io)\/v[0-9a-z]+)$/;
const CUSTOM_K8S_IO = new Set(['metacontroller.k8s.io']);

function keyedLists(apiVersion: string): boolean {
  return BUILT_IN.test(apiVersion) && !CUSTOM_K8S_IO.has(apiVersion.split('/')[0] ?? '');
}

function listFields(list: unknown[], keyed: boolean): Json {
  if (!keyed) return {};
  if (list.every((element) => typeof element === 'string')) {
    return Object.fromEntries([
      ['.', {}],
      ...list.map((element) => [`v:${JSON.stringify(element)}`, {}]),
    ]);
  }
  const keys = list.map(elementKey);
  if (keys.some((key) => key === undefined)) return {}; // atomic
  return Object.fromEntries([
    ['.', {}],
    ...list.map((element, i) => [keys[i], { '.': {}, ...objectFields(element as Json, keyed) }]),
  ]);
}

function valueFields(value: unknown, keyed: boolean): Json {
  if (Array.isArray(value)) return listFields(value, keyed);
  if (isObject(value) && Object.keys(value).length > 0) {
    return { '.': {}, ...objectFields(value, keyed) };
  }
  return {};
}

function objectFields(object: Json, keyed: boolean): Json {
  return Object.fromEntries(
    Object.entries(object).map(([key, value]) => [`f:${key}`, valueFields(value, keyed)]),
  );
}

/**
 * The fieldsV1 set of the fields in `fields` (a partial object, as one manager wrote it), for
 * an object of `apiVersion`.
 */
export function fieldsV1Of(fields: Json, apiVersion: string): Json {
  return objectFields(fields, keyedLists(apiVersion));
}

export interface Manager {
  manager: string;
  operation: 'Apply' | 'Update';
  /** `status` for writes through the status subresource. */
  subresource?: string;
  /** What the manager wrote: a partial object (metadata, spec, status, data…). */
  fields: Json;
  time: string;
}

/**
 * `object` as served: its server metadata filled in where absent (uid and resourceVersion
 * derived from its name, so bodies are reproducible) and one managedFields entry per manager.
 */
export function asStored<T extends object>(object: T, managers: readonly Manager[]): T {
  const stored = structuredClone(object) as T & { apiVersion: string; metadata: Json };
  const metadata = stored.metadata;
  const name = `${String(metadata.namespace ?? '')}/${String(metadata.name)}`;
  metadata.uid ??= uid(`stored-${name}`);
  metadata.resourceVersion ??= String(100_000 + (parseInt(uid(name).slice(0, 6), 16) % 900_000));
  metadata.creationTimestamp ??= managers[0]?.time ?? '2026-10-01T00:00:00Z';
  metadata.managedFields = managers.map((entry) => ({
    apiVersion: stored.apiVersion,
    fieldsType: 'FieldsV1',
    fieldsV1: fieldsV1Of(entry.fields, stored.apiVersion),
    manager: entry.manager,
    operation: entry.operation,
    ...(entry.subresource ? { subresource: entry.subresource } : {}),
    time: entry.time,
  }));
  return stored;
}

/** The fields of `object` under `keys` (e.g. spec, or metadata.labels), for a Manager. */
export function pick(object: Json, keys: readonly string[]): Json {
  const out: Json = {};
  for (const key of keys) {
    const [head, tail] = key.split('.', 2) as [string, string | undefined];
    const value = object[head];
    if (value === undefined) continue;
    if (tail === undefined) out[head] = value;
    else if (isObject(value) && value[tail] !== undefined) {
      out[head] = { ...(out[head] as Json | undefined), [tail]: value[tail] };
    }
  }
  return out;
}

/**
 * A Metacontroller controller of metacontroller/ (e.g. `virtualcluster.yaml`,
 * `gpucellpool/kubevirt/controller.yaml`) as Metacontroller puts it in a request's `controller`:
 * the object it read from the apiserver.
 */
export function controllerOf(file: string): Json {
  const object = parse(readFileSync(path.join(REPO_ROOT, 'metacontroller', file), 'utf8')) as Json;
  const metadata = object.metadata as Json;
  return asStored({ ...object, status: {} }, [
    {
      manager: 'kubectl-client-side-apply',
      operation: 'Update',
      fields: pick({ ...object, metadata: { ...metadata } }, ['metadata.labels', 'spec']),
      time: '2026-10-01T00:00:00Z',
    },
  ]);
}

/** When the benchmark's platform objects were applied, and their status first written. */
const APPLIED_AT = '2026-11-29T11:00:00Z';
const STATUS_AT = '2026-11-29T12:01:00Z';

/**
 * An object a user applied with `kubectl apply` (its spec), whose status, when it has one, a
 * controller writes through the status subresource (Metacontroller unless `statusBy` says).
 */
export function applied<T extends object>(object: T, statusBy = 'metacontroller'): T {
  const fields = object as unknown as Json;
  const managers: Manager[] = [
    {
      manager: 'kubectl-client-side-apply',
      operation: 'Update',
      fields: pick(fields, ['spec']),
      time: APPLIED_AT,
    },
  ];
  if (fields.status !== undefined) {
    managers.push({
      manager: statusBy,
      operation: 'Update',
      subresource: 'status',
      fields: pick(fields, ['status']),
      time: STATUS_AT,
    });
  }
  return asStored(object, managers);
}
