/** A managed cluster's apiserver in memory, for the agent's tests. */
import { Writable } from 'node:stream';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { ApiError, type AgentApi, type WatchApi, type WatchHandlers } from './kube-api.js';

const CORE_KINDS: Record<string, string> = {
  Node: 'nodes',
  Pod: 'pods',
  Namespace: 'namespaces',
  Service: 'services',
  PersistentVolume: 'persistentvolumes',
  ConfigMap: 'configmaps',
  Secret: 'secrets',
};
const GROUP_KINDS: Record<string, string> = {
  Deployment: 'apps/v1/deployments',
  DaemonSet: 'apps/v1/daemonsets',
  CustomResourceDefinition: 'apiextensions.k8s.io/v1/customresourcedefinitions',
};

/**
 * A ConfigMap as the hub's work creates it for the agent to fill (a report, a sealed kubeconfig):
 * empty; the agent only updates it.
 */
export function emptyConfigMap(namespace: string, name: string): KubernetesObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace } };
}

/**
 * What a VirtualCluster's work brings for the agent: its host namespace (labelled, with the
 * VirtualCluster's UID and name) and the ConfigMap to seal into, empty.
 */
export function deliveredVirtualCluster(
  namespace: string,
  name: string,
  uid: string,
): KubernetesObject[] {
  const host: KubernetesObject = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: namespace,
      labels: { 'kubecell.io/host-namespace': 'true', 'kubecell.io/virtualcluster-uid': uid },
      annotations: { 'kubecell.io/virtualcluster': name },
    },
  };
  return [host, emptyConfigMap(namespace, `kubecell-${name}-sealed-kubeconfig`)];
}

/** k3k's admin kubeconfig Secret of VirtualCluster `name`, as k3k writes it. */
export function k3kKubeconfigSecret(
  namespace: string,
  name: string,
  kubeconfig: string,
): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `k3k-${name}-kubeconfig`, namespace },
    data: { 'kubeconfig.yaml': Buffer.from(kubeconfig).toString('base64') },
  } as KubernetesObject;
}

/** What the agent's work creates empty for its signing key: the Secret and the ConfigMap. */
export function agentWorkObjects(): KubernetesObject[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'kubecell-cell-agent-signing-key', namespace: 'kubecell-system' },
      type: 'Opaque',
    } as KubernetesObject,
    emptyConfigMap('kubecell-system', 'kubecell-cell-agent-identity'),
  ];
}

/** The REST path of an object. */
export function pathOf(object: KubernetesObject): string {
  const { name, namespace } = object.metadata;
  const core = CORE_KINDS[object.kind];
  const grouped = GROUP_KINDS[object.kind];
  if (!core && !grouped) throw new Error(`no path for ${object.kind}`);
  const [root, resource] = core
    ? ['/api/v1', core]
    : [`/apis/${grouped!.split('/').slice(0, 2).join('/')}`, grouped!.split('/')[2]!];
  return `${root}${namespace ? `/namespaces/${namespace}` : ''}/${resource}/${name}`;
}

function selects(object: KubernetesObject, query: URLSearchParams): boolean {
  const selector = query.get('labelSelector');
  const field = query.get('fieldSelector');
  if (field?.startsWith('metadata.name=') && object.metadata.name !== field.slice(14)) return false;
  if (!selector) return true;
  const [key, value] = selector.split('=');
  const labels = object.metadata.labels ?? {};
  return value === undefined ? key! in labels : labels[key!] === value;
}

/** The objects of collection `path` (`/api/v1/pods?labelSelector=...`) among `objects`. */
function inCollection(
  path: string,
  query: URLSearchParams,
): (key: string, object: KubernetesObject) => boolean {
  const segments = path.split('/');
  const resource = segments.pop()!;
  const pattern = new RegExp(`^${segments.join('/')}(/namespaces/[^/]+)?/${resource}/[^/]+$`);
  return (key, object) => pattern.test(key) && selects(object, query);
}

/** An open watch of the fake apiserver. */
export interface FakeWatch {
  path: string;
  query: Record<string, string | number | boolean>;
  handlers: WatchHandlers;
  open: boolean;
}

