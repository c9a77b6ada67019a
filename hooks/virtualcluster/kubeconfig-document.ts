/**
 * The published kubeconfig as KubeCell writes it: a new document holding the allowlisted values
 * (kubeconfig-policy.ts) and nothing else, in clientcmd's field order, every string
 * double-quoted on one line. The values are printable ASCII (the policy's value patterns), so
 * the text is too, and no YAML parser can read a value as a number, a boolean, a second line or
 * another key (YAML 1.1's `yes`, `0777` and merge keys included).
 */
import { stringify } from 'yaml';

/** A kubeconfig that passed kubeconfig-policy.ts, as `yaml`'s toJS gives it. */
export interface AllowedKubeconfig {
  apiVersion?: string;
  kind?: string;
  'current-context'?: string;
  preferences?: Record<string, never>;
  clusters?: { name?: string; cluster: ClusterFields }[];
  users?: { name?: string; user?: UserFields }[];
  contexts?: { name?: string; context?: ContextFields }[];
}

interface ClusterFields {
  server: string;
  'certificate-authority-data'?: string;
  'tls-server-name'?: string;
}

interface UserFields {
  'client-certificate-data'?: string;
  'client-key-data'?: string;
  token?: string;
}

interface ContextFields {
  cluster?: string;
  user?: string;
  namespace?: string;
}

/** `fields` of `from` that are set, in the order given. */
function pick<T extends object>(from: T | undefined, fields: readonly (keyof T)[]): Partial<T> {
  const picked: Partial<T> = {};
  for (const field of fields) {
    const value = from?.[field];
    if (value !== undefined) picked[field] = value;
  }
  return picked;
}

function named<T extends object>(name: string | undefined, field: string, value: T) {
  return { ...(name === undefined ? {} : { name }), [field]: value };
}

/**
 * The text of a kubeconfig of `config`'s values; `server`, when given, is the server of every
 * cluster entry (otherwise each keeps its own).
 */
export function writeKubeconfig(config: AllowedKubeconfig, server: string | undefined): string {
  const clusters = (config.clusters ?? []).map((entry) =>
    named(entry.name, 'cluster', {
      server: server ?? entry.cluster.server,
      ...pick(entry.cluster, ['certificate-authority-data', 'tls-server-name']),
    }),
  );
  const users = (config.users ?? []).map((entry) =>
    named(
      entry.name,
      'user',
      pick(entry.user, ['client-certificate-data', 'client-key-data', 'token']),
    ),
  );
  const contexts = (config.contexts ?? []).map((entry) =>
    named(entry.name, 'context', pick(entry.context, ['cluster', 'user', 'namespace'])),
  );
  const current = config['current-context'];
  const document = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters,
    users,
    contexts,
    ...(current === undefined ? {} : { 'current-context': current }),
    preferences: {},
  };
  return stringify(document, {
    defaultStringType: 'QUOTE_DOUBLE',
    defaultKeyType: 'PLAIN',
    lineWidth: 0,
    aliasDuplicateObjects: false,
  });
}
