// A minimal JSON REST client for the kube-apiserver, for the simulated actors of harness/simulate/.
//
// Why not @kubernetes/client-node: the actors write a handful of shapes (apply, merge-patch of
// /status, create, delete, list) as plain JSON objects, often objects of CRDs the generated
// models do not know (ManagedCluster, k3k Cluster, VirtualMachine, Machine). Typed models would
// turn timestamps into Date objects and drop unknown fields; a raw https client sends exactly the
// JSON written here, reuses its connections (keep-alive agent) and costs no start-up. The
// kubeconfigs of the local control plane embed their certificates (harness/cluster/kubeconfig.ts),
// so that is what this client reads; a bearer token works too.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { parse } from 'yaml';
import type { ObjectMeta } from '../../hooks/metacontroller/protocol.js';

/** Object metadata as the apiserver serves it: the same fields the hooks read. */
export type { ObjectMeta };

/** Any Kubernetes object as JSON. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** A failed request: the HTTP status, the apiserver's reason and message. */
export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly apiMessage: string,
    readonly method: string,
    readonly path: string,
  ) {
    super(`${method} ${path}: ${status} ${reason}: ${apiMessage}`);
    this.name = 'KubeApiError';
  }
}

export function isNotFound(error: unknown): boolean {
  return error instanceof KubeApiError && error.status === 404;
}

export function isConflict(error: unknown): boolean {
  return error instanceof KubeApiError && error.status === 409;
}

export interface ResourceRef {
  apiVersion: string;
  /** The plural resource name (`nodes`, `managedclusters`). */
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/**
 * The REST path of a resource: `/api/v1/...` for the core group, `/apis/<group>/<version>/...`
 * otherwise, with `/namespaces/<ns>` when namespaced.
 */
export function resourcePath(ref: ResourceRef): string {
  const base = ref.apiVersion.includes('/') ? `/apis/${ref.apiVersion}` : `/api/${ref.apiVersion}`;
  const scope = ref.namespace ? `/namespaces/${encodeURIComponent(ref.namespace)}` : '';
  const name = ref.name ? `/${encodeURIComponent(ref.name)}` : '';
  const sub = ref.name && ref.subresource ? `/${ref.subresource}` : '';
  return `${base}${scope}/${ref.resource}${name}${sub}`;
}

interface KubeconfigFile {
  'current-context'?: string;
  contexts?: { name: string; context: { cluster: string; user: string } }[];
  clusters?: {
    name: string;
    cluster: {
      server: string;
      'certificate-authority-data'?: string;
      'certificate-authority'?: string;
      'insecure-skip-tls-verify'?: boolean;
    };
  }[];
  users?: {
    name: string;
    user: {
      'client-certificate-data'?: string;
      'client-key-data'?: string;
      'client-certificate'?: string;
      'client-key'?: string;
      token?: string;
    };
  }[];
}

export interface KubeClientOptions {
  /** Per-request timeout; default 30 s. */
  timeoutMs?: number;
  /** Most sockets kept open to the apiserver; default 16. */
  maxSockets?: number;
}

interface Connection {
  server: URL;
  agent: http.Agent;
  token?: string;
}

function fromBase64OrFile(data: string | undefined, file: string | undefined): Buffer | undefined {
  if (data) return Buffer.from(data, 'base64');
  if (file) return readFileSync(file);
  return undefined;
}

function connectionFrom(kubeconfigPath: string, options: KubeClientOptions): Connection {
  const config = parse(readFileSync(kubeconfigPath, 'utf8')) as KubeconfigFile;
  const contextName = config['current-context'] ?? config.contexts?.[0]?.name;
  const context = config.contexts?.find((entry) => entry.name === contextName)?.context;
  const cluster = config.clusters?.find((entry) => entry.name === context?.cluster)?.cluster;
  const user = config.users?.find((entry) => entry.name === context?.user)?.user;
  if (!context || !cluster || !user) {
    throw new Error(`${kubeconfigPath}: no usable current context (${contextName ?? 'none'})`);
  }
  const server = new URL(cluster.server);
  const agentOptions = {
    keepAlive: true,
    maxSockets: options.maxSockets ?? 16,
  };
  if (server.protocol === 'http:') return { server, agent: new http.Agent(agentOptions) };
  const agent = new https.Agent({
    ...agentOptions,
    ca: fromBase64OrFile(cluster['certificate-authority-data'], cluster['certificate-authority']),
    cert: fromBase64OrFile(user['client-certificate-data'], user['client-certificate']),
    key: fromBase64OrFile(user['client-key-data'], user['client-key']),
    rejectUnauthorized: cluster['insecure-skip-tls-verify'] !== true,
  });
  return { server, agent, ...(user.token ? { token: user.token } : {}) };
}

interface DiscoveredResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
}

