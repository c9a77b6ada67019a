/**
 * Wiring for hooks/main.ts: starts the admission webhooks' HTTPS listener when TLS files are
 * configured, with the real cluster lookup (KUBECONFIG when set, else the in-cluster
 * ServiceAccount, else ~/.kube/config: kube-api.ts) and the admission metrics on the hook
 * server's registry.
 */
import type { Registry } from 'prom-client';
import type { Logger } from '../server/logger.js';
import { createAdmissionApp } from './app.js';
import type { WebhookConfig } from './config.js';
import { loadKubeConfig } from './kube-api.js';
import { createKubernetesLookup, type ClusterLookup } from './lookup.js';
import { createAdmissionMetrics } from './metrics.js';
import { startWebhookServer, type WebhookServer } from './tls.js';

export interface StartAdmissionOptions {
  config: WebhookConfig;
  logger: Logger;
  /** The hook server's metrics registry. */
  registry: Registry;
  /** Defaults to the Kubernetes API (lookup.ts, credentials from kube-api.ts). */
  lookup?: ClusterLookup;
  pollIntervalMs?: number;
}

/** The running webhook server, or undefined when no TLS files are configured. */
export async function startAdmissionWebhook(
  options: StartAdmissionOptions,
): Promise<WebhookServer | undefined> {
  const { config, logger } = options;
  if (config.tls === undefined) {
    logger.info(
      'admission webhook disabled: set KUBECELL_TLS_CERT_FILE and KUBECELL_TLS_KEY_FILE to serve it',
    );
    return undefined;
  }
  let lookup = options.lookup;
  if (lookup === undefined) {
    const { kubeConfig, source } = loadKubeConfig();
    logger.info('admission webhook lookups use the Kubernetes API', {
      server: kubeConfig.getCurrentCluster()?.server,
      credentials: source,
    });
    lookup = createKubernetesLookup(kubeConfig);
  }
  const app = createAdmissionApp({
    lookup,
    logger,
    metrics: createAdmissionMetrics(options.registry),
    controllerNamespace: config.controllerNamespace,
  });
  return startWebhookServer({
    app,
    port: config.port,
    tls: config.tls,
    logger,
    pollIntervalMs: options.pollIntervalMs,
  });
}
