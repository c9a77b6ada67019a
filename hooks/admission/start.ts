/**
 * Wiring for hooks/main.ts: starts the admission webhooks' HTTPS listener when TLS files are
 * configured, with the real cluster lookup (KUBECONFIG when set, else the in-cluster
 * ServiceAccount, else ~/.kube/config: kube-api.ts), its watch cache unless
 * KUBECELL_WEBHOOK_CACHE=off (cached-lookup.ts; started with the webhook, and not waited for:
 * the live lookups answer until it is synced, so readiness does not depend on it) and the
 * admission metrics on the hook server's registry. Without TLS files the webhook is not served, and a warning says so: the
 * webhook configurations fail closed, so every KubeCell create and update would be refused.
 */
import type { Registry } from 'prom-client';
import type { BodyBudget } from '../server/body-budget.js';
import type { Deadlines } from '../server/deadlines.js';
import type { Logger } from '../server/logger.js';
import { createAdmissionApp } from './app.js';
import type { WebhookConfig } from './config.js';
import { loadKubeConfig } from '../kube/kube-config.js';
import { startWatchCache, type WatchCache } from './cached-lookup.js';
import { createKubernetesLookup, type ClusterLookup } from './lookup.js';
import { createAdmissionMetrics } from './metrics.js';
import { startWebhookServer, type WebhookServer } from './tls.js';

export interface StartAdmissionOptions {
  config: WebhookConfig;
  logger: Logger;
  /** The hook server's metrics registry. */
  registry: Registry;
  /**
   * Defaults to the Kubernetes API (lookup.ts, credentials from kube-api.ts), with its watch cache
   * (cached-lookup.ts) unless the configuration turns it off. A lookup given here has no cache.
   */
  lookup?: ClusterLookup;
  pollIntervalMs?: number;
  /** The hook server's deadlines (hooks/server/config.ts); they apply to the HTTPS port too. */
  deadlines?: Deadlines;
  /** `Retry-After` of a shed review (KUBECELL_RETRY_AFTER_SECONDS). */
  retryAfterSeconds?: number;
  /** The hook server's budget of body bytes, shared by both ports (hooks/server/body-budget.ts). */
  bodyBudget?: BodyBudget;
  /** Open connections before new ones are closed (KUBECELL_MAX_CONNECTIONS). */
  maxConnections?: number;
}

/** The warning logged at start-up when the webhook is not served. */
export const WEBHOOK_DISABLED =
  'admission webhook disabled: set KUBECELL_TLS_CERT_FILE and KUBECELL_TLS_KEY_FILE to serve it';

/** The running webhook server, or undefined when no TLS files are configured. */
export async function startAdmissionWebhook(
  options: StartAdmissionOptions,
): Promise<WebhookServer | undefined> {
  const { config, logger } = options;
  if (config.tls === undefined) {
    logger.warn(WEBHOOK_DISABLED, {
      port: config.port,
      unset: ['KUBECELL_TLS_CERT_FILE', 'KUBECELL_TLS_KEY_FILE'],
      effect:
        'no HTTPS listener: if the KubeCell webhook configurations are installed, the ' +
        'apiserver refuses every create and update of a KubeCell object (failurePolicy: Fail); ' +
        'if they are not, objects are not checked and VirtualClusters, plans and GPUCellPools ' +
        'get no labels',
      fix: 'mount the Secret kubecell-webhook-tls and set both variables (docs/security.md, "TLS")',
    });
    return undefined;
  }
  const { lookup, cache } = options.lookup
    ? { lookup: options.lookup, cache: undefined }
    : kubernetesLookups(config, logger);
  const app = createAdmissionApp({
    lookup,
    cache: cache?.lookup,
    logger,
    metrics: createAdmissionMetrics(options.registry),
    controllerNamespace: config.controllerNamespace,
    maxInflight: config.maxInflight,
    retryAfterSeconds: options.retryAfterSeconds,
    deadlines: options.deadlines,
    registry: options.registry,
    bodyBudget: options.bodyBudget,
  });
  let server: WebhookServer;
  try {
    server = await startWebhookServer({
      app,
      port: config.port,
      tls: config.tls,
      logger,
      pollIntervalMs: options.pollIntervalMs,
      deadlines: options.deadlines,
      maxConnections: options.maxConnections,
    });
  } catch (err) {
    cache?.stop();
    throw err;
  }
  if (cache === undefined) return server;
  const close = server.close.bind(server);
  return {
    ...server,
    close: async () => {
      cache.stop();
      await close();
    },
  };
}

/** The live lookups of the Kubernetes API, and their watch cache unless it is turned off. */
function kubernetesLookups(
  config: WebhookConfig,
  logger: Logger,
): { lookup: ClusterLookup; cache: WatchCache | undefined } {
  const { kubeConfig, source } = loadKubeConfig();
  logger.info('admission webhook lookups use the Kubernetes API', {
    server: kubeConfig.getCurrentCluster()?.server,
    credentials: source,
    cache: config.cache,
  });
  return {
    lookup: createKubernetesLookup(kubeConfig),
    cache:
      config.cache === 'watch'
        ? startWatchCache({
            kubeConfig,
            logger,
            controllerNamespace: config.controllerNamespace,
          })
        : undefined,
  };
}
