/**
 * A minimal read-only Kubernetes API client for the webhook's lookups: GET of JSON over HTTPS
 * with the in-cluster ServiceAccount, or a kubeconfig (client certificate, token or token file).
 *
 * Why not @kubernetes/client-node: its 2.x line depends on undici 8, which needs Node.js
 * 22.19 or later and throws when imported on Node.js 20 (`createZstdDecompress` is undefined),
 * while KubeCell supports Node.js 20. The webhook needs two GETs; this is them
 * (docs/design/decisions.md).
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { parse as parseYaml } from 'yaml';

export interface ApiConnection {
  /** `https://host:port`, without a trailing slash. */
  server: string;
  ca?: string;
  cert?: string;
  key?: string;
  /** Bearer token, read on each request (ServiceAccount tokens are rotated in place). */
  token?: () => Promise<string | undefined>;
  insecureSkipTlsVerify?: boolean;
  /** Where the connection came from, for messages. */
  source: string;
}

/** An answer other than 2xx from the apiserver. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The in-cluster connection, when running in a Pod with a ServiceAccount token. */
export function inClusterConnection(
  env: NodeJS.ProcessEnv = process.env,
  dir: string = SERVICE_ACCOUNT_DIR,
): ApiConnection | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT ?? '443';
  if (!host) return undefined;
  let ca: string;
  try {
    ca = readFileSync(join(dir, 'ca.crt'), 'utf8');
  } catch {
    return undefined;
  }
  const tokenFile = join(dir, 'token');
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    ca,
    token: async () => (await readFile(tokenFile, 'utf8')).trim(),
    source: `in-cluster ServiceAccount (${dir})`,
  };
}

type Yaml = Record<string, unknown>;

function isObject(value: unknown): value is Yaml {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function named(list: unknown, name: unknown, what: string, file: string): Yaml {
  const entry = Array.isArray(list)
    ? list.find((item) => isObject(item) && item.name === name)
    : undefined;
  if (!isObject(entry) || !isObject(entry[what])) {
    throw new Error(`kubeconfig ${file}: no ${what} named ${JSON.stringify(name)}`);
  }
  return entry[what] as Yaml;
}

/** The connection of a kubeconfig file's current context (or `context`). */
export function kubeconfigConnection(file: string, context?: string): ApiConnection {
  const config = parseYaml(readFileSync(file, 'utf8')) as unknown;
  if (!isObject(config)) throw new Error(`kubeconfig ${file} is not a YAML object`);
  const contextName = context ?? config['current-context'];
  const ctx = named(config.contexts, contextName, 'context', file);
  const cluster = named(config.clusters, ctx.cluster, 'cluster', file);
  const user = ctx.user === undefined ? {} : named(config.users, ctx.user, 'user', file);
  const base = dirname(file);
  const data = (inline: unknown, path: unknown): string | undefined => {
    if (typeof inline === 'string') return Buffer.from(inline, 'base64').toString('utf8');
    if (typeof path === 'string') {
      return readFileSync(isAbsolute(path) ? path : join(base, path), 'utf8');
    }
    return undefined;
  };
  if (typeof cluster.server !== 'string')
    throw new Error(`kubeconfig ${file}: cluster has no server`);
  const token = typeof user.token === 'string' ? user.token : undefined;
  const tokenFile = typeof user.tokenFile === 'string' ? user.tokenFile : undefined;
  return {
    server: cluster.server.replace(/\/+$/, ''),
    ca: data(cluster['certificate-authority-data'], cluster['certificate-authority']),
    cert: data(user['client-certificate-data'], user['client-certificate']),
    key: data(user['client-key-data'], user['client-key']),
    token:
      token !== undefined
        ? async () => token
        : tokenFile !== undefined
          ? async () => (await readFile(tokenFile, 'utf8')).trim()
          : undefined,
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    source: `kubeconfig ${file}`,
  };
}

/**
 * The connection the hook server uses: `KUBECONFIG` when set (first file), else the in-cluster
 * ServiceAccount, else `~/.kube/config`. Throws when there is none.
 */
export function loadConnection(env: NodeJS.ProcessEnv = process.env): ApiConnection {
  const kubeconfig = env.KUBECONFIG?.split(':').find((file) => file !== '');
  if (kubeconfig) return kubeconfigConnection(kubeconfig);
  const inCluster = inClusterConnection(env);
  if (inCluster) return inCluster;
  const home = join(homedir(), '.kube', 'config');
  try {
    return kubeconfigConnection(home);
  } catch (err) {
    throw new Error(
      'no Kubernetes API credentials for the webhook lookups: not in a Pod with a ServiceAccount, ' +
        `KUBECONFIG unset, and ${home} unusable (${(err as Error).message})`,
      { cause: err },
    );
  }
}

export interface ApiClient {
  /** GET `path` (with its query) and parse the JSON answer; throws ApiError on non-2xx. */
  getJson(path: string, options?: { timeoutMs?: number }): Promise<unknown>;
}

const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export function createApiClient(connection: ApiConnection): ApiClient {
  const agent = new Agent({
    keepAlive: true,
    ca: connection.ca,
    cert: connection.cert,
    key: connection.key,
    rejectUnauthorized: !connection.insecureSkipTlsVerify,
  });
  return {
    async getJson(path, { timeoutMs = 10_000 } = {}) {
      const token = await connection.token?.();
      const url = new URL(path, `${connection.server}/`);
      return new Promise<unknown>((resolve, reject) => {
        const req = request(
          url,
          {
            method: 'GET',
            agent,
            headers: {
              accept: 'application/json',
              'user-agent': 'kubecell-hooks/admission',
              ...(token ? { authorization: `Bearer ${token}` } : {}),
            },
            timeout: timeoutMs,
          },
          (res) => {
            const chunks: Buffer[] = [];
            let size = 0;
            res.on('data', (chunk: Buffer) => {
              size += chunk.length;
              if (size > MAX_RESPONSE_BYTES) {
                req.destroy(new Error(`answer larger than ${MAX_RESPONSE_BYTES} bytes`));
                return;
              }
              chunks.push(chunk);
            });
            res.on('error', reject);
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              let body: unknown;
              try {
                body = text === '' ? undefined : JSON.parse(text);
              } catch {
                body = undefined;
              }
              const status = res.statusCode ?? 0;
              if (status >= 200 && status < 300) {
                if (body === undefined) reject(new Error('the apiserver answered without JSON'));
                else resolve(body);
                return;
              }
              const message =
                isObject(body) && typeof body.message === 'string'
                  ? body.message
                  : text.slice(0, 200) || (res.statusMessage ?? '');
              reject(new ApiError(status, `HTTP ${status}: ${message}`));
            });
          },
        );
        req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
        req.on('error', reject);
        req.end();
      });
    },
  };
}
