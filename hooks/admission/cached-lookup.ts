/**
 * The admission webhook's lookups answered from memory: the Namespaces (their labels), the Cells
 * of the controller namespace and the VirtualNodeClasses (their spec.namespaceSelector), and the
 * VirtualClusters (VirtualClusterSummary), each kept from a list and a watch (watch-cache.ts).
 *
 * The cache may only admit (decision D38): cross-object.ts runs the rules against it first, and
 * when they refuse, or a collection is not synced (a read throws CacheUnavailable), runs them
 * again with the live lookup (lookup.ts) and answers with that verdict. A stale cache therefore
 * never refuses; what it can do is admit a request made within moments of a change it has not
 * seen yet, the race two live reads already have with a concurrent write. A Cell not in the
 * cache reads as absent, as the live read answers for a Cell created a moment later.
 *
 * The ServiceAccount needs `list` and `watch` on namespaces, cells.kubecell.io,
 * virtualnodeclasses.kubecell.io and virtualclusters.kubecell.io
 * (manifests/webhook/base/rbac.yaml).
 */
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, KINDS, VERSION } from '../api/kinds.js';
import { isJsonObject } from '../json/json.js';
import { requestDeadline } from '../kube/request-deadline.js';
import type { Logger } from '../server/logger.js';
import {
  matchesSelector,
  placementTarget,
  type ClusterLookup,
  type VirtualClusterSummary,
} from './lookup.js';
import { CacheUnavailable, WatchedCollection, type CollectionDeps } from './watch-cache.js';

/** A list of a whole collection may be long; it still must not hang. */
const LIST_TIMEOUT_MS = 30_000;

export interface WatchCacheOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  /** Where Cells live (KUBECELL_CONTROLLER_NAMESPACE): only those are kept. */
  controllerNamespace: string;
  /** Milliseconds before the first retry of a failed list or watch; default 1 s. */
  retryFirstMs?: number;
}

export interface WatchCache {
  /** Answers from memory; throws CacheUnavailable for a collection not synced. */
  lookup: ClusterLookup;
  /** True when every collection is synced. */
  synced(): boolean;
  stop(): void;
}

function stringRecord(value: unknown): Record<string, string> | undefined {
  if (!isJsonObject(value)) return undefined;
  const entries = Object.entries(value).filter(
    (entry): entry is [string, string] => typeof entry[1] === 'string',
  );
  return Object.fromEntries(entries);
}

function text(object: unknown, key: string): string | undefined {
  const value = isJsonObject(object) ? object[key] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** A Namespace's labels (a Namespace without labels has none: `{}`). */
function namespaceLabels(object: unknown): Record<string, string> | undefined {
  const metadata = isJsonObject(object) ? object.metadata : undefined;
  return isJsonObject(metadata) ? (stringRecord(metadata.labels) ?? {}) : undefined;
}

/** The part of a VirtualCluster the rules read. */
export function virtualClusterSummary(object: unknown): VirtualClusterSummary | undefined {
  const metadata = isJsonObject(object) ? object.metadata : undefined;
  const name = text(metadata, 'name');
  if (!isJsonObject(metadata) || name === undefined) return undefined;
  const [namespace, uid, deletionTimestamp] = ['namespace', 'uid', 'deletionTimestamp'].map((key) =>
    text(metadata, key),
  );
  const labels = stringRecord(metadata.labels);
  const status = isJsonObject(object) ? object.status : undefined;
  const resolved = isJsonObject(status) ? status.resolved : undefined;
  const cell = isJsonObject(resolved) ? resolved.cell : undefined;
  const [cellName, cellUid] = [text(cell, 'name'), text(cell, 'uid')];
  return {
    metadata: {
      name,
      ...(namespace === undefined ? {} : { namespace }),
      ...(uid === undefined ? {} : { uid }),
      ...(labels === undefined ? {} : { labels }),
      ...(deletionTimestamp === undefined ? {} : { deletionTimestamp }),
    },
    ...(isJsonObject(cell)
      ? {
          status: {
            resolved: {
              cell: {
                ...(cellName === undefined ? {} : { name: cellName }),
                ...(cellUid === undefined ? {} : { uid: cellUid }),
              },
            },
          },
        }
      : {}),
  };
}

/** The four collections the placement rules read, as kept summaries. */
function collections(options: WatchCacheOptions) {
  const { kubeConfig, controllerNamespace } = options;
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const customApi = kubeConfig.makeApiClient(CustomObjectsApi);
  const deps: CollectionDeps = {
    kubeConfig,
    logger: options.logger,
    ...(options.retryFirstMs === undefined ? {} : { retryFirstMs: options.retryFirstMs }),
  };
  const deadline = () => requestDeadline(LIST_TIMEOUT_MS);
  /** A kubecell.io collection, in one namespace or all. */
  const custom = <S>(
    plural: string,
    summarize: (object: unknown) => S | undefined,
    name: string,
    namespace?: string,
  ) =>
    new WatchedCollection<S>(
      {
        name,
        path: `/apis/${GROUP}/${VERSION}${namespace === undefined ? '' : `/namespaces/${namespace}`}/${plural}`,
        list: (): Promise<unknown> =>
          namespace === undefined
            ? customApi.listClusterCustomObject(
                { group: GROUP, version: VERSION, plural },
                deadline(),
              )
            : customApi.listNamespacedCustomObject(
                { group: GROUP, version: VERSION, namespace, plural },
                deadline(),
              ),
        summarize,
      },
      deps,
    );
  const { Cell, VirtualNodeClass, VirtualCluster } = KINDS;
  return {
    namespaces: new WatchedCollection<Record<string, string>>(
      {
        name: 'Namespaces',
        path: '/api/v1/namespaces',
        list: () => core.listNamespace({}, deadline()),
        summarize: namespaceLabels,
      },
      deps,
    ),
    cells: custom(
      Cell.plural,
      placementTarget,
      `Cells in namespace ${controllerNamespace}`,
      controllerNamespace,
    ),
    classes: custom(VirtualNodeClass.plural, placementTarget, 'VirtualNodeClasses'),
    virtualClusters: custom(VirtualCluster.plural, virtualClusterSummary, 'VirtualClusters'),
  };
}

/** Starts the four collections; the lookup answers from each once it is synced. */
export function startWatchCache(options: WatchCacheOptions): WatchCache {
  const kept = collections(options);
  const all = Object.values(kept);
  for (const collection of all) collection.start();
  const { namespaces, cells, classes, virtualClusters } = kept;
  return {
    lookup: {
      namespaceLabels: async (name) => namespaces.get(name),
      listVirtualClusters: async ({ namespace, labelSelector }) =>
        virtualClusters
          .list(namespace)
          .filter((vc) => matchesSelector(vc.metadata.labels, labelSelector)),
      getCell: async (namespace, name) => {
        if (namespace !== options.controllerNamespace) throw new CacheUnavailable(cells.spec.name);
        return cells.get(name, namespace);
      },
      getVirtualNodeClass: async (name) => classes.get(name),
    },
    synced: () => all.every((collection) => collection.synced),
    stop: () => {
      for (const collection of all) collection.stop();
    },
  };
}
