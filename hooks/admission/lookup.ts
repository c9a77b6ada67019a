/**
 * What the cross-object admission rules read from the cluster, behind a small interface so that
 * tests can answer from memory. The real implementation reads the apiserver with
 * @kubernetes/client-node (credentials: kube-api.ts); its ServiceAccount needs `get` on
 * namespaces, cells.kubecell.io and virtualnodeclasses.kubecell.io, and `list` on
 * virtualclusters.kubecell.io cluster-wide (manifests/webhook/base/rbac.yaml). These live reads
 * confirm what the watch cache (cached-lookup.ts) would refuse, and answer while it is not synced.
 */
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
} from '@kubernetes/client-node';
import { describeFailure } from '../kube/api-failure.js';
import { requestDeadline } from '../kube/request-deadline.js';
import { GROUP, KINDS, VERSION } from '../api/kinds.js';
import { isJsonObject } from '../json/json.js';

/** A Cell or VirtualNodeClass as the apiserver returned it, read without trusting its shape. */
export function placementTarget(object: unknown): PlacementTargetSummary | undefined {
  if (!isJsonObject(object) || !isJsonObject(object.metadata)) return undefined;
  const { name, namespace, uid } = object.metadata;
  const spec = isJsonObject(object.spec) ? object.spec : undefined;
  return {
    metadata: {
      name: typeof name === 'string' ? name : '',
      ...(typeof namespace === 'string' ? { namespace } : {}),
      ...(typeof uid === 'string' ? { uid } : {}),
    },
    ...(spec === undefined
      ? {}
      : {
          spec:
            spec.namespaceSelector === undefined
              ? {}
              : { namespaceSelector: spec.namespaceSelector },
        }),
  };
}

/** The part of a VirtualCluster the rules read. */
export interface VirtualClusterSummary {
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    deletionTimestamp?: string;
  };
  status?: { resolved?: { cell?: { name?: string; uid?: string } } };
}

/**
 * The part of a Cell or VirtualNodeClass the rules read: its `spec.namespaceSelector`, which
 * says which namespaces may use it.
 */
export interface PlacementTargetSummary {
  metadata: { name: string; namespace?: string; uid?: string };
  spec?: { namespaceSelector?: unknown };
}

export interface ListOptions {
  /** Only this namespace; all namespaces when absent. */
  namespace?: string;
  /** Equality selector `key=value`. */
  labelSelector?: string;
}

export interface ClusterLookup {
  /** The labels of a Namespace, or `undefined` when it does not exist. Throws on other failures. */
  namespaceLabels(name: string): Promise<Record<string, string> | undefined>;
  /** VirtualClusters, in one namespace or all, optionally by label. */
  listVirtualClusters(options: ListOptions): Promise<VirtualClusterSummary[]>;
  /** A Cell, or `undefined` when it does not exist. Throws on other failures. */
  getCell(namespace: string, name: string): Promise<PlacementTargetSummary | undefined>;
  /** A VirtualNodeClass, or `undefined` when it does not exist. Throws on other failures. */
  getVirtualNodeClass(name: string): Promise<PlacementTargetSummary | undefined>;
}

/** A lookup that could not be made; the webhook denies, naming it (failurePolicy: Fail). */
export class LookupError extends Error {
  constructor(
    /** What was being read, e.g. `reading Namespace "tenant-a"`. */
    readonly what: string,
    cause: unknown,
  ) {
    super(`${what} failed: ${describeFailure(cause)}`, { cause });
    this.name = 'LookupError';
  }
}

/** The apiserver answered 404 Not Found. */
function isNotFound(err: unknown): boolean {
  return err instanceof ApiException && err.code === 404;
}

export interface KubernetesLookupOptions {
  /**
   * Aborts a request the apiserver has not answered after this long, so that none lingers.
   * The admission rules give up on a lookup sooner (cross-object.ts, DEFAULT_LOOKUP_TIMEOUT_MS).
   */
  requestTimeoutMs?: number;
}

/** The clients of a real lookup and the deadline of each request. */
interface KubeReader {
  core: CoreV1Api;
  custom: CustomObjectsApi;
  requestTimeoutMs: number;
}

function withDeadline(reader: KubeReader) {
  return requestDeadline(reader.requestTimeoutMs);
}

/** A request aborted by its deadline says so; other failures pass as they are. */
function failure(reader: KubeReader, err: unknown): unknown {
  return err instanceof Error && err.name === 'AbortError'
    ? new Error(`no answer within ${reader.requestTimeoutMs} ms`, { cause: err })
    : err;
}

