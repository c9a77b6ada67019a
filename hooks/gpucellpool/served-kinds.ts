/**
 * Which kinds the apiserver serves, from its discovery API, for the GPUCellPool customize hook.
 *
 * Why: a customize answer is all or nothing. Metacontroller v4.17.2 resolves every related rule
 * through its discovery cache before it lists anything (`GetRelatedObjects` → `getRelatedClient`
 * → `dynClient.Resource`, pkg/controller/common/customize/manager.go and
 * pkg/dynamic/clientset/clientset.go); one rule whose resource is not served fails the whole
 * sync with "discovery: can't find resource <r> in apiVersion <v>", before the sync hook is
 * called: the pool gets a SyncError event, no status, and a retry with backoff, forever. So the
 * customize hook asks only for kinds the apiserver serves, and the sync hook, seeing such a group
 * missing from `related`, reports the kind and the fix as a condition (assess.ts, `KindNotServed`).
 * Discovery also gives the true plural of a kind (`kubeadmconfigtemplates`), which a customize
 * rule needs and the pool's template references do not name.
 *
 * Discovery needs API credentials: `KUBECONFIG`, or the in-cluster ServiceAccount (every
 * authenticated user may read discovery: the `system:discovery` ClusterRole, no RBAC of
 * KubeCell's). Without them, or when discovery does not answer, a kind is `unknown` and the
 * customize hook asks for it anyway, with the guessed plural (the behaviour before discovery):
 * never worse than without it.
 */
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig } from '../kube/kube-config.js';
import { describeFailure } from '../kube/api-failure.js';
import { requestDeadline } from '../kube/request-deadline.js';
import { DISCOVERY_TIMEOUT_MS, DISCOVERY_TTL_MS } from './constants.js';

/** One entry of an APIResourceList. */
export interface ApiResourceEntry {
  /** The plural, with `/<subresource>` for subresources. */
  name: string;
  kind: string;
}

/**
 * The resources of one apiVersion (`v1`, `group/version`), or undefined when the apiserver serves
 * no such group/version (404). Throws on any other failure.
 */
export type FetchApiResources = (apiVersion: string) => Promise<ApiResourceEntry[] | undefined>;

export type KindLookup =
  /** Served, under this resource (plural) name. */
  | { state: 'served'; resource: string }
  /** The apiserver answered, and does not serve the kind in this apiVersion. */
  | { state: 'notServed' }
  /** Not known: no credentials, or discovery failed (`why` says which). */
  | { state: 'unknown'; why: string };

export interface ServedKinds {
  lookup(apiVersion: string, kind: string): Promise<KindLookup>;
}

/** Every kind unknown, for a hook server without API credentials. */
export function unknownServedKinds(why: string): ServedKinds {
  return { lookup: async () => ({ state: 'unknown', why }) };
}

/**
 * Fixed answers, for tests and offline tools: `served[apiVersion][kind]` is the resource; an
 * apiVersion or kind not listed is not served.
 */
export function staticServedKinds(
  served: Readonly<Record<string, Readonly<Record<string, string>>>>,
): ServedKinds {
  return {
    async lookup(apiVersion, kind) {
      const resource = served[apiVersion]?.[kind];
      return resource === undefined ? { state: 'notServed' } : { state: 'served', resource };
    },
  };
}

export interface DiscoveryOptions {
  /** How long an apiVersion's resource list is reused to say a kind is served. */
  ttlMs?: number;
  /** Milliseconds since the epoch; the test's clock. */
  clock?: () => number;
}

/**
 * Kinds looked up through `fetch`, one request per apiVersion and `ttlMs`; concurrent lookups of
 * one apiVersion share the request. Only "served" is taken from a list fetched earlier: "not
 * served" is always checked against a list fetched for this lookup, because Metacontroller keeps
 * the customize answer built on it for 20 minutes, and a CRD installed a moment ago must not be
 * missed for that long. A failed request is not remembered: the next lookup asks again.
 */
