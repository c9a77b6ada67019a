/**
 * The published admin kubeconfig: written by KubeCell from the allowlisted values of k3k's own
 * (`k3k-<name>-kubeconfig`, key `kubeconfig.yaml`, whose server is k3k's in-cluster Service),
 * with the server of every cluster entry set to the NodePort endpoint
 * `https://<endpoint.address>:<endpoint.port>`.
 *
 * k3k's kubeconfig is not trusted: one over 64 KiB is refused before it is parsed; one holding
 * a character two YAML parsers read differently (kubeconfig-characters.ts: U+0085, U+2028,
 * U+2029, a lone CR, control characters) is refused naming its position; one holding anything
 * an admin kubeconfig does not need (an `exec` command, an `auth-provider`, a `proxy-url`, file
 * paths, ...) or a value of the wrong form (kubeconfig-policy.ts) is refused with the path of
 * the field. A refusal never quotes the text: a YAML error is reported by its kind and position.
 *
 * What passes is never published as k3k's bytes (issue 23, finding 1: bytes one parser read as
 * a single string became an exec command to another): the allowlisted values are copied into a
 * new document in a fixed field order and serialised by the `yaml` package with every string
 * double-quoted, so the text holds only printable ASCII and reads the same to go-yaml (kubectl)
 * as to KubeCell, YAML 1.1 and 1.2 alike. Certificates, keys and tokens keep their values, not
 * their formatting; comments are dropped.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { isEndpointAddress, isIpAddress, isPort } from '../kube/addresses.js';
import { memoiseByText, stringBytes, type TextMemoStats } from '../memo/bounded-memo.js';
import { describeForbiddenCharacter, firstForbiddenCharacter } from './kubeconfig-characters.js';
import {
  ALLOWED_KUBECONFIG_FIELDS,
  describeViolations,
  kubeconfigViolations,
  MAX_KUBECONFIG_BYTES,
} from './kubeconfig-policy.js';
import { writeKubeconfig, type AllowedKubeconfig } from './kubeconfig-document.js';

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

const NOT_AN_ENDPOINT_URL = 'is not an https URL of an IP address or DNS name and a port';

/** An endpoint URL as endpointUrl writes it: `https://`, a host (IPv6 in brackets), a port. */
const ENDPOINT_URL = /^https:\/\/(?:\[([^\]]*)\]|([^:/[\]]*)):([0-9]{1,5})$/;

/**
 * Whether `server` is an endpoint URL of an IP address or DNS name (hooks/kube/addresses.ts) and
 * a port from 1 to 65535: nothing a YAML or URL parser could read as more (issue 23, finding 2).
 */
function isEndpointUrl(server: string): boolean {
  const match = ENDPOINT_URL.exec(server);
  if (match === null) return false;
  const [, bracketed, plain, port] = match;
  const host = bracketed ?? plain;
  const hostOk =
    bracketed !== undefined
      ? isIpAddress(host) && host!.includes(':')
      : isEndpointAddress(host) && !host!.includes(':');
  return hostOk && isPort(Number(port));
}

/**
 * A kubeconfig written anew from the allowlisted values of `source`, with `server` as the
 * server of every cluster entry, or why it is not published. Every resync of a VirtualCluster
 * asks again for the same text and server, so the answer is remembered (by the sha256 of the
 * text, within REWRITE_MEMO_BYTES).
 */
export function rewriteKubeconfigServer(source: string, server: string): RewriteResult {
  if (server.length > MAX_SERVER_LENGTH || !isEndpointUrl(server)) {
    return {
      ok: false,
      refusal: 'rejected',
      problem: `the endpoint ${NOT_AN_ENDPOINT_URL}`,
    };
  }
  if (oversized(source)) return tooLarge(source);
  // A server URL holds no newline, so the key splits back unambiguously.
  return rewriteMemo(`${server}\n${source}`);
}

/**
 * A published kubeconfig written anew as rewriteKubeconfigServer writes one, each server kept:
 * what a kept Secret is published as, so that one written by k3k's bytes (a release before
 * issue 23) is replaced by KubeCell's text of the same values.
 */
export function canonicalKubeconfig(source: string): RewriteResult {
  if (oversized(source)) return tooLarge(source);
  // An empty server (no URL is empty) keeps each entry's own.
  return rewriteMemo(`\n${source}`);
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
    const server = key.slice(0, split);
    return Object.freeze(rewriteUncached(key.slice(split + 1), server === '' ? undefined : server));
  },
);

