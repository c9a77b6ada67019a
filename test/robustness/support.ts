/**
 * Shared by the robustness tests: real HTTP servers on loopback, raw requests, the hook
 * registry as the server wires it, and helpers to compare answers as they travel on the wire.
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type express from 'express';
import type { CompositeSyncResponse } from '../../hooks/metacontroller/protocol.js';
import { registerControllers } from '../../hooks/controllers/register.js';
import { HookRegistry } from '../../hooks/server/registry.js';

/** A server listening on 127.0.0.1 on a free port. */
export interface Served {
  base: string;
  close(): Promise<void>;
}

export async function serve(app: express.Express): Promise<Served> {
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
const ANSWER_WITHIN_MS = 15_000;

/** One request with exactly these bytes and headers; rejects only when the connection fails. */
export function rawRequest(
  url: string,
  options: { method?: string; body?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: options.method ?? 'POST', headers: options.headers ?? {}, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    // A hostile body must not keep the server busy: no answer within this is a failure too.
    req.setTimeout(ANSWER_WITHIN_MS, () =>
      req.destroy(new Error(`no answer within ${ANSWER_WITHIN_MS / 1000} s from ${url}`)),
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export function postJson(url: string, text: string | Buffer): Promise<RawResponse> {
  return rawRequest(url, { body: text, headers: { 'content-type': 'application/json' } });
}

/** What a value becomes after a trip through JSON, as Metacontroller stores and sends it. */
export function wire<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** The real registry, as the hook server wires it, with a fixed clock. */
export function productRegistry(now: () => Date, env: NodeJS.ProcessEnv = {}): HookRegistry {
  return registerControllers(new HookRegistry(), { env, clock: now });
}

/**
 * Calls a hook the way the server does (request check, handler, nothing else) and returns the
 * answer after a trip through JSON. Throws what the handler throws.
 */
export async function callHook(
  registry: HookRegistry,
  controller: string,
  hook: string,
  body: unknown,
): Promise<CompositeSyncResponse> {
  const lookup = registry.lookup(controller, hook);
  if (!lookup.found) throw new Error(lookup.message);
  const prepared = lookup.hook.prepare(wire(body));
  if (!prepared.ok) throw new Error(`malformed request: ${prepared.problems.join('; ')}`);
  return wire((await prepared.value()) as CompositeSyncResponse);
}

/** The same JSON value with every object's keys in another order (arrays keep theirs). */
export function reorderKeys<T>(value: T, pick: (keys: string[]) => string[]): T {
  if (Array.isArray(value)) return value.map((item: unknown) => reorderKeys(item, pick)) as T;
  if (value === null || typeof value !== 'object') return value;
  const source = value as Record<string, unknown>;
  const result: Record<string, unknown> = {};
  for (const key of pick(Object.keys(source))) {
    // defineProperty: a key named __proto__ stays an own key, as JSON.parse makes it.
    Object.defineProperty(result, key, {
      value: reorderKeys(source[key], pick),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return result as T;
}

/** A permutation of `keys` chosen by `seed` (deterministic, so fast-check can shrink it). */
export function permutation(seed: number): (keys: string[]) => string[] {
  return (keys) => {
    const result = [...keys];
    let state = seed >>> 0 || 1;
    for (let i = result.length - 1; i > 0; i--) {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      const j = state % (i + 1);
      [result[i], result[j]] = [result[j] as string, result[i] as string];
    }
    return result;
  };
}

/** Property names of Object.prototype, to notice prototype pollution. */
export function prototypeSnapshot(): string {
  return JSON.stringify([
    Object.getOwnPropertyNames(Object.prototype).sort(),
    Object.getOwnPropertyNames(Array.prototype).sort(),
  ]);
}
