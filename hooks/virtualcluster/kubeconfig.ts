/**
 * The published admin kubeconfig: k3k's own (`k3k-<name>-kubeconfig`, key `kubeconfig.yaml`,
 * whose server is k3k's in-cluster Service) with the server of every cluster entry rewritten
 * to the NodePort endpoint `https://<endpoint.address>:<endpoint.port>`.
 *
 * k3k's kubeconfig is not trusted: one over 64 KiB is refused before it is parsed, and one that
 * holds anything an admin kubeconfig does not need (an `exec` command, an `auth-provider`, a
 * `proxy-url`, file paths, ...; see kubeconfig-policy.ts) is refused with the path of the field.
 * A refusal never quotes the text: a YAML error is reported by its kind and position only.
 *
 * What is published is k3k's text, byte for byte, but for the servers: the document is parsed
 * with the `yaml` package only to locate each `clusters[].cluster.server` scalar in the source
 * text, and the new value is spliced in at exactly that range, in the scalar's own quoting
 * style. Comments, key order, indentation and the certificates are the original bytes. The
 * result is parsed again and compared with the original (only the servers may differ); any
 * doubt and the rewrite is refused rather than publishing a credential that was altered
 * unexpectedly.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Scalar } from 'yaml';
import { memoiseByText, stringBytes, type TextMemoStats } from '../memo/bounded-memo.js';
import {
  ALLOWED_KUBECONFIG_FIELDS,
  describeViolations,
  kubeconfigViolations,
  MAX_KUBECONFIG_BYTES,
} from './kubeconfig-policy.js';

/**
 * Why a kubeconfig is not published: `invalid` when it is not a kubeconfig that can be read
 * (YAML syntax, no clusters or servers), `rejected` when it is too large or holds a field an
 * admin kubeconfig must not.
 */
export type KubeconfigRefusal = 'invalid' | 'rejected';

export type RewriteResult =
  { ok: true; text: string } | { ok: false; refusal: KubeconfigRefusal; problem: string };

/** `https://<address>:<port>`, with an IPv6 address in brackets. */
export function endpointUrl(address: string, port: number): string {
  const host = address.includes(':') && !address.startsWith('[') ? `[${address}]` : address;
  return `https://${host}:${port}`;
}

/**
 * Bytes the rewrite memo keeps (as bounded-memo.ts accounts them, 2 bytes a character): 16 MiB,
 * about 1,300 VirtualClusters with k3k's usual 6 KB kubeconfig, or 128 at the 64 KiB limit.
 * Past that the least recently used are parsed again on their next sync.
 */
export const REWRITE_MEMO_BYTES = 16 * 1024 * 1024;
/**
 * Bytes the check memo keeps (published Secrets: their servers, or why they would not be
 * published; a few short strings). 1 MiB, about 3,000 kubeconfigs.
 */
export const CHECK_MEMO_BYTES = 1024 * 1024;
/** The longest server URL remembered with a kubeconfig (an endpoint URL is far shorter). */
const MAX_SERVER_LENGTH = 2048;

/** Whether a text is over MAX_KUBECONFIG_BYTES, without encoding it when it is obviously. */
function oversized(text: string): boolean {
  return (
    text.length > MAX_KUBECONFIG_BYTES || Buffer.byteLength(text, 'utf8') > MAX_KUBECONFIG_BYTES
  );
}

function tooLarge(text: string): { ok: false; refusal: 'rejected'; problem: string } {
  return {
    ok: false,
    refusal: 'rejected',
    problem: `it is ${Buffer.byteLength(text, 'utf8')} bytes, more than the ${MAX_KUBECONFIG_BYTES} (64 KiB) a kubeconfig may have`,
  };
}

/**
 * Rewrites the server of every cluster entry of a kubeconfig to `server`, or says why it is not
 * published. Every resync of a VirtualCluster asks again for the same text and server, so the
 * answer is remembered (by the sha256 of the text, within REWRITE_MEMO_BYTES).
 */
export function rewriteKubeconfigServer(source: string, server: string): RewriteResult {
  if (oversized(source)) return tooLarge(source);
  // A server URL holds no newline, so the key splits back unambiguously.
  return rewriteMemo(`${server}\n${source}`);
}

const rewriteMemo = memoiseByText(
  {
    maxBytes: REWRITE_MEMO_BYTES,
    maxTextLength: MAX_KUBECONFIG_BYTES + MAX_SERVER_LENGTH,
    key: 'sha256',
    sizeOf: (result: RewriteResult) => stringBytes(result.ok ? result.text : result.problem),
  },
  (key) => {
    const split = key.indexOf('\n');
    return Object.freeze(rewriteUncached(key.slice(split + 1), key.slice(0, split)));
  },
);

/** What the kubeconfig memos hold, as they account it (for tests and diagnostics). */
export function kubeconfigMemoStats(): { rewrite: TextMemoStats; check: TextMemoStats } {
  return { rewrite: rewriteMemo.stats(), check: checkMemo.stats() };
}

