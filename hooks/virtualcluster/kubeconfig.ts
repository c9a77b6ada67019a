/**
 * The published admin kubeconfig: k3k's own (`k3k-<name>-kubeconfig`, key `kubeconfig.yaml`,
 * whose server is k3k's in-cluster Service) with the server of every cluster entry rewritten
 * to the NodePort endpoint `https://<endpoint.address>:<endpoint.port>`.
 *
 * Nothing else changes, byte for byte: the document is parsed with the `yaml` package only to
 * locate each `clusters[].cluster.server` scalar in the source text, and the new value is
 * spliced in at exactly that range, in the scalar's own quoting style. Comments, key order,
 * indentation, the certificates and every other field are the original bytes. The result is
 * parsed again and compared with the original (only the servers may differ); any doubt and the
 * rewrite is refused rather than publishing a credential that was altered unexpectedly.
 */
import { isMap, isScalar, isSeq, parseDocument, type Scalar } from 'yaml';
import { memoiseByText } from '../memo/bounded-memo.js';

export type RewriteResult = { ok: true; text: string } | { ok: false; problem: string };

/** `https://<address>:<port>`, with an IPv6 address in brackets. */
export function endpointUrl(address: string, port: number): string {
  const host = address.includes(':') && !address.startsWith('[') ? `[${address}]` : address;
  return `https://${host}:${port}`;
}

/** Kubeconfigs seen at once: a few per VirtualCluster (k3k's and the published one). */
const MEMO_LIMIT = 1024;

/**
 * Rewrites the server of every cluster entry of a kubeconfig to `server`. Every resync of a
 * VirtualCluster asks again for the same text and server, so the answer is remembered.
 */
export function rewriteKubeconfigServer(source: string, server: string): RewriteResult {
  // A server URL holds no newline, so the key splits back unambiguously.
  return rewriteMemo(`${server}\n${source}`);
}

const rewriteMemo = memoiseByText(MEMO_LIMIT, (key) => {
  const split = key.indexOf('\n');
  return Object.freeze(rewriteUncached(key.slice(split + 1), key.slice(0, split)));
});

function rewriteUncached(source: string, server: string): RewriteResult {
  const document = parseDocument(source, { uniqueKeys: false });
  if (document.errors.length > 0) {
    return { ok: false, problem: `not valid YAML: ${document.errors[0]?.message ?? ''}` };
  }
  const clusters = isMap(document.contents) ? document.contents.get('clusters', true) : undefined;
  if (!isSeq(clusters)) return { ok: false, problem: 'it has no clusters list' };
  const scalars: Scalar[] = [];
  for (const item of clusters.items) {
    const cluster = isMap(item) ? item.get('cluster', true) : undefined;
    const serverNode = isMap(cluster) ? cluster.get('server', true) : undefined;
    if (!isScalar(serverNode) || typeof serverNode.value !== 'string' || !serverNode.range) {
      return { ok: false, problem: 'a clusters[] entry has no cluster.server string' };
    }
    scalars.push(serverNode);
  }
  if (scalars.length === 0) return { ok: false, problem: 'its clusters list is empty' };

  for (const style of ['own', 'double'] as const) {
    let text = source;
    // Splice from the end so that earlier ranges stay valid.
    for (const scalar of [...scalars].sort((a, b) => (b.range?.[0] ?? 0) - (a.range?.[0] ?? 0))) {
      const [start, end] = scalar.range ?? [0, 0];
      text =
        text.slice(0, start) +
        scalarText(server, style === 'own' ? scalar.type : undefined) +
        text.slice(end);
    }
    if (sameExceptServers(source, text, server)) return { ok: true, text };
  }
  return { ok: false, problem: 'the server could not be rewritten without changing other fields' };
}

/** The server of each cluster entry, or undefined when the text is not a usable kubeconfig. */
export function kubeconfigServers(source: string): readonly string[] | undefined {
  return serversMemo(source);
}

const serversMemo = memoiseByText(MEMO_LIMIT, (source) => {
  const servers = serversUncached(source);
  return servers && Object.freeze(servers);
});

function serversUncached(source: string): string[] | undefined {
  const parsed = parseYaml(source) as { clusters?: { cluster?: { server?: unknown } }[] };
  if (!Array.isArray(parsed?.clusters) || parsed.clusters.length === 0) return undefined;
  const servers = parsed.clusters.map((entry) => entry?.cluster?.server);
  return servers.every((value): value is string => typeof value === 'string') ? servers : undefined;
}

function scalarText(value: string, type: Scalar['type'] | undefined): string {
  switch (type) {
    case 'PLAIN':
      return value;
    case 'QUOTE_SINGLE':
      return `'${value.replace(/'/g, "''")}'`;
    default:
      return JSON.stringify(value);
  }
}

function parseYaml(text: string): unknown {
  const document = parseDocument(text, { uniqueKeys: false });
  return document.errors.length > 0 ? undefined : document.toJS();
}

function sameExceptServers(before: string, after: string, server: string): boolean {
  const original = parseYaml(before) as { clusters?: { cluster?: { server?: string } }[] };
  const rewritten = parseYaml(after);
  if (original === undefined || rewritten === undefined) return false;
  for (const entry of original.clusters ?? []) {
    if (entry?.cluster) entry.cluster.server = server;
  }
  return JSON.stringify(original) === JSON.stringify(rewritten);
}
