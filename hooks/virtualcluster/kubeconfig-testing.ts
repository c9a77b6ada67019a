/** Kubeconfigs for the allowlist tests (not loaded in production). */
import { K3K_KUBECONFIG } from './testing.js';

/** Planted in kubeconfigs: it must never come back in a status, a problem or a log line. */
export const MARKER = 'KUBECONFIGMARKER7f3c';

/**
 * K3K_KUBECONFIG with `lines` added at the end of `users[0].user`, of `clusters[0].cluster`, or
 * of the document (`top`), indented for the first two.
 */
export function withFields(where: 'user' | 'cluster' | 'top', lines: string[]): string {
  if (where === 'top') return `${K3K_KUBECONFIG}${lines.join('\n')}\n`;
  const anchor =
    where === 'user' ? '    client-key-data: ' : '    server: https://10.43.12.34:443\n';
  const at = K3K_KUBECONFIG.indexOf(anchor);
  const end = where === 'user' ? K3K_KUBECONFIG.indexOf('\n', at) + 1 : at + anchor.length;
  const added = lines.map((line) => `    ${line}\n`).join('');
  return `${K3K_KUBECONFIG.slice(0, end)}${added}${K3K_KUBECONFIG.slice(end)}`;
}

/** The kubeconfigs the issue names, each with the path its refusal must name. */
export const FORBIDDEN_KUBECONFIGS: readonly { what: string; source: string; path: string }[] = [
  {
    what: 'an exec command',
    source: withFields('user', [
      'exec:',
      '  apiVersion: client.authentication.k8s.io/v1',
      `  command: /tmp/${MARKER}`,
    ]),
    path: 'users[0].user.exec',
  },
  {
    what: 'an auth-provider',
    source: withFields('user', [
      'auth-provider:',
      '  name: oidc',
      `  config: {id-token: ${MARKER}}`,
    ]),
    path: 'users[0].user.auth-provider',
  },
  {
    what: 'a proxy-url',
    source: withFields('cluster', [`proxy-url: http://${MARKER}.example:3128`]),
    path: 'clusters[0].cluster.proxy-url',
  },
  {
    what: 'a CA file',
    source: withFields('cluster', [`certificate-authority: /etc/${MARKER}/ca.crt`]),
    path: 'clusters[0].cluster.certificate-authority',
  },
  {
    what: 'a client certificate file',
    source: withFields('user', [`client-certificate: /home/${MARKER}/cert`]),
    path: 'users[0].user.client-certificate',
  },
  {
    what: 'a client key file',
    source: withFields('user', [`client-key: /home/${MARKER}/key`]),
    path: 'users[0].user.client-key',
  },
  {
    what: 'a token file',
    source: withFields('user', [`tokenFile: /var/run/${MARKER}`]),
    path: 'users[0].user.tokenFile',
  },
];