export class KubeClient {
  private readonly connection: Connection;
  private readonly timeoutMs: number;
  private readonly discovery = new Map<string, Promise<DiscoveredResource[]>>();

  constructor(
    readonly kubeconfigPath: string,
    options: KubeClientOptions = {},
  ) {
    this.connection = connectionFrom(kubeconfigPath, options);
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** Closes the kept-alive sockets. */
  close(): void {
    this.connection.agent.destroy();
  }

  /** One request; the parsed JSON answer, or a KubeApiError with the apiserver's message. */
  request<T>(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<T> {
    const { server, agent, token } = this.connection;
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
    const transport = server.protocol === 'http:' ? http : https;
    return new Promise<T>((resolve, reject) => {
      const request = transport.request(
        {
          protocol: server.protocol,
          hostname: server.hostname,
          port: server.port,
          path: `${server.pathname.replace(/\/$/, '')}${path}`,
          method,
          agent,
          timeout: this.timeoutMs,
          headers: {
            Accept: 'application/json',
            ...(payload
              ? { 'Content-Type': contentType, 'Content-Length': String(payload.length) }
              : {}),
            ...(token ? { Authorization: `Bearer ${token}` } : {}),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = response.statusCode ?? 0;
            let parsed: unknown;
            try {
              parsed = text === '' ? undefined : JSON.parse(text);
            } catch {
              parsed = undefined;
            }
            if (status >= 200 && status < 300) {
              resolve(parsed as T);
              return;
            }
            const apiStatus = (parsed ?? {}) as { reason?: string; message?: string };
            reject(
              new KubeApiError(
                status,
                apiStatus.reason ?? response.statusMessage ?? 'Error',
                apiStatus.message ?? text.slice(0, 500),
                method,
                path,
              ),
            );
          });
        },
      );
      request.on('timeout', () => {
        request.destroy(new Error(`${method} ${path}: no answer within ${this.timeoutMs} ms`));
      });
      request.on('error', reject);
      if (payload) request.write(payload);
      request.end();
    });
  }

  get<T extends KubeObject = KubeObject>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  /** The object, or undefined when the apiserver answers 404. */
  async find<T extends KubeObject = KubeObject>(path: string): Promise<T | undefined> {
    try {
      return await this.get<T>(path);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Every item of a collection, following `continue` tokens (500 per page). */
  async list<T extends KubeObject = KubeObject>(
    path: string,
    options: ListOptions = {},
  ): Promise<T[]> {
    const items: T[] = [];
    let token: string | undefined;
    do {
      const query = new URLSearchParams({ limit: '500' });
      if (options.labelSelector) query.set('labelSelector', options.labelSelector);
      if (options.fieldSelector) query.set('fieldSelector', options.fieldSelector);
      if (token) query.set('continue', token);
      const page = await this.request<{ items?: T[]; metadata?: { continue?: string } }>(
        'GET',
        `${path}?${query.toString()}`,
      );
      items.push(...(page.items ?? []));
      token = page.metadata?.continue || undefined;
    } while (token);
    return items;
  }

  create<T extends KubeObject = KubeObject>(
    path: string,
    object: unknown,
    fieldManager?: string,
  ): Promise<T> {
    const query = fieldManager ? `?fieldManager=${encodeURIComponent(fieldManager)}` : '';
    return this.request<T>('POST', `${path}${query}`, object);
  }

  /**
   * Server-side apply (`application/apply-patch+yaml`, with a JSON body, which is YAML) with
   * `force=true`: the actor takes the fields it writes, as a controller does.
   */
  async apply<T extends KubeObject = KubeObject>(
    object: KubeObject,
    fieldManager: string,
    subresource?: string,
  ): Promise<T> {
    const path = await this.pathOf(object, subresource);
    const query = `?fieldManager=${encodeURIComponent(fieldManager)}&force=true`;
    return this.request<T>('PATCH', `${path}${query}`, object, 'application/apply-patch+yaml');
  }

  /** A JSON merge patch (`application/merge-patch+json`) of the object at `path`. */
  patch<T extends KubeObject = KubeObject>(
    path: string,
    mergePatch: unknown,
    fieldManager?: string,
  ): Promise<T> {
    const query = fieldManager ? `?fieldManager=${encodeURIComponent(fieldManager)}` : '';
    return this.request<T>('PATCH', `${path}${query}`, mergePatch, 'application/merge-patch+json');
  }

  /** A JSON merge patch of the status subresource: `path` is the object's, `/status` is added. */
  patchStatus<T extends KubeObject = KubeObject>(
    path: string,
    mergePatch: unknown,
    fieldManager?: string,
  ): Promise<T> {
    return this.patch<T>(`${path.replace(/\/status$/, '')}/status`, mergePatch, fieldManager);
  }

  /**
   * Deletes the object; true when it was there, false on 404. Background propagation, like
   * kubectl, unless another policy is given.
   */
  async delete(
    path: string,
    options: { propagationPolicy?: 'Background' | 'Foreground' | 'Orphan'; uid?: string } = {},
  ): Promise<boolean> {
    try {
      await this.request('DELETE', path, {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        propagationPolicy: options.propagationPolicy ?? 'Background',
        ...(options.uid ? { preconditions: { uid: options.uid } } : {}),
      });
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  /** The resources of one API group version, from discovery (cached per client). */
  resources(apiVersion: string): Promise<DiscoveredResource[]> {
    let found = this.discovery.get(apiVersion);
    if (!found) {
      const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      found = this.request<{ resources: DiscoveredResource[] }>('GET', path).then(
        (list) => list.resources,
      );
      // A failed discovery (a CRD not installed yet) is not remembered.
      found.catch(() => this.discovery.delete(apiVersion));
      this.discovery.set(apiVersion, found);
    }
    return found;
  }

  /** Whether the apiserver serves `resource` in `apiVersion` now (asks discovery afresh). */
  async serves(apiVersion: string, resource: string): Promise<boolean> {
    this.discovery.delete(apiVersion);
    try {
      return (await this.resources(apiVersion)).some((entry) => entry.name === resource);
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  /** The REST path of an object, its resource and scope found by discovery. */
  async pathOf(object: KubeObject, subresource?: string): Promise<string> {
    const find = async () =>
      (await this.resources(object.apiVersion)).find(
        (entry) => entry.kind === object.kind && !entry.name.includes('/'),
      );
    let match = await find();
    if (!match) {
      // A CRD installed since discovery was cached: ask again once.
      this.discovery.delete(object.apiVersion);
      match = await find();
    }
    if (!match) throw new Error(`${object.apiVersion} serves no kind ${object.kind}`);
    return resourcePath({
      apiVersion: object.apiVersion,
      resource: match.name,
      ...(match.namespaced ? { namespace: object.metadata.namespace ?? 'default' } : {}),
      name: object.metadata.name,
      ...(subresource ? { subresource } : {}),
    });
  }
}

/** A client for the kubeconfig at `path`, or the client given. */
export function clientFor(client: KubeClient | string, options?: KubeClientOptions): KubeClient {
  return typeof client === 'string' ? new KubeClient(client, options) : client;
}
