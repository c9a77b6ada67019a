/**
 * What the cross-object admission rules read from the cluster, behind a small interface so that
 * tests can answer from memory. The real implementation reads the apiserver (kube-api.ts); its
 * ServiceAccount needs `get` on namespaces and `list` on virtualclusters.kubecell.io
 * cluster-wide (manifests/webhook/base/rbac.yaml).
 */
import { ApiError, type ApiClient } from './kube-api.js';
import { GROUP, KINDS, VERSION } from './kinds.js';

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

/** A short description of a failure: the apiserver's code and message, or the network error. */
export function describeFailure(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err instanceof ApiError) return err.message;
  const code = (err as NodeJS.ErrnoException).code;
  return `${err.message.split('\n')[0] || err.name}${code && !err.message.includes(code) ? ` (${code})` : ''}`;
}

function isNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.code === 404;
}

interface List<T> {
  items?: T[];
}

/** The lookup against a real apiserver (see kube-api.ts for the connection). */
export function createKubernetesLookup(client: ApiClient): ClusterLookup {
  const plural = KINDS.VirtualCluster.plural;
  return {
    async namespaceLabels(name) {
      try {
        const namespace = (await client.getJson(
          `/api/v1/namespaces/${encodeURIComponent(name)}`,
        )) as {
          metadata?: { labels?: Record<string, string> };
        };
        return namespace.metadata?.labels ?? {};
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw new LookupError(`reading Namespace ${JSON.stringify(name)}`, err);
      }
    },
    async listVirtualClusters({ namespace, labelSelector }) {
      const where =
        namespace === undefined ? 'all namespaces' : `namespace ${JSON.stringify(namespace)}`;
      const selected = labelSelector === undefined ? '' : ` with label ${labelSelector}`;
      const scope = namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
      const query =
        labelSelector === undefined ? '' : `?labelSelector=${encodeURIComponent(labelSelector)}`;
      try {
        const list = (await client.getJson(
          `/apis/${GROUP}/${VERSION}${scope}/${plural}${query}`,
        )) as List<VirtualClusterSummary>;
        return list.items ?? [];
      } catch (err) {
        throw new LookupError(`listing VirtualClusters in ${where}${selected}`, err);
      }
    },
  };
}

/** Objects known in advance, for tests and offline checks. */
export interface InMemoryCluster {
  /** Namespace name → labels. */
  namespaces?: Record<string, Record<string, string>>;
  virtualClusters?: VirtualClusterSummary[];
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
  };
}
