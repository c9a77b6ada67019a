/**
 * Why a hook request that made its handler throw was malformed, if it was.
 *
 * Handlers trust what the apiserver guarantees about the objects Metacontroller sends: a Pod's
 * `spec.containers` is an array, a Cell carries the fields its CRD schema requires, nothing
 * nests hundreds of levels deep. A body that breaks those guarantees did not come from
 * Metacontroller, and a handler may fail on it with a TypeError or a stack overflow. That is the
 * caller's mistake, not the server's: after a handler fails, the server asks this module, and
 * answers 400 with its reasons instead of 500 (an unexplained failure stays a 500, a bug).
 *
 * It runs only after a failure, so a well-formed request pays nothing for it.
 */
import { KINDS, KIND_NAMES, API_VERSION, type KindName } from '../api/kinds.js';
import { validateObject } from '../api/validate-object.js';
import { isJsonObject, jsonTypeOf, keySegment, summarizeProblems } from '../json/json.js';

/** Deeper than any Kubernetes object nests (managedFields included); JSON recursion fails far deeper. */
export const MAX_BODY_DEPTH = 200;

/** Problems of a request body that the apiserver would never have produced; undefined if none. */
export function describeMalformedRequest(body: unknown): string | undefined {
  if (nestingDepthExceeds(body, MAX_BODY_DEPTH)) {
    return `request body nests deeper than ${MAX_BODY_DEPTH} levels; no Kubernetes object does`;
  }
  if (!isJsonObject(body)) return undefined;
  const problems: string[] = [];
  // `parent`/`children` in a CompositeController's request, `object`/`attachments` in a
  // DecoratorController's (Metacontroller's pkg/controller/decorator/api/v2/hooks.go).
  for (const field of ['parent', 'object'] as const) {
    const object = body[field];
    if (isJsonObject(object)) problems.push(...objectProblems(object, `request.${field}`));
  }
  for (const field of ['children', 'attachments', 'related'] as const) {
    const map = body[field];
    if (!isJsonObject(map)) continue;
    for (const [type, group] of Object.entries(map)) {
      if (!isJsonObject(group)) continue;
      for (const [key, object] of Object.entries(group)) {
        if (!isJsonObject(object)) continue;
        problems.push(
          ...objectProblems(object, `request.${field}${keySegment(type)}${keySegment(key)}`),
        );
        if (problems.length > 10) return summarizeProblems(problems);
      }
    }
  }
  return problems.length > 0 ? summarizeProblems(problems) : undefined;
}

