/**
 * The admission rules that read other objects (rules.ts), with their inputs gathered through a
 * `ClusterLookup` (lookup.ts): the VirtualClusters that resolved a Cell whose frozen fields an
 * update changes, and for a VirtualCluster or plan its Namespace's labels, the VirtualClusters
 * already in it, and the Cell and VirtualNodeClass it names. Each lookup has its own deadline,
 * and a failed lookup is a `LookupError`: the rule was not checked, so the caller must deny.
 *
 * With a watch cache (cached-lookup.ts), a VirtualCluster's or plan's rules are run against it
 * first, and again with the live lookups when they refuse or the cache cannot answer: the cache
 * may only admit (decision D38). A Cell update's check of the VirtualClusters that resolved it
 * always reads live: it protects tenants' clusters, and Cell updates are rare.
 */
import type { FieldError } from '../api/field-errors.js';
import { LABELS, isLabelValue } from '../kube/labels.js';
import { LookupError, type ClusterLookup } from './lookup.js';
import {
  cellInUseErrors,
  changedFrozenCellFields,
  hostNamespaceError,
  namespaceNotAllowedError,
  namespaceTakenError,
  pathValue,
  resolvesCell,
  type PlacementTarget,
  type RuleInput,
} from './rules.js';

/** Budget for one lookup: the webhook configuration's timeoutSeconds is 10. */
export const DEFAULT_LOOKUP_TIMEOUT_MS = 4000;

export interface CrossObjectOptions {
  /** The live lookups: they decide every refusal. */
  lookup: ClusterLookup;
  /** A watch cache, tried first for a VirtualCluster or plan; a refusal is confirmed live. */
  cache?: ClusterLookup;
  timeoutMs?: number;
}

/** The lookup and the budget of each of its calls. */
interface Gathering {
  lookup: ClusterLookup;
  timeoutMs: number;
}

/**
 * The rules of one CREATE or UPDATE that read other objects. Lookups are made
 * only when a rule needs them (a Cell update that leaves its frozen fields alone reads nothing).
 * Throws a `LookupError` when a lookup fails: the caller must deny, the rule was not checked.
 */
export async function crossObjectRules(
  input: RuleInput,
  { lookup, cache, timeoutMs = DEFAULT_LOOKUP_TIMEOUT_MS }: CrossObjectOptions,
): Promise<FieldError[]> {
  const gathering: Gathering = { lookup, timeoutMs };
  if (input.kind === 'Cell') return cellInUseRules(input, gathering);
  if (input.kind === 'VirtualCluster' || input.kind === 'VirtualClusterPlan') {
    if (cache !== undefined) {
      const cached = await admittedByCache(input, { lookup: cache, timeoutMs });
      if (cached) return [];
    }
    return placementRules(input, gathering);
  }
  return [];
}

/**
 * True when the rules pass against the cache. A refusal, or a cache that cannot answer (not
 * synced, watch broken: CacheUnavailable), is false: the caller decides with live reads.
 */
async function admittedByCache(input: RuleInput, cached: Gathering): Promise<boolean> {
  try {
    return (await placementRules(input, cached)).length === 0;
  } catch (err) {
    if (err instanceof LookupError) return false;
    throw err;
  }
}

function withTimeout<T>(what: string, timeoutMs: number, run: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new LookupError(what, new Error(`no answer within ${timeoutMs} ms`))),
      timeoutMs,
    );
    run().then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof LookupError ? err : new LookupError(what, err));
      },
    );
  });
}