export interface FakeApi extends AgentApi {
  objects: Map<string, KubernetesObject>;
  /** Every create and update, as `METHOD path`. */
  writes: string[];
  /** Makes every call of `path`'s collection fail (a read the agent cannot make), watches too. */
  failing: Set<string>;
  /** Writes objects as the cluster's other writers do (k3k, OCM's work agent): watches see it. */
  put(...objects: KubernetesObject[]): void;
  /** Watches as the apiserver serves them: ADDED for what exists (without resourceVersion), then changes. */
  watch: WatchApi;
  /** Every watch opened, closed ones included. */
  watches: FakeWatch[];
}

export function fakeApi(...initial: KubernetesObject[]): FakeApi {
  const objects = new Map<string, KubernetesObject>();
  const writes: string[] = [];
  const failing = new Set<string>();
  let version = 1;
  const stamp = (object: KubernetesObject): KubernetesObject => {
    const copy = structuredClone(object);
    copy.metadata.resourceVersion = String(version++);
    return copy;
  };
  const check = (path: string): void => {
    for (const prefix of failing)
      if (path.startsWith(prefix)) throw new ApiError(403, `GET ${prefix}: HTTP 403: forbidden`);
  };
  const watches: FakeWatch[] = [];
  const notify = (key: string, object: KubernetesObject, type: string): void => {
    for (const watch of watches) {
      const query = new URLSearchParams(
        Object.entries(watch.query).map(([k, v]) => [k, String(v)]),
      );
      if (watch.open && inCollection(watch.path, query)(key, object))
        watch.handlers.event(type, structuredClone(object));
    }
  };
  const store = (key: string, object: KubernetesObject): void => {
    const type = objects.has(key) ? 'MODIFIED' : 'ADDED';
    const stamped = stamp(object);
    objects.set(key, stamped);
    notify(key, stamped, type);
  };
  const api: FakeApi = {
    objects,
    writes,
    failing,
    watches,
    put: (...more) => {
      for (const object of more) store(pathOf(object), object);
    },
    list: async (path) => {
      check(path);
      const [base, search] = path.split('?');
      const wanted = inCollection(base!, new URLSearchParams(search ?? ''));
      return [...objects.entries()]
        .filter(([key, object]) => wanted(key, object))
        .map(([, object]) => structuredClone(object));
    },
    watch: async (path, query, handlers) => {
      const watch: FakeWatch = { path, query, handlers, open: true };
      try {
        check(path);
      } catch (error) {
        handlers.done(error);
        return { abort: () => {} };
      }
      watches.push(watch);
      if (query['resourceVersion'] === undefined) {
        const params = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
        const existing = [...objects.entries()].filter(([key, object]) =>
          inCollection(path, params)(key, object),
        );
        setImmediate(() => {
          for (const [, object] of existing)
            if (watch.open) handlers.event('ADDED', structuredClone(object));
        });
      }
      return { abort: () => void (watch.open = false) };
    },
    get: async (path) => {
      check(path);
      const object = objects.get(path);
      return object && structuredClone(object);
    },
    create: async (path, object) => {
      const key = `${path}/${object.metadata.name}`;
      if (objects.has(key)) throw new ApiError(409, `POST ${path}: HTTP 409: already exists`);
      writes.push(`POST ${key}`);
      store(key, object);
    },
    update: async (path, object) => {
      const current = objects.get(path);
      if (!current) throw new ApiError(404, `PUT ${path}: HTTP 404: not found`);
      if (current.metadata.resourceVersion !== object.metadata.resourceVersion)
        throw new ApiError(409, `PUT ${path}: HTTP 409: conflict`);
      writes.push(`PUT ${path}`);
      store(path, object);
    },
  };
  for (const object of initial) objects.set(pathOf(object), stamp(object));
  return api;
}

/** A stream for the agent's logger and the JSON lines written to it so far. */
export function captureLogLines(): { lines: () => Record<string, unknown>[]; stream: Writable } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { lines, stream };
}
