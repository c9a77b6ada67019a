/**
 * What a published admin kubeconfig may hold. KubeCell copies k3k's kubeconfig into a Secret
 * the tenant reads and hands to kubectl, so anything in it runs or is read on the tenant's
 * machine: `users[].user.exec` and `auth-provider` run commands, `proxy-url` sends every request
 * through another host, file paths (`certificate-authority`, `client-certificate`, `client-key`,
 * `tokenFile`) read the tenant's files. An admin kubeconfig needs none of that; this allowlist is
 * what k3k writes (clientcmd.Write of a server, its CA, a client certificate and key), plus a
 * token, `tls-server-name` and a context's namespace, which are as harmless:
 *
 *   apiVersion, kind, current-context, preferences: {}
 *   clusters[].name, clusters[].cluster.{server, certificate-authority-data, tls-server-name}
 *   users[].name, users[].user.{client-certificate-data, client-key-data, token}
 *   contexts[].name, contexts[].context.{cluster, user, namespace}
 *
 * Every value is a string of the kind its field takes (VALUE_PATTERNS: base64, a name, a DNS
 * name, a token of visible ASCII, ...), or the list or map above. Anything else is refused, and
 * so are YAML anchors, aliases, explicit tags and duplicate keys: kubectl reads the text with
 * another YAML parser (go-yaml, which honours merge keys), and these are where two parsers can
 * disagree. What passes is not published as it is: kubeconfig.ts writes a new document from
 * these values alone.
 *
 * A violation names the field's path (`users[0].user.exec`), never its value. A key is named
 * only when it is a kubeconfig field name; any other key (which could be anything, key material
 * included) is named by its position.
 */
import { isAlias, isMap, isScalar, isSeq, type Document, type LineCounter, type Node } from 'yaml';

/**
 * Largest kubeconfig accepted, in UTF-8 bytes: 64 KiB. k3k's is 3 to 6 KB (one cluster, one
 * user, base64 PEM of a CA, a certificate and a key; RSA 4096 keys included); 64 KiB leaves ten
 * times that and bounds what one VirtualCluster can make the hook server parse and remember.
 */
export const MAX_KUBECONFIG_BYTES = 64 * 1024;

/** The allowlist, for messages. */
export const ALLOWED_KUBECONFIG_FIELDS =
  'clusters[].cluster.{server, certificate-authority-data, tls-server-name}, ' +
  'users[].user.{client-certificate-data, client-key-data, token}, ' +
  'contexts[].context.{cluster, user, namespace}, names, apiVersion, kind, current-context ' +
  'and an empty preferences';

/**
 * What a value may hold. Each is plain printable ASCII, so the published text reads the same to
 * every YAML parser; none can carry a line break, a quote that ends its scalar early, or a
 * character kubeconfig-characters.ts refuses.
 */
type ValueKind = 'name' | 'base64' | 'token' | 'host' | 'label' | 'url' | 'apiVersion' | 'kind';

type Shape = { value: ValueKind } | { map: Readonly<Record<string, Shape>> } | { list: Shape };

const VALUE_PATTERNS: Readonly<Record<ValueKind, RegExp>> = {
  // clientcmd names: k3k writes `default`; allow the characters kubectl's own names use.
  name: /^[A-Za-z0-9][A-Za-z0-9._@:/-]{0,252}$/,
  // encoding/json's []byte: standard base64, no line breaks.
  base64: /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/,
  // A bearer token: visible ASCII, no space (RFC 6750 b64token is a subset).
  token: /^[\x21-\x7e]{1,8192}$/,
  // tls-server-name: a DNS name (SNI carries no IP address, RFC 6066 § 3).
  host: /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/,
  // A namespace: a DNS-1123 label.
  label: /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/,
  // k3k's server before KubeCell replaces it: an http(s) URL in visible ASCII.
  url: /^https?:\/\/[\x21-\x7e]{1,2040}$/,
  apiVersion: /^v1$/,
  kind: /^Config$/,
};

const VALUE_WORDING: Readonly<Record<ValueKind, string>> = {
  name: 'must be a name of letters, digits and . _ @ : / - (at most 253)',
  base64: 'must be standard base64 on one line',
  token: 'must be visible ASCII without spaces',
  host: 'must be a lowercase DNS name',
  label: 'must be a DNS-1123 label',
  url: 'must be an http or https URL in visible ASCII',
  apiVersion: 'must be v1',
  kind: 'must be Config',
};

const value = (kind: ValueKind): Shape => ({ value: kind });
const NAMED = (field: string, fields: Record<string, Shape>): Shape => ({
  list: { map: { name: value('name'), [field]: { map: fields } } },
});

const KUBECONFIG: Shape = {
  map: {
    apiVersion: value('apiVersion'),
    kind: value('kind'),
    'current-context': value('name'),
    preferences: { map: {} },
    clusters: NAMED('cluster', {
      server: value('url'),
      'certificate-authority-data': value('base64'),
      'tls-server-name': value('host'),
    }),
    users: NAMED('user', {
      'client-certificate-data': value('base64'),
      'client-key-data': value('base64'),
      token: value('token'),
    }),
    contexts: NAMED('context', {
      cluster: value('name'),
      user: value('name'),
      namespace: value('label'),
    }),
  },
};

