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
 * Every value is a string (or the list or map above). Anything else is refused, and so are YAML
 * anchors, aliases, explicit tags and duplicate keys: kubectl reads the text with another YAML
 * parser (go-yaml, which honours merge keys), and these are where two parsers can disagree.
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

type Shape = 'string' | { map: Readonly<Record<string, Shape>> } | { list: Shape };

const STRING = 'string';
const NAMED = (field: string, fields: Record<string, Shape>): Shape => ({
  list: { map: { name: STRING, [field]: { map: fields } } },
});

const KUBECONFIG: Shape = {
  map: {
    apiVersion: STRING,
    kind: STRING,
    'current-context': STRING,
    preferences: { map: {} },
    clusters: NAMED('cluster', {
      server: STRING,
      'certificate-authority-data': STRING,
      'tls-server-name': STRING,
    }),
    users: NAMED('user', {
      'client-certificate-data': STRING,
      'client-key-data': STRING,
      token: STRING,
    }),
    contexts: NAMED('context', { cluster: STRING, user: STRING, namespace: STRING }),
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
  if (shape === STRING) {
    if (!isScalar(node) || typeof node.value !== 'string')
      found.push({ path: here, kind: 'notString' });
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