export function discoveryServedKinds(
  fetch: FetchApiResources,
  { ttlMs = DISCOVERY_TTL_MS, clock = Date.now }: DiscoveryOptions = {},
): ServedKinds {
  interface Entry {
    expires: number;
    answer: Promise<ApiResourceEntry[] | undefined>;
  }
  const cache = new Map<string, Entry>();
  const refresh = (apiVersion: string): Entry => {
    const entry = { expires: clock() + ttlMs, answer: fetch(apiVersion) };
    cache.set(apiVersion, entry);
    return entry;
  };
  const find = (resources: ApiResourceEntry[] | undefined, kind: string): KindLookup => {
    const found = resources?.find((r) => r.kind === kind && !r.name.includes('/'));
    return found === undefined ? { state: 'notServed' } : { state: 'served', resource: found.name };
  };
  const ask = async (entry: Entry, apiVersion: string, kind: string): Promise<KindLookup> => {
    try {
      return find(await entry.answer, kind);
    } catch (err) {
      if (cache.get(apiVersion) === entry) cache.delete(apiVersion);
      return {
        state: 'unknown',
        why: `API discovery of ${apiVersion} failed: ${describeFailure(err)}`,
      };
    }
  };
  return {
    async lookup(apiVersion, kind) {
      const cached = cache.get(apiVersion);
      if (cached === undefined || cached.expires <= clock()) {
        return ask(refresh(apiVersion), apiVersion, kind);
      }
      const answer = await ask(cached, apiVersion, kind);
      // Not served by a list fetched earlier: ask again, a CRD may have arrived since.
      return answer.state === 'notServed' ? ask(refresh(apiVersion), apiVersion, kind) : answer;
    },
  };
}

/** `FetchApiResources` against a real apiserver, each request bounded by `timeoutMs`. */
export function kubernetesApiResources(
  kubeConfig: KubeConfig,
  timeoutMs = DISCOVERY_TIMEOUT_MS,
): FetchApiResources {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const withDeadline = () => requestDeadline(timeoutMs);
  return async (apiVersion) => {
    const slash = apiVersion.indexOf('/');
    try {
      const list =
        slash === -1
          ? await core.getAPIResources(withDeadline())
          : await custom.getAPIResources(
              { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) },
              withDeadline(),
            );
      return list.resources.map(({ name, kind }) => ({ name, kind }));
    } catch (err) {
      if ((err as { code?: unknown }).code === 404) return undefined;
      if (err instanceof Error && err.name === 'AbortError') {
        throw new Error(`no answer within ${timeoutMs} ms`, { cause: err });
      }
      throw err;
    }
  };
}

/**
 * The served kinds of the cluster the hook server runs in or is pointed at: discovery when `env`
 * has `KUBECONFIG` or the hook server runs in a Pod (`KUBERNETES_SERVICE_HOST`), with the
 * credentials of kube-api.ts, created on first use; every kind `unknown` otherwise (a hook server
 * started by hand or in unit tests, which asks for every kind as before).
 */
export function servedKindsFromEnv(env: NodeJS.ProcessEnv): ServedKinds {
  if (!env.KUBECONFIG && !env.KUBERNETES_SERVICE_HOST) {
    return unknownServedKinds(
      'no Kubernetes API credentials (KUBECONFIG is not set and the hook server does not run in a Pod)',
    );
  }
  let resolved: ServedKinds | undefined;
  return {
    lookup(apiVersion, kind) {
      if (resolved === undefined) {
        try {
          resolved = discoveryServedKinds(kubernetesApiResources(loadKubeConfig().kubeConfig));
        } catch (err) {
          resolved = unknownServedKinds(
            `no Kubernetes API credentials: ${err instanceof Error ? err.message : String(err)}`,
          );
        }
      }
      return resolved.lookup(apiVersion, kind);
    },
  };
}
