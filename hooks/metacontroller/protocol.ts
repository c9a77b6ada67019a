/**
 * Metacontroller hook protocol, `version: v2` (Metacontroller v4.17.2).
 *
 * Wire facts this module encodes (checked against Metacontroller's
 * `pkg/controller/common/api/v2` and `pkg/controller/{composite,decorator}/api/v2`):
 *
 * - `children`, `attachments` and `related` are maps keyed first by
 *   `Kind.version` for the core group (`Service.v1`) or `Kind.group/version`
 *   otherwise (`Cluster.k3k.io/v1beta1`; `pkg/controller/common/api/api.go`,
 *   `MarshalText`), then by `namespace/name`, or just `name` for a
 *   cluster-scoped object (`UniformObjectMap` in `pkg/controller/common/api/v2`).
 *   The inner key is the same whatever the parent's scope (v1 hooks used a key
 *   relative to the parent instead).
 * - A DecoratorController request is not shaped like a composite one. Its Go struct
 *   (`DecoratorHookRequest`, `pkg/controller/decorator/api/v2/hooks.go`, the same tags in
 *   `api/v1/hooks.go`) names its fields `Parent` and `Children` but serializes them as
 *   `object` and `attachments`: the body is `{controller, object, attachments, related,
 *   finalizing}`. The decorator's customize request is the common one, `{controller, parent}`
 *   (`pkg/controller/common/customize/api/v2/hooks.go`). Desired objects go back under
 *   `attachments`.
 * - v2 responses are decoded strictly: an unknown response field makes the
 *   whole call fail. Response types below list every accepted field.
 *
 * Objects are the JSON wire form (timestamps are RFC 3339 strings), which is
 * why this module defines its own small object type instead of the
 * `@kubernetes/client-node` models (those model timestamps as `Date`).
 */
import { isJsonObject } from '../json/json.js';
import { compareStrings } from '../json/compare.js';

/** A value or a promise of it: hook handlers may be synchronous or async. */
export type Awaitable<T> = T | Promise<T>;

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** The `metadata` fields hooks read; the wire object may carry more. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
}

/**
 * Any Kubernetes object as JSON. Specific kinds (the generated KubeCell types,
 * Services, k3k Clusters, ...) are structurally assignable to it.
 */
export interface KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
}

/** Outer key `Kind.group/version` (or `Kind.version`), inner key `namespace/name` (or `name`). */
export type ObjectMap = Record<string, Record<string, KubernetesObject>>;

/** Label selector as in `metav1.LabelSelector`. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{
    key: string;
    operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
    values?: string[];
  }>;
}

// --- customize (CompositeController and DecoratorController alike) ---

export interface CustomizeHookRequest<P extends KubernetesObject = KubernetesObject> {
  /** The CompositeController or DecoratorController object. */
  controller?: KubernetesObject;
  parent: P;
}

/**
 * One related-resource rule: a `labelSelector`, or `namespace`/`names`. With
 * `version: v2` hooks a label-selector rule spans every namespace and
 * cluster-scoped kinds even for a namespaced parent, and a `namespace` may name
 * another namespace than the parent's (v1 hooks confined both to the parent's
 * namespace).
 */
export interface RelatedResourceRule {
  /** `v1`, or `group/version`. */
  apiVersion: string;
  /** Lowercase plural resource name, e.g. `configmaps`. */
  resource: string;
  labelSelector?: LabelSelector;
  namespace?: string;
  names?: string[];
}

export interface CustomizeHookResponse {
  relatedResources: RelatedResourceRule[];
}

// --- CompositeController sync / finalize ---

export interface CompositeSyncRequest<P extends KubernetesObject = KubernetesObject> {
  controller?: KubernetesObject;
  parent: P;
  /** Observed children; one (possibly empty) entry per child resource rule. */
  children: ObjectMap;
  /** Objects selected by the customize hook's rules. */
  related: ObjectMap;
  /** `true` when called as the finalize hook. */
  finalizing: boolean;
}

export interface CompositeSyncResponse {
  /** Replaces the parent's `.status` whole. */
  status?: object | null;
  /** Every desired child; an observed child left out is deleted. */
  children: KubernetesObject[];
  /** One-time resync of this parent after this many seconds. */
  resyncAfterSeconds?: number;
  /** Finalize hook only: `true` once cleanup is complete. */
  finalized?: boolean;
}

// --- DecoratorController sync / finalize ---

/**
 * The body Metacontroller posts to a DecoratorController's sync and finalize hooks: the JSON
 * tags of `DecoratorHookRequest` in `pkg/controller/decorator/api/v2/hooks.go`, built by its
 * `requestBuilder` from `pkg/controller/decorator/hooks.go` (`buildHookRequest`). `attachments`
 * and `related` are never `null` there (`toUniformObjectMap` makes an empty map), and
 * `attachments` carries one (possibly empty) group per attachment rule
 * (`pkg/controller/decorator/controller.go`, `getChildren`). `finalizing` is `true` when the
 * finalize hook is called: the object is being deleted or no longer matches the selector
 * (`shouldCallFinalizeHook`).
 */
