// The hook server's admission webhook served from a local process in the cluster tests: a
// serving certificate for 127.0.0.1 and the shipped webhook configurations pointed at it.
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { createCertificateAuthority, issueCertificate } from './certs.js';
import type { ControlPlane } from './control-plane.js';
import { repoRoot } from './paths.js';

const webhookManifest = path.join(repoRoot, 'manifests', 'webhook', 'base', 'webhooks.yaml');

/** A serving certificate for 127.0.0.1 from a CA of its own, as cert-manager would issue. */
export async function webhookServing(
  cluster: ControlPlane,
  port: number,
): Promise<{ certFile: string; keyFile: string; caBundle: string; port: number }> {
  const dir = path.join(cluster.dir, 'webhook-pki');
  mkdirSync(dir, { recursive: true });
  const ca = await createCertificateAuthority(dir, 'webhook-ca', 'kubecell-webhook-test-ca');
  const serving = await issueCertificate(ca, dir, {
    name: 'webhook',
    commonName: 'kubecell-hooks.kubecell-system.svc',
    usage: 'server',
    ipAddresses: ['127.0.0.1'],
    dnsNames: ['localhost', 'kubecell-hooks.kubecell-system.svc'],
  });
  return {
    ...serving,
    caBundle: readFileSync(ca.certFile).toString('base64'),
    port,
  };
}

/**
 * The shipped webhook configurations with the in-cluster Service replaced by the local
 * server's URL (the apiserver reaches no Service here) and the CA filled in.
 */
export function webhookConfigurations(baseUrl: string, caBundle: string): unknown[] {
  type Webhook = { clientConfig: { service?: { path?: string }; url?: string; caBundle?: string } };
  return parseAllDocuments(readFileSync(webhookManifest, 'utf8'))
    .map((document) => document.toJS() as { webhooks?: Webhook[] } | null)
    .filter((object): object is { webhooks?: Webhook[] } => object !== null)
    .map((object) => ({
      ...object,
      webhooks: (object.webhooks ?? []).map((webhook) => ({
        ...webhook,
        clientConfig: {
          url: `${baseUrl}${webhook.clientConfig.service?.path ?? ''}`,
          caBundle,
        },
      })),
    }));
}