function nameOf(object: unknown): string | undefined {
  const name = pathValue(object, 'metadata', 'name');
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** A Cell update changing frozen fields while VirtualClusters have resolved the Cell. */
async function cellInUseRules(
  input: RuleInput,
  { lookup, timeoutMs }: Gathering,
): Promise<FieldError[]> {
  const { operation, object, oldObject } = input;
  if (operation !== 'UPDATE' || oldObject === undefined) return [];
  const cellName = nameOf(oldObject) ?? nameOf(object);
  if (changedFrozenCellFields(object, oldObject).length === 0 || !isLabelValue(cellName)) {
    return [];
  }
  const selector = `${LABELS.cell}=${cellName}`;
  const candidates = await withTimeout(
    `listing VirtualClusters with label ${selector}`,
    timeoutMs,
    () => lookup.listVirtualClusters({ labelSelector: selector }),
  );
  const uid = pathValue(oldObject, 'metadata', 'uid');
  const resolvers = candidates.filter((vc) =>
    resolvesCell(vc, cellName, typeof uid === 'string' ? uid : undefined),
  );
  return cellInUseErrors(object, oldObject, resolvers);
}

/**
 * A VirtualCluster or plan outside a host namespace, a second VirtualCluster in a namespace, and
 * a Cell or class whose namespaceSelector does not select the namespace.
 */
async function placementRules(input: RuleInput, gathering: Gathering): Promise<FieldError[]> {
  const { kind, operation, object, namespace } = input;
  if (namespace === undefined) return [];
  const creating = operation === 'CREATE';
  const refs = refsToCheck(input);
  if (!creating && refs.length === 0) return [];
  const { lookup, timeoutMs } = gathering;
  // Every lookup at once: the webhook's whole budget is timeoutSeconds (10).
  const [labels, others, targets] = await Promise.all([
    withTimeout(`reading Namespace ${JSON.stringify(namespace)}`, timeoutMs, () =>
      lookup.namespaceLabels(namespace),
    ),
    kind === 'VirtualCluster' && creating
      ? withTimeout(
          `listing VirtualClusters in namespace ${JSON.stringify(namespace)}`,
          timeoutMs,
          () => lookup.listVirtualClusters({ namespace }),
        )
      : undefined,
    Promise.all(refs.map((ref) => placementTarget(ref, input.controllerNamespace, gathering))),
  ]);
  const errors: FieldError[] = [];
  const notHost = creating ? hostNamespaceError(kind, namespace, labels) : undefined;
  if (notHost) errors.push(notHost);
  const taken =
    others === undefined ? undefined : namespaceTakenError(namespace, nameOf(object), others);
  if (taken) errors.push(taken);
  // In a namespace that is no host namespace the selectors would only add noise: the
  // platform has not opted it in at all.
  if (notHost === undefined) {
    for (const target of targets) {
      const error = namespaceNotAllowedError(kind, namespace, labels, target);
      if (error) errors.push(error);
    }
  }
  return errors;
}

interface PlacementRef {
  kind: PlacementTarget['kind'];
  field: string;
  path: readonly string[];
  name: string;
}

/**
 * The refs whose targets are read: all on CREATE. A plan's refs may be edited (a new generation is
 * evaluated again), so a plan's UPDATE reads those it changes; a VirtualCluster's are immutable
 * (CEL). An update that leaves the refs alone reads nothing.
 */
function refsToCheck(input: RuleInput): PlacementRef[] {
  const { kind, operation, object, oldObject } = input;
  return placementRefs(object).filter(
    (ref) =>
      operation === 'CREATE' ||
      (kind === 'VirtualClusterPlan' &&
        oldObject !== undefined &&
        pathValue(oldObject, ...ref.path) !== ref.name),
  );
}

/** The Cell (in the controller namespace) or VirtualNodeClass a ref names, as it is now. */
async function placementTarget(
  ref: PlacementRef,
  controllerNamespace: string,
  { lookup, timeoutMs }: Gathering,
): Promise<PlacementTarget> {
  return {
    kind: ref.kind,
    field: ref.field,
    name: ref.name,
    object: await (ref.kind === 'Cell'
      ? withTimeout(
          `reading Cell ${JSON.stringify(ref.name)} in namespace ${JSON.stringify(controllerNamespace)}`,
          timeoutMs,
          () => lookup.getCell(controllerNamespace, ref.name),
        )
      : withTimeout(`reading VirtualNodeClass ${JSON.stringify(ref.name)}`, timeoutMs, () =>
          lookup.getVirtualNodeClass(ref.name),
        )),
  };
}

const OBJECT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * The Cell and class a VirtualCluster or plan names, when the name is one an object can have (the
 * schema reports any other, and nothing is looked up under it).
 */
function placementRefs(object: unknown): PlacementRef[] {
  const refs = [
    { kind: 'Cell', field: 'spec.cellRef.name', path: ['spec', 'cellRef', 'name'] },
    { kind: 'VirtualNodeClass', field: 'spec.classRef.name', path: ['spec', 'classRef', 'name'] },
  ] as const;
  return refs.flatMap((ref) => {
    const name = pathValue(object, ...ref.path);
    return typeof name === 'string' && name.length <= 253 && OBJECT_NAME.test(name)
      ? [{ ...ref, name }]
      : [];
  });
}
