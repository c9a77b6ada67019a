/** A managed cluster's apiserver in memory, for the agent's tests. */
import { Writable } from 'node:stream';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { ApiError, type AgentApi } from './kube-api.js';

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
  if (!selector) return true;
  const [key, value] = selector.split('=');
  const labels = object.metadata.labels ?? {};
  return value === undefined ? key! in labels : labels[key!] === value;
}

export interface FakeApi extends AgentApi {
  objects: Map<string, KubernetesObject>;
  /** Every create and update, as `METHOD path`. */
  writes: string[];
  /** Makes every call of `path`'s collection fail (a read the agent cannot make). */
  failing: Set<string>;
  put(...objects: KubernetesObject[]): void;
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
  const api: FakeApi = {
    objects,
    writes,
    failing,
    put: (...more) => {
      for (const object of more) objects.set(pathOf(object), stamp(object));
    },
    list: async (path) => {
      check(path);
      const [base, search] = path.split('?');
      const segments = base!.split('/');
      const resource = segments.pop()!;
      const root = segments.join('/');
      const pattern = new RegExp(`^${root}(/namespaces/[^/]+)?/${resource}/[^/]+$`);
      const query = new URLSearchParams(search ?? '');
      return [...objects.entries()]
        .filter(([key, object]) => pattern.test(key) && selects(object, query))
        .map(([, object]) => structuredClone(object));
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
      objects.set(key, stamp(object));
    },
    update: async (path, object) => {
      const current = objects.get(path);
      if (!current) throw new ApiError(404, `PUT ${path}: HTTP 404: not found`);
      if (current.metadata.resourceVersion !== object.metadata.resourceVersion)
        throw new ApiError(409, `PUT ${path}: HTTP 409: conflict`);
      writes.push(`PUT ${path}`);
      objects.set(path, stamp(object));
    },
  };
  api.put(...initial);
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
