/**
 * The shape of the Kubernetes objects KubeCell reads (Nodes, Pods, PersistentVolumes, Leases,
 * ManagedClusters, Services, Secrets, k3k Clusters, workloads), as the apiserver guarantees it:
 * the fields the controllers compare, parse or print have the types their Kubernetes API gives
 * them, and every quantity parses. A body that breaks this did not come from Metacontroller.
 *
 * One JSON Schema for every non-KubeCell object, compiled once by ajv; KubeCell's own objects are
 * checked against their CRD schema instead (request-validation.ts). `null` is accepted wherever
 * a value may be absent: Go marshals an unset pointer as `null`.
 */
import { _, Ajv, type ErrorObject, type KeywordCxt } from 'ajv';
import { jsonTypeOf, keySegment } from '../json/json.js';
import { ANNOTATIONS } from '../kube/labels.js';
import { parseQuantity } from '../quantity/quantity.js';

type Schema = Record<string, unknown>;

const nullable = (type: string): { type: string[] } => ({ type: [type, 'null'] });
const string = nullable('string');
const number = nullable('number');
const boolean = nullable('boolean');
const object = (properties: Record<string, Schema> = {}): Schema => ({
  ...nullable('object'),
  properties,
});
const objectList = (properties: Record<string, Schema> = {}): Schema => ({
  ...nullable('array'),
  items: { type: 'object', properties },
});
const stringMap: Schema = { ...nullable('object'), additionalProperties: { type: 'string' } };
const quantityMap: Schema = {
  ...nullable('object'),
  additionalProperties: { type: ['string', 'number'], quantity: true },
};

const containers = objectList({
  name: string,
  image: string,
  resources: object({ requests: quantityMap, limits: quantityMap }),
});
const podSpec = { containers, initContainers: containers };

export const OBSERVED_OBJECT_SCHEMA: Schema = {
  type: 'object',
  properties: {
    metadata: object({
      labels: stringMap,
      // TopoLVM publishes each device class's free bytes on the Node (the Cell adds them up).
      annotations: {
        ...stringMap,
        patternProperties: {
          [`^${ANNOTATIONS.topolvmCapacityPrefix.replaceAll('.', '\\.')}`]: {
            type: 'string',
            quantity: true,
          },
        },
      },
      ownerReferences: objectList(),
      creationTimestamp: string,
      deletionTimestamp: string,
      resourceVersion: string,
    }),
    data: stringMap,
    spec: object({
      ...podSpec,
      template: object({ spec: object(podSpec) }),
      capacity: quantityMap,
      overhead: quantityMap,
      ports: objectList({ name: string, port: number, nodePort: number }),
      taints: objectList(),
      nodeName: string,
      type: string,
      renewTime: string,
      leaseDurationSeconds: number,
      unschedulable: boolean,
      hubAcceptsClient: boolean,
      nodeAffinity: object({
        required: object({
          nodeSelectorTerms: objectList({ matchExpressions: objectList() }),
        }),
      }),
    }),
    status: object({
      conditions: objectList({
        type: string,
        status: string,
        reason: string,
        message: string,
        lastTransitionTime: string,
      }),
      addresses: objectList({ type: string, address: string }),
      capacity: quantityMap,
      allocatable: quantityMap,
      phase: string,
      replicas: number,
      readyReplicas: number,
      availableReplicas: number,
      updatedReplicas: number,
      desiredNumberScheduled: number,
      currentNumberScheduled: number,
      numberReady: number,
      numberAvailable: number,
    }),
  },
};

function isQuantity(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  try {
    parseQuantity(value as string);
    return true;
  } catch {
    return false;
  }
}

const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
ajv.addKeyword({
  keyword: 'quantity',
  // Inlined as a call with the value alone. A `validate` keyword is called with a context that
  // holds the value's instancePath, built (two regex replaces) for every quantity of every
  // container: about a fifth of a Cell request's validation (issue 25). A failure reports the
  // same error as before: keyword `quantity`, the value's instancePath and schemaPath.
  code(cxt: KeywordCxt) {
    const check = cxt.gen.scopeValue('func', { ref: isQuantity });
    cxt.pass(_`${check}(${cxt.data})`);
  },
});
const validateObserved = ajv.compile(OBSERVED_OBJECT_SCHEMA);

/** The shape problems of one observed object, each prefixed with `path`; [] when none. */
export function observedObjectProblems(value: unknown, path: string): string[] {
  if (validateObserved(value)) return [];
  const errors = validateObserved.errors ?? [];
  // A value of the wrong type fails `quantity` too; its type error says enough.
  const mistyped = new Set(errors.filter((e) => e.keyword === 'type').map((e) => e.instancePath));
  return errors
    .filter((error) => error.keyword !== 'quantity' || !mistyped.has(error.instancePath))
    .map((error) => `${path}${fieldPath(error)}: ${describe(error)}`);
}

function describe(error: ErrorObject): string {
  if (error.keyword === 'quantity') return 'must be a quantity such as 4, 500m or 16Gi';
  if (error.keyword !== 'type') return error.message ?? 'is invalid';
  const expected = [error.params.type as string | string[]]
    .flat()
    .filter((type) => type !== 'null');
  const got = jsonTypeOf(error.data);
  if (expected.length > 1) return `must be a quantity (string or number), got ${got}`;
  const type =
    expected[0] === 'array' || expected[0] === 'object'
      ? `an ${expected[0]}`
      : `a ${String(expected[0])}`;
  return `must be ${type}, got ${got}`;
}

/**
 * `/status/capacity/nvidia.com~1gpu` → `.status.capacity["nvidia.com/gpu"]`: a field by name, an
 * item by index, a map entry by its key, as the schema path says which each step is.
 */
function fieldPath(error: ErrorObject): string {
  const values = error.instancePath
    .split('/')
    .slice(1)
    .map((raw) => raw.replaceAll('~1', '/').replaceAll('~0', '~'));
  const steps = error.schemaPath.split('/').slice(1);
  let path = '';
  for (let i = 0; i < steps.length && values.length > 0; i++) {
    if (steps[i] === 'properties') {
      path += `.${String(values.shift())}`;
      i++;
    } else if (steps[i] === 'items') path += `[${String(values.shift())}]`;
    else if (steps[i] === 'additionalProperties') path += keySegment(String(values.shift()));
    else if (steps[i] === 'patternProperties') {
      path += keySegment(String(values.shift()));
      i++;
    }
  }
  return path;
}
