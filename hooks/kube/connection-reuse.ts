/**
 * Keep-alive connections for @kubernetes/client-node.
 *
 * client-node 1.4 builds a new https.Agent for every request (dist/config.js:
 * `applySecurityAuthentication` → `createAgent`), and a new agent never reuses a socket, so every
 * call opened a new TCP connection and a new TLS handshake with the apiserver: four per admission
 * review (hooks/admission/lookup.ts), measured by the HTTP benchmark as 3.3–3.9 ms of the
 * stand-in apiserver's CPU per review. `reusedAgent` swaps that fresh agent for a shared
 * keep-alive one built from the same options, so the credentials, CA and server name
 * client-node chose are kept; the Authorization header is set per request and is untouched.
 * Agents with a proxy (client-node's proxy agents are other classes) are left as they are.
 */
import http from 'node:http';
import https from 'node:https';

/** The TLS and socket options that make two agents interchangeable. */
const IDENTITY_OPTIONS = [
  'ca',
  'cert',
  'key',
  'pfx',
  'passphrase',
  'servername',
  'rejectUnauthorized',
] as const;

/** A few kubeconfigs at most live in one process; a changed one replaces the oldest. */
const MAX_AGENTS = 8;

/**
 * A socket idle for 30 s is closed by this side, well before a server would close it and race a
 * new request onto it; the lookups' own deadlines (at most 10 s) are shorter.
 */
const KEEP_ALIVE = { keepAlive: true, timeout: 30_000 };

const shared = new Map<string, http.Agent>();

function identityOf(agent: http.Agent): string {
  const options = (agent as http.Agent & { options: Record<string, unknown> }).options;
  const secure = agent instanceof https.Agent;
  return JSON.stringify([
    secure,
    ...IDENTITY_OPTIONS.map((name) => {
      const value = options[name];
      return Buffer.isBuffer(value) ? value.toString('base64') : (value ?? null);
    }),
  ]);
}

/** The shared keep-alive agent to use instead of `fresh`, or `fresh` itself when it has a proxy. */
export function reusedAgent(fresh: http.Agent): http.Agent {
  const plain = fresh.constructor === https.Agent || fresh.constructor === http.Agent;
  if (!plain) return fresh;
  const key = identityOf(fresh);
  const known = shared.get(key);
  if (known !== undefined) return known;
  const options = (fresh as http.Agent & { options: https.AgentOptions }).options;
  const agent =
    fresh instanceof https.Agent
      ? new https.Agent({ ...options, ...KEEP_ALIVE })
      : new http.Agent({ ...options, ...KEEP_ALIVE });
  if (shared.size >= MAX_AGENTS) {
    const [oldestKey, oldest] = shared.entries().next().value as [string, http.Agent];
    shared.delete(oldestKey);
    oldest.destroy();
  }
  shared.set(key, agent);
  return agent;
}