type Parsed =
  | { ok: true; document: ReturnType<typeof parseDocument> }
  | { ok: false; refusal: KubeconfigRefusal; problem: string };

/**
 * Parses a kubeconfig and checks it against the allowlist. A YAML error is reported by its kind
 * and position only: the `yaml` package's message quotes the source line, and the line may be
 * a private key.
 */
function parseKubeconfig(source: string): Parsed {
  const lines = new LineCounter();
  const document = parseDocument(source, { uniqueKeys: false, lineCounter: lines });
  const error = document.errors[0];
  if (error !== undefined) {
    const position = error.linePos?.[0];
    const where = position ? ` at line ${position.line}, column ${position.col}` : '';
    return { ok: false, refusal: 'invalid', problem: `not valid YAML (${error.code}${where})` };
  }
  const clusters = isMap(document.contents) ? document.contents.get('clusters', true) : undefined;
  if (!isSeq(clusters)) {
    return { ok: false, refusal: 'invalid', problem: 'it has no clusters list' };
  }
  if (clusters.items.length === 0) {
    return { ok: false, refusal: 'invalid', problem: 'its clusters list is empty' };
  }
  for (const item of clusters.items) {
    const cluster = isMap(item) ? item.get('cluster', true) : undefined;
    const serverNode = isMap(cluster) ? cluster.get('server', true) : undefined;
    if (!isScalar(serverNode) || typeof serverNode.value !== 'string' || !serverNode.range) {
      return {
        ok: false,
        refusal: 'invalid',
        problem: 'a clusters[] entry has no cluster.server string',
      };
    }
  }
  const violations = kubeconfigViolations(document, lines);
  if (violations.length > 0) {
    return {
      ok: false,
      refusal: 'rejected',
      problem: `${describeViolations(violations)} (a published admin kubeconfig holds only ${ALLOWED_KUBECONFIG_FIELDS})`,
    };
  }
  return { ok: true, document };
}

function rewriteUncached(source: string, server: string): RewriteResult {
  const parsed = parseKubeconfig(source);
  if (!parsed.ok) return parsed;
  const clusters = parsed.document.get('clusters', true);
  const scalars: Scalar[] = [];
  for (const item of isSeq(clusters) ? clusters.items : []) {
    const serverNode = isMap(item) ? item.getIn(['cluster', 'server'], true) : undefined;
    if (isScalar(serverNode)) scalars.push(serverNode);
  }

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
    if (!sameExceptServers(source, text, server)) continue;
    // What is published must pass the check a published Secret is held to (render.ts).
    if (oversized(text)) {
      const { problem } = tooLarge(text);
      return {
        ok: false,
        refusal: 'rejected',
        problem: `with the endpoint as its server, ${problem}`,
      };
    }
    // A fresh copy: the spliced text is made of slices that would keep `source` alive in the memo.
    return { ok: true, text: flat(text) };
  }
  return {
    ok: false,
    refusal: 'invalid',
    problem: 'the server could not be rewritten without changing other fields',
  };
}

export type KubeconfigCheck =
  | { ok: true; servers: readonly string[] }
  | { ok: false; refusal: KubeconfigRefusal; problem: string };

/**
 * Whether a kubeconfig could be published as it is (readable, at most 64 KiB, nothing off the
 * allowlist), and the server of each cluster entry. Remembered by the sha256 of the text.
 */
export function checkKubeconfig(source: string): KubeconfigCheck {
  return oversized(source) ? tooLarge(source) : checkMemo(source);
}

/**
 * The server of each cluster entry, or undefined when the text is not a kubeconfig that could be
 * published (unreadable, too large, or holding a field the allowlist refuses).
 */
export function kubeconfigServers(source: string): readonly string[] | undefined {
  const checked = checkKubeconfig(source);
  return checked.ok ? checked.servers : undefined;
}

const checkMemo = memoiseByText(
  {
    maxBytes: CHECK_MEMO_BYTES,
    maxTextLength: MAX_KUBECONFIG_BYTES,
    key: 'sha256',
    sizeOf: (checked: KubeconfigCheck) =>
      checked.ok
        ? checked.servers.reduce((sum, server) => sum + 16 + stringBytes(server), 0)
        : stringBytes(checked.problem),
  },
  (source): KubeconfigCheck => {
    const parsed = parseKubeconfig(source);
    if (!parsed.ok) return Object.freeze(parsed);
    const { clusters } = parsed.document.toJS() as { clusters: { cluster: { server: string } }[] };
    // parseKubeconfig checked that every entry has a cluster.server string.
    const servers = Object.freeze(clusters.map((entry) => flat(entry.cluster.server)));
    return Object.freeze({ ok: true, servers });
  },
);

/** A copy of `text` that shares no memory with the string it was cut from. */
function flat(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
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