export interface DecoratorHookRequest<P extends KubernetesObject = KubernetesObject> {
  /** The DecoratorController object. */
  controller?: KubernetesObject;
  /** The decorated object. */
  object: P;
  /** Observed attachments: those this decorator created and the object controls. */
  attachments: ObjectMap;
  /** Objects selected by the customize hook's rules. */
  related: ObjectMap;
  finalizing: boolean;
}

/**
 * What a DecoratorController handler is given: the {@link DecoratorHookRequest} under the names
 * of Metacontroller's Go struct fields (`Parent` for `object`, `Children` for `attachments`),
 * so that composite and decorator handlers read the same way. The request check
 * (`request-shape.ts`) reads the wire names and builds this; never post this shape.
 */
export interface DecoratorSyncRequest<P extends KubernetesObject = KubernetesObject> {
  controller?: KubernetesObject;
  /** The decorated object (`object` on the wire). */
  parent: P;
  /** Observed attachments (`attachments` on the wire). */
  children: ObjectMap;
  related: ObjectMap;
  finalizing: boolean;
}

/**
 * The answer, decoded into `DecoratorHookResponse` (`pkg/controller/decorator/api/v2/hooks.go`)
 * and applied by `syncParentObject` (`pkg/controller/decorator/controller.go`).
 */
export interface DecoratorSyncResponse {
  /** Labels to set on the decorated object; `null` removes one, others are left alone. */
  labels?: Record<string, string | null>;
  /** Annotations to set on the decorated object; `null` removes one, others are left alone. */
  annotations?: Record<string, string | null>;
  /**
   * Replaces the decorated object's `.status` whole (through the status subresource when it
   * has one); omitted or `null` leaves it unchanged.
   */
  status?: object | null;
  /**
   * Every desired attachment; an observed attachment left out is deleted. Attachments without
   * a namespace get the object's.
   */
  attachments: KubernetesObject[];
  /** One-time resync of the object after this many seconds. */
  resyncAfterSeconds?: number;
  /** Finalize hook only: `true` removes Metacontroller's finalizer from the object. */
  finalized?: boolean;
}

/**
 * Every field a v2 response may carry, per hook kind. A `version: v2` hook's answer is decoded
 * strictly unless the hook sets `responseUnmarshallMode` (`pkg/hooks/webhook.go`,
 * `responseUnmarshallMode`): an unknown field fails the call.
 */
export const RESPONSE_FIELDS = {
  customize: ['relatedResources'],
  compositeSync: ['status', 'children', 'resyncAfterSeconds', 'finalized'],
  decoratorSync: [
    'labels',
    'annotations',
    'status',
    'attachments',
    'resyncAfterSeconds',
    'finalized',
  ],
} as const satisfies Record<string, readonly string[]>;

// --- helpers ---

/** The outer `children`/`related` key: `childKey('v1', 'Service')` is `Service.v1`. */
export function childKey(apiVersion: string, kind: string): string {
  return `${kind}.${apiVersion}`;
}

/** The inner key: `namespace/name`, or `name` for a cluster-scoped object. */
export function objectKey(obj: { metadata: { name: string; namespace?: string } }): string {
  const { name, namespace } = obj.metadata;
  return namespace ? `${namespace}/${name}` : name;
}

/**
 * Groups objects the way Metacontroller does in a v2 request. Useful to build
 * requests in tests. Throws on two objects with the same type and key, which
 * Metacontroller can never send.
 */
export function toObjectMap(list: readonly KubernetesObject[]): ObjectMap {
  const map: ObjectMap = {};
  for (const obj of list) {
    const type = childKey(obj.apiVersion, obj.kind);
    const key = objectKey(obj);
    const group = (map[type] ??= {});
    if (group[key] !== undefined) {
      throw new Error(`toObjectMap: duplicate object ${type} ${key}`);
    }
    group[key] = obj;
  }
  return map;
}

/**
 * The objects of one type, sorted by key so results are deterministic. `T`
 * is the caller's statement of what the type key holds (Metacontroller sends
 * objects in the apiVersion the key names); it is not checked.
 */
export function listObjects<T extends KubernetesObject = KubernetesObject>(
  map: ObjectMap,
  type: string,
): T[] {
  const group = map[type] ?? {};
  return Object.keys(group)
    .sort(compareStrings)
    .map((key) => group[key] as T);
}

/**
 * The objects of one group, or undefined when Metacontroller sent no such group at all: a source
 * that was not observed is not the same as one observed and empty.
 */
export function observedGroup<T extends KubernetesObject = KubernetesObject>(
  map: ObjectMap,
  type: string,
): T[] | undefined {
  if (map[type] === undefined || map[type] === null) return undefined;
  return listObjects<T>(map, type).filter(isJsonObject);
}

/** One object by type and name (and namespace for namespaced objects), if observed. */
export function findObject<T extends KubernetesObject = KubernetesObject>(
  map: ObjectMap,
  type: string,
  name: string,
  namespace?: string,
): T | undefined {
  return map[type]?.[objectKey({ metadata: { name, namespace } })] as T | undefined;
}
