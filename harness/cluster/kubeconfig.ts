// Kubeconfig files for the local control plane. Certificates are embedded so that a kubeconfig
// stays usable on its own (kubectl, @kubernetes/client-node, Metacontroller).
import { readFileSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import type { KeyAndCertificate } from './certs.js';

export interface KubeconfigRequest {
  file: string;
  serverUrl: string;
  caCertFile: string;
  client: KeyAndCertificate;
  /** Names the user entry; purely informational. */
  userName: string;
  contextName?: string;
}

function base64Of(file: string): string {
  return readFileSync(file).toString('base64');
}

export interface TokenKubeconfigRequest extends Omit<KubeconfigRequest, 'client'> {
  /** A bearer token, e.g. a ServiceAccount's from the TokenRequest API. */
  token: string;
}

export function writeKubeconfig(request: KubeconfigRequest): string {
  return writeKubeconfigFor(request, {
    'client-certificate-data': base64Of(request.client.certFile),
    'client-key-data': base64Of(request.client.keyFile),
  });
}

export function writeTokenKubeconfig(request: TokenKubeconfigRequest): string {
  return writeKubeconfigFor(request, { token: request.token });
}

function writeKubeconfigFor(
  request: Omit<KubeconfigRequest, 'client'>,
  credentials: Record<string, string>,
): string {
  const clusterName = 'kubecell-test';
  const contextName = request.contextName ?? `${request.userName}@${clusterName}`;
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: clusterName,
        cluster: {
          server: request.serverUrl,
          'certificate-authority-data': base64Of(request.caCertFile),
        },
      },
    ],
    users: [
      {
        name: request.userName,
        user: credentials,
      },
    ],
    contexts: [{ name: contextName, context: { cluster: clusterName, user: request.userName } }],
    'current-context': contextName,
    preferences: {},
  };
  // Owner-only: it holds a private key or token (of a throwaway cluster, but still).
  writeFileSync(request.file, stringify(kubeconfig), { mode: 0o600 });
  return request.file;
}