/**
 * Every field name of client-go's kubeconfig (clientcmd/api/v1), the ones refused included:
 * these may be shown in a path; any other key is shown by its position only.
 */
const KUBECONFIG_FIELD_NAMES: ReadonlySet<string> = new Set([
  // Config
  'apiVersion',
  'kind',
  'preferences',
  'clusters',
  'users',
  'contexts',
  'current-context',
  'extensions',
  // Preferences
  'colors',
  // NamedCluster, NamedAuthInfo, NamedContext, NamedExtension
  'name',
  'cluster',
  'user',
  'context',
  'extension',
  // Cluster
  'server',
  'tls-server-name',
  'insecure-skip-tls-verify',
  'certificate-authority',
  'certificate-authority-data',
  'proxy-url',
  'disable-compression',
  // AuthInfo
  'client-certificate',
  'client-certificate-data',
  'client-key',
  'client-key-data',
  'token',
  'tokenFile',
  'as',
  'as-uid',
  'as-groups',
  'as-user-extra',
  'username',
  'password',
  'auth-provider',
  'exec',
  // Context
  'namespace',
]);

export type ViolationKind =
  | 'notAllowed'
  | 'notString'
  | ValueKind
  | 'notMap'
  | 'notList'
  | 'duplicate'
  | 'badKey'
  | 'alias'
  | 'anchor'
  | 'tag';

export interface Violation {
  /** Where, as `users[0].user.exec`; never a value. */
  path: string;
  kind: ViolationKind;
}

const WORDING: Record<ViolationKind, string> = {
  notAllowed: 'is not allowed',
  notString: 'must be a string',
  notMap: 'must be a map',
  notList: 'must be a list',
  duplicate: 'appears more than once',
  badKey: 'has a key that is not a plain string',
  alias: 'is a YAML alias',
  anchor: 'has a YAML anchor',
  tag: 'has an explicit YAML tag',
  ...VALUE_WORDING,
};

/** `users[0].user.exec is not allowed`. */
export function describeViolation(violation: Violation): string {
  return `${violation.path} ${WORDING[violation.kind]}`;
}

/** The first few violations, then how many more: for a condition message. */
export function describeViolations(violations: readonly Violation[], shown = 3): string {
  const listed = violations.slice(0, shown).map(describeViolation).join('; ');
  const more = violations.length - shown;
  return more > 0 ? `${listed}; and ${more} more` : listed;
}

/**
 * The violations of a parsed kubeconfig (a YAML document without errors), in document order;
 * empty when it may be published. `lines` is the LineCounter the document was parsed with.
 */
export function kubeconfigViolations(document: Document, lines: LineCounter): Violation[] {
  const found: Violation[] = [];
  walk(document.contents, KUBECONFIG, '', found, lines);
  return found;
}

function walk(
  node: unknown,
  shape: Shape,
  path: string,
  found: Violation[],
  lines: LineCounter,
): void {
  const here = path === '' ? '(the document)' : path;
  if (isAlias(node)) {
    found.push({ path: here, kind: 'alias' });
    return;
  }
  if (isNode(node)) {
    if (node.anchor) found.push({ path: here, kind: 'anchor' });
    if (node.tag) found.push({ path: here, kind: 'tag' });
  }
  if ('value' in shape) {
    if (!isScalar(node) || typeof node.value !== 'string')
      found.push({ path: here, kind: 'notString' });
    else if (!VALUE_PATTERNS[shape.value].test(node.value))
      found.push({ path: here, kind: shape.value });
    return;
  }
  if ('list' in shape) {
    if (!isSeq(node)) {
      found.push({ path: here, kind: 'notList' });
      return;
    }
    node.items.forEach((item, index) => walk(item, shape.list, `${path}[${index}]`, found, lines));
    return;
  }
  if (!isMap(node)) {
    found.push({ path: here, kind: 'notMap' });
    return;
  }
  const seen = new Set<string>();
  for (const pair of node.items) {
    const key = pair.key;
    if (!isScalar(key) || typeof key.value !== 'string' || key.anchor || key.tag) {
      found.push({ path: `${join(path, at(key, lines))}`, kind: 'badKey' });
      continue;
    }
    const name = key.value;
    const child = join(path, KUBECONFIG_FIELD_NAMES.has(name) ? name : at(key, lines));
    if (seen.has(name)) {
      found.push({ path: child, kind: 'duplicate' });
      continue;
    }
    seen.add(name);
    const fieldShape = Object.hasOwn(shape.map, name) ? shape.map[name] : undefined;
    if (fieldShape === undefined) {
      found.push({ path: child, kind: 'notAllowed' });
      continue;
    }
    walk(pair.value, fieldShape, child, found, lines);
  }
}

function isNode(value: unknown): value is Node {
  return isScalar(value) || isMap(value) || isSeq(value);
}

function join(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

/** `<key at line 12, column 5>`: a key that is not a kubeconfig field name, by position. */
function at(key: unknown, lines: LineCounter): string {
  const offset = (isNode(key) || isAlias(key)) && key.range ? key.range[0] : undefined;
  if (offset === undefined) return '<key>';
  const { line, col } = lines.linePos(offset);
  return `<key at line ${line}, column ${col}>`;
}