/** Whether `value` nests more than `max` arrays or objects deep (iterative: no recursion). */
export function nestingDepthExceeds(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (current === null || typeof current !== 'object') continue;
    if (depth >= max) return true;
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

function isKindName(kind: unknown): kind is KindName {
  return typeof kind === 'string' && (KIND_NAMES as readonly string[]).includes(kind);
}

function objectProblems(object: Record<string, unknown>, path: string): string[] {
  // A KubeCell object: its CRD schema, as the apiserver enforces it (status included).
  if (object.apiVersion === API_VERSION && isKindName(object.kind)) {
    return validateObject(KINDS[object.kind], object).map((error) => `${path}: ${error.message}`);
  }
  const problems: string[] = [];
  const expect = (value: unknown, shape: Shape, where: string): void => {
    if (value === undefined || value === null) return;
    const problem = SHAPES[shape](value);
    if (problem !== undefined) problems.push(`${path}.${where}: ${problem}`);
  };
  const metadata = isJsonObject(object.metadata) ? object.metadata : {};
  expect(metadata.labels, 'stringMap', 'metadata.labels');
  expect(metadata.annotations, 'stringMap', 'metadata.annotations');
  expect(metadata.ownerReferences, 'objectList', 'metadata.ownerReferences');
  expect(object.spec, 'object', 'spec');
  expect(object.status, 'object', 'status');
  expect(object.data, 'stringMap', 'data');
  const spec = isJsonObject(object.spec) ? object.spec : {};
  const status = isJsonObject(object.status) ? object.status : {};
  expect(status.conditions, 'objectList', 'status.conditions');
  expect(status.addresses, 'objectList', 'status.addresses');
  expect(status.capacity, 'quantityMap', 'status.capacity');
  expect(status.allocatable, 'quantityMap', 'status.allocatable');
  expect(spec.capacity, 'quantityMap', 'spec.capacity');
  expect(spec.overhead, 'quantityMap', 'spec.overhead');
  expect(spec.ports, 'objectList', 'spec.ports');
  expect(spec.taints, 'objectList', 'spec.taints');
  for (const [field, shape] of SCALARS) {
    const [part, name] = field.split('.') as [string, string];
    const holder = part === 'metadata' ? metadata : part === 'spec' ? spec : status;
    expect(holder[name], shape, field);
  }
  for (const [list, fields] of LIST_SCALARS) {
    const [part, name] = list.split('.') as [string, string];
    const items = (part === 'spec' ? spec : status)[name];
    if (!Array.isArray(items)) continue;
    items.forEach((item, i) => {
      if (!isJsonObject(item)) return;
      for (const [field, shape] of fields) expect(item[field], shape, `${list}[${i}].${field}`);
    });
  }
  const template =
    isJsonObject(spec.template) && isJsonObject(spec.template.spec) ? spec.template.spec : {};
  for (const [pod, where] of [
    [spec, 'spec'],
    [template, 'spec.template.spec'],
  ] as const) {
    for (const list of ['containers', 'initContainers'] as const) {
      expect(pod[list], 'objectList', `${where}.${list}`);
      if (!Array.isArray(pod[list])) continue;
      (pod[list] as unknown[]).forEach((container, i) => {
        if (!isJsonObject(container)) return;
        expect(container.name, 'string', `${where}.${list}[${i}].name`);
        expect(container.image, 'string', `${where}.${list}[${i}].image`);
        const resources = container.resources;
        expect(resources, 'object', `${where}.${list}[${i}].resources`);
        if (!isJsonObject(resources)) return;
        expect(resources.requests, 'quantityMap', `${where}.${list}[${i}].resources.requests`);
        expect(resources.limits, 'quantityMap', `${where}.${list}[${i}].resources.limits`);
      });
    }
  }
  const terms =
    isJsonObject(spec.nodeAffinity) && isJsonObject(spec.nodeAffinity.required)
      ? spec.nodeAffinity.required.nodeSelectorTerms
      : undefined;
  expect(terms, 'objectList', 'spec.nodeAffinity.required.nodeSelectorTerms');
  if (Array.isArray(terms)) {
    terms.forEach((term, i) => {
      if (!isJsonObject(term)) return;
      expect(
        term.matchExpressions,
        'objectList',
        `spec.nodeAffinity.required.nodeSelectorTerms[${i}].matchExpressions`,
      );
    });
  }
  return problems;
}

type Shape =
  'string' | 'number' | 'boolean' | 'object' | 'objectList' | 'stringMap' | 'quantityMap';

/** Scalars the apiserver types, which hooks compare, parse or print. */
const SCALARS: Array<[string, Shape]> = [
  ['metadata.creationTimestamp', 'string'],
  ['metadata.deletionTimestamp', 'string'],
  ['metadata.resourceVersion', 'string'],
  ['spec.nodeName', 'string'],
  ['spec.type', 'string'],
  ['spec.renewTime', 'string'],
  ['spec.leaseDurationSeconds', 'number'],
  ['spec.unschedulable', 'boolean'],
  ['spec.hubAcceptsClient', 'boolean'],
  ['status.phase', 'string'],
  ['status.replicas', 'number'],
  ['status.readyReplicas', 'number'],
  ['status.availableReplicas', 'number'],
  ['status.updatedReplicas', 'number'],
  ['status.desiredNumberScheduled', 'number'],
  ['status.currentNumberScheduled', 'number'],
  ['status.numberReady', 'number'],
  ['status.numberAvailable', 'number'],
];

/** Scalars of the items of typed lists. */
const LIST_SCALARS: Array<[string, Array<[string, Shape]>]> = [
  [
    'status.conditions',
    [
      ['type', 'string'],
      ['status', 'string'],
      ['reason', 'string'],
      ['message', 'string'],
      ['lastTransitionTime', 'string'],
    ],
  ],
  [
    'status.addresses',
    [
      ['type', 'string'],
      ['address', 'string'],
    ],
  ],
  [
    'spec.ports',
    [
      ['name', 'string'],
      ['port', 'number'],
      ['nodePort', 'number'],
    ],
  ],
];

const SHAPES: Record<Shape, (value: unknown) => string | undefined> = {
  string: (value) =>
    typeof value === 'string' ? undefined : `must be a string, got ${jsonTypeOf(value)}`,
  number: (value) =>
    typeof value === 'number' ? undefined : `must be a number, got ${jsonTypeOf(value)}`,
  boolean: (value) =>
    typeof value === 'boolean' ? undefined : `must be a boolean, got ${jsonTypeOf(value)}`,
  object: (value) =>
    isJsonObject(value) ? undefined : `must be an object, got ${jsonTypeOf(value)}`,
  objectList: (value) => {
    if (!Array.isArray(value)) return `must be an array, got ${jsonTypeOf(value)}`;
    const bad = value.findIndex((item) => !isJsonObject(item));
    return bad === -1 ? undefined : `[${bad}] must be an object, got ${jsonTypeOf(value[bad])}`;
  },
  stringMap: (value) => {
    if (!isJsonObject(value)) return `must be an object, got ${jsonTypeOf(value)}`;
    const bad = Object.entries(value).find(([, item]) => typeof item !== 'string');
    return bad === undefined
      ? undefined
      : `${keySegment(bad[0])} must be a string, got ${jsonTypeOf(bad[1])}`;
  },
  quantityMap: (value) => {
    if (!isJsonObject(value)) return `must be an object, got ${jsonTypeOf(value)}`;
    const bad = Object.entries(value).find(
      ([, item]) => typeof item !== 'string' && typeof item !== 'number',
    );
    return bad === undefined
      ? undefined
      : `${keySegment(bad[0])} must be a quantity (string or number), got ${jsonTypeOf(bad[1])}`;
  },
};
