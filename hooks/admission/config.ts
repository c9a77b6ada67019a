/**
 * Admission webhook settings, read once at startup from the environment (beside the hook
 * server's own, hooks/server/config.ts).
 *
 * | Variable                        | Default           | Meaning                                   |
 * |---------------------------------|-------------------|-------------------------------------------|
 * | `KUBECELL_WEBHOOK_PORT`         | `9443`            | HTTPS port of /admission/validate and /admission/mutate |
 * | `KUBECELL_TLS_CERT_FILE`        | (unset)           | PEM certificate (chain) of the HTTPS port |
 * | `KUBECELL_TLS_KEY_FILE`         | (unset)           | PEM private key of the HTTPS port         |
 * | `KUBECELL_CONTROLLER_NAMESPACE` | `kubecell-system` | The only namespace Cells may be created in |
 * | `KUBECELL_WEBHOOK_MAX_INFLIGHT` | `64`             | Reviews in flight before new ones get 429 (0 = no limit) |
 * | `KUBECELL_WEBHOOK_CACHE`        | `watch`           | `watch`: the cross-object rules read a watch cache first, a refusal is confirmed live (D38); `off`: every review reads the apiserver |
 *
 * The HTTPS port also follows the hook server's deadlines (`KUBECELL_HEADERS_TIMEOUT_SECONDS`,
 * `KUBECELL_BODY_TIMEOUT_SECONDS`, `KUBECELL_REQUEST_TIMEOUT_SECONDS`, hooks/server/config.ts)
 * and `Retry-After` (`KUBECELL_RETRY_AFTER_SECONDS`).
 *
 * HTTPS (and with it the webhook) is enabled when both files are set; setting only one is an
 * error. The files are re-read when they change (see tls.ts).
 */
import { EnvReader, SHARED_DEFAULTS } from '../config/env-reader.js';

export interface WebhookConfig {
  port: number;
  /** Absent when the webhook is disabled (no TLS files configured). */
  tls?: { certFile: string; keyFile: string };
  controllerNamespace: string;
  /** Reviews in flight before new ones are answered 429; 0 = no limit. */
  maxInflight: number;
  /** `watch`: lookups from a watch cache, refusals confirmed live (cached-lookup.ts); `off`: live. */
  cache: WebhookCache;
}

export const WEBHOOK_CACHES = ['watch', 'off'] as const;
export type WebhookCache = (typeof WEBHOOK_CACHES)[number];

export const WEBHOOK_DEFAULTS = {
  KUBECELL_WEBHOOK_PORT: '9443',
  KUBECELL_CONTROLLER_NAMESPACE: SHARED_DEFAULTS.KUBECELL_CONTROLLER_NAMESPACE,
  // The apiserver calls the webhooks about as often as objects are written; 64 reviews at once
  // is far beyond that, and each is small (objects are at most 3 MiB).
  KUBECELL_WEBHOOK_MAX_INFLIGHT: '64',
  KUBECELL_WEBHOOK_CACHE: 'watch',
} as const;

/** Reads the webhook settings; throws a `ConfigError` listing every invalid variable. */
export function loadWebhookConfig(env: NodeJS.ProcessEnv = process.env): WebhookConfig {
  const reader = new EnvReader(env);

  const portText = reader.text('KUBECELL_WEBHOOK_PORT', WEBHOOK_DEFAULTS.KUBECELL_WEBHOOK_PORT);
  const port = /^\d+$/.test(portText) ? Number(portText) : NaN;
  if (!(port >= 0 && port <= 65535)) {
    reader.problem(
      `KUBECELL_WEBHOOK_PORT=${JSON.stringify(portText)} is not a port; set it to an integer ` +
        `from 0 to 65535 (default ${WEBHOOK_DEFAULTS.KUBECELL_WEBHOOK_PORT})`,
    );
  }

  const certFile = reader.optional('KUBECELL_TLS_CERT_FILE');
  const keyFile = reader.optional('KUBECELL_TLS_KEY_FILE');
  if ((certFile === undefined) !== (keyFile === undefined)) {
    const [set, unset] =
      certFile === undefined
        ? ['KUBECELL_TLS_KEY_FILE', 'KUBECELL_TLS_CERT_FILE']
        : ['KUBECELL_TLS_CERT_FILE', 'KUBECELL_TLS_KEY_FILE'];
    reader.problem(
      `${set} is set but ${unset} is not; set both to serve the admission webhook over HTTPS ` +
        '(e.g. tls.crt and tls.key of the mounted Secret kubecell-webhook-tls), or neither to disable it',
    );
  }

  const controllerNamespace = reader.controllerNamespace();
  const maxInflight = reader.limit(
    'KUBECELL_WEBHOOK_MAX_INFLIGHT',
    Number(WEBHOOK_DEFAULTS.KUBECELL_WEBHOOK_MAX_INFLIGHT),
    100_000,
  );
  const cache = readCache(reader);
  reader.finish();
  return {
    port,
    controllerNamespace,
    maxInflight,
    cache,
    ...(certFile !== undefined && keyFile !== undefined ? { tls: { certFile, keyFile } } : {}),
  };
}

function readCache(reader: EnvReader): WebhookCache {
  const fallback = WEBHOOK_DEFAULTS.KUBECELL_WEBHOOK_CACHE;
  const text = reader.text('KUBECELL_WEBHOOK_CACHE', fallback);
  const cache = WEBHOOK_CACHES.find((known) => known === text);
  if (cache !== undefined) return cache;
  reader.problem(
    `KUBECELL_WEBHOOK_CACHE=${JSON.stringify(text)} is not one of ${WEBHOOK_CACHES.join(', ')}; ` +
      `set it to watch (the default: the webhook's lookups read a watch cache, and a refusal is ` +
      `confirmed by reading the apiserver) or off (every review reads the apiserver)`,
  );
  return fallback;
}
