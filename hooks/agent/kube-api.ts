/**
 * The agent's view of its own cluster's apiserver: list, get, create and update objects as the
 * apiserver's JSON (the wire form the Cell controller's functions read, as Metacontroller sends
 * it), and watch a collection (watches.ts). Behind interfaces so the pass and the watches can be
 * tested against memory (testing.ts). The real ones speak HTTP(S) with the credentials
 * @kubernetes/client-node finds (hooks/kube/kube-config.ts: KUBECONFIG, else the Pod's
 * ServiceAccount), refreshed on every request.
 */
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isJsonObject } from '../json/json.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';

export interface AgentApi {
  /** Every object of a collection path (`/api/v1/pods?labelSelector=...`), page by page. */
  list(path: string): Promise<KubernetesObject[]>;
  /** The object at `path`, or undefined when it does not exist (404). */
  get(path: string): Promise<KubernetesObject | undefined>;
  /** POST to a collection path. */
  create(path: string, object: KubernetesObject): Promise<void>;
  /** PUT to an object path (metadata.resourceVersion guards against a lost update). */
  update(path: string, object: KubernetesObject): Promise<void>;
}

/** What a watch tells: each event (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR), then its end. */
export interface WatchHandlers {
  event(type: string, object: unknown): void;
  /** The watch ended: undefined when the apiserver closed it, else why it failed. */
  done(error: unknown): void;
}

/**
 * Opens a watch of a collection path with these query parameters (`watch=true` added); `abort`
 * closes it (no `done` then matters). A refused watch calls `done` with the error.
 */
export type WatchApi = (
  path: string,
  query: Readonly<Record<string, string | number | boolean>>,
  handlers: WatchHandlers,
) => Promise<{ abort(): void }>;

/** Watches on the apiserver of `kubeConfig`'s current cluster (client-node's Watch). */
export function kubeWatch(kubeConfig: KubeConfig): WatchApi {
  const watch = new Watch(kubeConfig);
  return async (path, query, handlers) => {
    const controller = await watch.watch(
      path,
      { ...query },
      (type, object) => handlers.event(type, object),
      (error) => handlers.done(error ?? undefined),
    );
    return { abort: () => controller.abort() };
  };
}

/** An apiserver answer that is not a success; the message is the apiserver's, bounded. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const PAGE = 500;
const MESSAGE_CHARS = 300;

interface Answer {
  status: number;
  text: string;
}

/** The apiserver of `kubeConfig`'s current cluster; each request times out after `timeoutMs`. */
export function kubeApi(kubeConfig: KubeConfig, timeoutMs = 15_000): AgentApi {
  const server = (kubeConfig.getCurrentCluster()?.server ?? '').replace(/\/+$/, '');
  const call = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const options: RequestOptions = {
      method,
      timeout: timeoutMs,
      headers: {
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
    };
    await kubeConfig.applyToHTTPSOptions(options);
    return send(new URL(`${server}${path}`), options, body);
  };
  const json = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const answer = await call(method, path, body);
    if (answer.status < 200 || answer.status >= 300) throw apiError(method, path, answer);
    return answer.text === '' ? undefined : (JSON.parse(answer.text) as unknown);
  };
  return {
    list: async (path) => {
      const items: KubernetesObject[] = [];
      let next: string | undefined;
      do {
        const page = await json('GET', withQuery(path, next));
        const list = isJsonObject(page) ? page : {};
        if (Array.isArray(list['items'])) items.push(...(list['items'] as KubernetesObject[]));
        const meta = isJsonObject(list['metadata']) ? list['metadata'] : {};
        next =
          typeof meta['continue'] === 'string' && meta['continue'] !== ''
            ? meta['continue']
            : undefined;
      } while (next !== undefined);
      return items;
    },
    get: async (path) => {
      const answer = await call('GET', path);
      if (answer.status === 404) return undefined;
      if (answer.status < 200 || answer.status >= 300) throw apiError('GET', path, answer);
      return JSON.parse(answer.text) as KubernetesObject;
    },
    create: async (path, object) => {
      await json('POST', path, object);
    },
    update: async (path, object) => {
      await json('PUT', path, object);
    },
  };
}

function withQuery(path: string, continueToken: string | undefined): string {
  const separator = path.includes('?') ? '&' : '?';
  const token = continueToken === undefined ? '' : `&continue=${encodeURIComponent(continueToken)}`;
  return `${path}${separator}limit=${PAGE}${token}`;
}

function apiError(method: string, path: string, answer: Answer): ApiError {
  let message = answer.text.slice(0, MESSAGE_CHARS);
  try {
    const status = JSON.parse(answer.text) as unknown;
    if (isJsonObject(status) && typeof status['message'] === 'string')
      message = status['message'].slice(0, MESSAGE_CHARS);
  } catch {
    // not a Status object: keep the start of the text
  }
  return new ApiError(
    answer.status,
    `${method} ${path.split('?')[0]}: HTTP ${answer.status}: ${message}`,
  );
}

function send(url: URL, options: RequestOptions, body: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'http:' ? httpRequest : httpsRequest)(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    request.on('timeout', () =>
      request.destroy(new Error(`${url.pathname}: no answer within ${String(options.timeout)} ms`)),
    );
    request.on('error', reject);
    if (body !== undefined) request.write(JSON.stringify(body));
    request.end();
  });
}