/** The lookup against a real apiserver, with the credentials of `kubeConfig` (kube-api.ts). */
export function createKubernetesLookup(
  kubeConfig: KubeConfig,
  { requestTimeoutMs = 10_000 }: KubernetesLookupOptions = {},
): ClusterLookup {
  const reader: KubeReader = {
    core: kubeConfig.makeApiClient(CoreV1Api),
    custom: kubeConfig.makeApiClient(CustomObjectsApi),
    requestTimeoutMs,
  };
  return {
    namespaceLabels: (name) => readNamespaceLabels(reader, name),
    listVirtualClusters: (options) => listVirtualClusters(reader, options),
    getCell: (namespace, name) => readCell(reader, namespace, name),
    getVirtualNodeClass: (name) => readVirtualNodeClass(reader, name),
  };
}

async function readNamespaceLabels(
  reader: KubeReader,
  name: string,
): Promise<Record<string, string> | undefined> {
  try {
    const namespace = await reader.core.readNamespace({ name }, withDeadline(reader));
    return namespace.metadata?.labels ?? {};
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw new LookupError(`reading Namespace ${JSON.stringify(name)}`, failure(reader, err));
  }
}

async function listVirtualClusters(
  reader: KubeReader,
  { namespace, labelSelector }: ListOptions,
): Promise<VirtualClusterSummary[]> {
  const where =
    namespace === undefined ? 'all namespaces' : `namespace ${JSON.stringify(namespace)}`;
  const selected = labelSelector === undefined ? '' : ` with label ${labelSelector}`;
  const plural = KINDS.VirtualCluster.plural;
  try {
    const list = (await (namespace === undefined
      ? reader.custom.listClusterCustomObject(
          { group: GROUP, version: VERSION, plural, labelSelector },
          withDeadline(reader),
        )
      : reader.custom.listNamespacedCustomObject(
          { group: GROUP, version: VERSION, namespace, plural, labelSelector },
          withDeadline(reader),
        ))) as { items?: VirtualClusterSummary[] };
    return list.items ?? [];
  } catch (err) {
    throw new LookupError(`listing VirtualClusters in ${where}${selected}`, failure(reader, err));
  }
}

async function readCell(
  reader: KubeReader,
  namespace: string,
  name: string,
): Promise<PlacementTargetSummary | undefined> {
  try {
    return placementTarget(
      await reader.custom.getNamespacedCustomObject(
        { group: GROUP, version: VERSION, namespace, plural: KINDS.Cell.plural, name },
        withDeadline(reader),
      ),
    );
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw new LookupError(
      `reading Cell ${JSON.stringify(name)} in namespace ${JSON.stringify(namespace)}`,
      failure(reader, err),
    );
  }
}

async function readVirtualNodeClass(
  reader: KubeReader,
  name: string,
): Promise<PlacementTargetSummary | undefined> {
  try {
    return placementTarget(
      await reader.custom.getClusterCustomObject(
        { group: GROUP, version: VERSION, plural: KINDS.VirtualNodeClass.plural, name },
        withDeadline(reader),
      ),
    );
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw new LookupError(`reading VirtualNodeClass ${JSON.stringify(name)}`, failure(reader, err));
  }
}

/** Objects known in advance, for tests and offline checks. */
export interface InMemoryCluster {
  /** Namespace name → labels. */
  namespaces?: Record<string, Record<string, string>>;
  virtualClusters?: VirtualClusterSummary[];
  /** Cells, each with its metadata.namespace. */
  cells?: PlacementTargetSummary[];
  virtualNodeClasses?: PlacementTargetSummary[];
}

/** Whether `labels` match an equality selector `key=value,...` (none: everything matches). */
export function matchesSelector(
  labels: Record<string, string> | undefined,
  selector?: string,
): boolean {
  if (selector === undefined || selector === '') return true;
  return selector.split(',').every((term) => {
    const [key, value] = term.split('=');
    return key !== undefined && labels?.[key.trim()] === value?.trim();
  });
}

/** A lookup answering from `cluster`; a namespace not listed does not exist. */
export function createInMemoryLookup(cluster: InMemoryCluster): ClusterLookup {
  return {
    async namespaceLabels(name) {
      return cluster.namespaces?.[name];
    },
    async listVirtualClusters({ namespace, labelSelector }) {
      return (cluster.virtualClusters ?? []).filter(
        (vc) =>
          (namespace === undefined || vc.metadata.namespace === namespace) &&
          matchesSelector(vc.metadata.labels, labelSelector),
      );
    },
    async getCell(namespace, name) {
      return (cluster.cells ?? []).find(
        (cell) => cell.metadata.namespace === namespace && cell.metadata.name === name,
      );
    },
    async getVirtualNodeClass(name) {
      return (cluster.virtualNodeClasses ?? []).find((cls) => cls.metadata.name === name);
    },
  };
}
