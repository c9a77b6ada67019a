/**
 * What the cross-object admission rules read from the cluster, behind a small interface so that
 * tests can answer from memory. The real implementation reads the apiserver with
 * @kubernetes/client-node (credentials: kube-api.ts); its ServiceAccount needs `get` on
 * namespaces, cells.kubecell.io and virtualnodeclasses.kubecell.io, and `list` on
 * virtualclusters.kubecell.io cluster-wide (manifests/webhook/base/rbac.yaml).
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

/** A Cell or VirtualNodeClass as the apiserver returned it, read without trusting its shape. */
function placementTarget(object: unknown): PlacementTargetSummary | undefined {
  if (!isObject(object) || !isObject(object.metadata)) return undefined;
  const { name, namespace, uid } = object.metadata;
  const spec = isObject(object.spec) ? object.spec : undefined;
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

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The message of an apiserver's answer: its Status `message`, else the start of the body. */
function isNotFound(err: unknown): boolean {
  return err instanceof ApiException && err.code === 404;
}

export interface KubernetesLookupOptions {
  /**
   * Aborts a request the apiserver has not answered after this long, so that none lingers.
   * The admission rules give up on a lookup sooner (rules.ts, DEFAULT_LOOKUP_TIMEOUT_MS).
   */
  requestTimeoutMs?: number;
}

/** The lookup against a real apiserver, with the credentials of `kubeConfig` (kube-api.ts). */
export function createKubernetesLookup(
  kubeConfig: KubeConfig,
  { requestTimeoutMs = 10_000 }: KubernetesLookupOptions = {},
): ClusterLookup {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const plural = KINDS.VirtualCluster.plural;
  const withDeadline = () => requestDeadline(requestTimeoutMs);
  const failure = (err: unknown): unknown =>
    err instanceof Error && err.name === 'AbortError'
      ? new Error(`no answer within ${requestTimeoutMs} ms`, { cause: err })
      : err;
  return {
    async namespaceLabels(name) {
      try {
        const namespace = await core.readNamespace({ name }, withDeadline());
        return namespace.metadata?.labels ?? {};
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw new LookupError(`reading Namespace ${JSON.stringify(name)}`, failure(err));
      }
    },
    async listVirtualClusters({ namespace, labelSelector }) {
      const where =
        namespace === undefined ? 'all namespaces' : `namespace ${JSON.stringify(namespace)}`;
      const selected = labelSelector === undefined ? '' : ` with label ${labelSelector}`;
      try {
        const list = (await (namespace === undefined
          ? custom.listClusterCustomObject(
              { group: GROUP, version: VERSION, plural, labelSelector },
              withDeadline(),
            )
          : custom.listNamespacedCustomObject(
              { group: GROUP, version: VERSION, namespace, plural, labelSelector },
              withDeadline(),
            ))) as { items?: VirtualClusterSummary[] };
        return list.items ?? [];
      } catch (err) {
        throw new LookupError(`listing VirtualClusters in ${where}${selected}`, failure(err));
      }
    },
    async getCell(namespace, name) {
      try {
        return placementTarget(
          await custom.getNamespacedCustomObject(
            { group: GROUP, version: VERSION, namespace, plural: KINDS.Cell.plural, name },
            withDeadline(),
          ),
        );
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw new LookupError(
          `reading Cell ${JSON.stringify(name)} in namespace ${JSON.stringify(namespace)}`,
          failure(err),
        );
      }
    },
    async getVirtualNodeClass(name) {
      try {
        return placementTarget(
          await custom.getClusterCustomObject(
            { group: GROUP, version: VERSION, plural: KINDS.VirtualNodeClass.plural, name },
            withDeadline(),
          ),
        );
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw new LookupError(`reading VirtualNodeClass ${JSON.stringify(name)}`, failure(err));
      }
    },
  };
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

function matchesSelector(labels: Record<string, string> | undefined, selector?: string): boolean {
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