/** What the kubeconfig memos hold, as they account it (for tests and diagnostics). */
export function kubeconfigMemoStats(): { rewrite: TextMemoStats; check: TextMemoStats } {
  return { rewrite: rewriteMemo.stats(), check: checkMemo.stats() };
}

type Parsed =
  | { ok: true; config: AllowedKubeconfig }
  | { ok: false; refusal: KubeconfigRefusal; problem: string };

/**
 * Reads a kubeconfig and checks it: characters, YAML, clusters with servers, the allowlist. A
 * YAML error is reported by its kind and position only: the `yaml` package's message quotes the
 * source line, and the line may be a private key.
 */
function parseKubeconfig(source: string): Parsed {
  const forbidden = firstForbiddenCharacter(source);
  if (forbidden !== undefined) {
    return {
      ok: false,
      refusal: 'rejected',
      problem: `it holds ${describeForbiddenCharacter(forbidden)}, which kubectl's YAML parser reads differently (a kubeconfig holds no control character, U+0085, U+2028 or U+2029)`,
    };
  }
  const lines = new LineCounter();
  const document = parseDocument(source, { uniqueKeys: false, lineCounter: lines });
  const error = document.errors[0];
  if (error !== undefined) {
    const position = error.linePos?.[0];
    const where = position ? ` at line ${position.line}, column ${position.col}` : '';
    return { ok: false, refusal: 'invalid', problem: `not valid YAML (${error.code}${where})` };
  }
  const missing = missingServers(document);
  if (missing !== undefined) return { ok: false, refusal: 'invalid', problem: missing };
  const violations = kubeconfigViolations(document, lines);
  if (violations.length > 0) {
    return {
      ok: false,
      refusal: 'rejected',
      problem: `${describeViolations(violations)} (a published admin kubeconfig holds only ${ALLOWED_KUBECONFIG_FIELDS})`,
    };
  }
  // The allowlist admits only strings, lists and maps of known fields: this is their shape.
  return { ok: true, config: document.toJS() as AllowedKubeconfig };
}

/** Why a document is no kubeconfig a server can be set in, if it is not. */
function missingServers(document: Document): string | undefined {
  const clusters = isMap(document.contents) ? document.contents.get('clusters', true) : undefined;
  if (!isSeq(clusters)) return 'it has no clusters list';
  if (clusters.items.length === 0) return 'its clusters list is empty';
  for (const item of clusters.items) {
    const cluster = isMap(item) ? item.get('cluster', true) : undefined;
    const server = isMap(cluster) ? cluster.get('server', true) : undefined;
    if (!isScalar(server) || typeof server.value !== 'string') {
      return 'a clusters[] entry has no cluster.server string';
    }
  }
  return undefined;
}

/** A kubeconfig written anew from `source`'s values, `server` in every cluster entry. */
function rewriteUncached(source: string, server: string | undefined): RewriteResult {
  const parsed = parseKubeconfig(source);
  if (!parsed.ok) return parsed;
  // A kept Secret keeps its servers only if they are endpoint URLs, as KubeCell wrote them.
  const foreign =
    server === undefined
      ? (parsed.config.clusters ?? []).findIndex((entry) => !isEndpointUrl(entry.cluster.server))
      : -1;
  if (foreign >= 0) {
    return {
      ok: false,
      refusal: 'rejected',
      problem: `clusters[${foreign}].cluster.server ${NOT_AN_ENDPOINT_URL}`,
    };
  }
  const text = writeKubeconfig(parsed.config, server);
  // What is published must pass the check a published Secret is held to (render.ts).
  if (oversized(text)) {
    const { problem } = tooLarge(text);
    return {
      ok: false,
      refusal: 'rejected',
      problem: `with the endpoint as its server, ${problem}`,
    };
  }
  return { ok: true, text };
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
    // parseKubeconfig checked that every entry has a cluster.server string.
    const servers = (parsed.config.clusters ?? []).map((entry) => flat(entry.cluster.server));
    return Object.freeze({ ok: true, servers: Object.freeze(servers) });
  },
);

/** A copy of `text` that shares no memory with the string it was cut from. */
function flat(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}
