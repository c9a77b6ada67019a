/**
 * Hook server entry point (`npm start`). Settings come from the environment:
 * KUBECELL_PORT (8080), KUBECELL_BODY_LIMIT (64mb), KUBECELL_LOG_LEVEL (info), the deadlines
 * KUBECELL_HEADERS_TIMEOUT_SECONDS (10), KUBECELL_BODY_TIMEOUT_SECONDS (20) and
 * KUBECELL_REQUEST_TIMEOUT_SECONDS (30) of both ports (hooks/server/deadlines.ts), the budget of
 * request body bytes both ports share, KUBECELL_BODY_BUDGET (96mb, hooks/server/body-budget.ts),
 * the connections per port, KUBECELL_MAX_CONNECTIONS (1000, hooks/server/connections.ts), and
 * for the admission webhook's HTTPS port (hooks/admission/config.ts) KUBECELL_WEBHOOK_PORT (9443),
 * KUBECELL_TLS_CERT_FILE, KUBECELL_TLS_KEY_FILE, KUBECELL_CONTROLLER_NAMESPACE (kubecell-system),
 * KUBECELL_WEBHOOK_MAX_INFLIGHT (64).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadWebhookConfig, type WebhookConfig } from './admission/config.js';
import { startAdmissionWebhook } from './admission/start.js';
import type { WebhookServer } from './admission/tls.js';
import { createApp } from './server/app.js';
import { createBodyBudget, type BodyBudget } from './server/body-budget.js';
import { guardConnections } from './server/connections.js';
import { ConfigError } from './config/env-reader.js';
import { loadConfig, type ServerConfig } from './server/config.js';
import { registerControllers } from './controllers/register.js';
import { deadlineServerOptions } from './server/deadlines.js';
import { createLogger, type Logger } from './server/logger.js';
import { createMetrics, type HookMetrics } from './server/metrics.js';
import { Readiness } from './server/readiness.js';
import { HookRegistry } from './server/registry.js';

/** How long in-flight hook calls get to finish on shutdown (Metacontroller's hook timeout). */
const SHUTDOWN_GRACE_MS = 10_000;

interface Settings {
  config: ServerConfig;
  webhookConfig: WebhookConfig;
  registry: HookRegistry;
}

/** The budget of body bytes in memory, one for the whole process: both ports draw on it. */
function bodyBudgetOf(config: ServerConfig): BodyBudget {
  return createBodyBudget({
    limitBytes: config.bodyBudgetBytes,
    limit: config.bodyBudget,
    retryAfterSeconds: config.retryAfterSeconds,
  });
}

/** Every setting, the controllers' included; a bad one stops start-up (exit 2) naming it. */
function loadSettings(): Settings {
  try {
    return {
      config: loadConfig(),
      webhookConfig: loadWebhookConfig(),
      registry: registerControllers(new HookRegistry()),
    };
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`kubecell hook server: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

/**
 * The admission webhook's HTTPS listener, only when TLS files are set (hooks/admission/start.ts).
 * A webhook that cannot start is fatal.
 */
function startWebhook(
  { config, webhookConfig }: Settings,
  logger: Logger,
  metrics: HookMetrics,
  bodyBudget: BodyBudget,
): Promise<WebhookServer | undefined> {
  return startAdmissionWebhook({
    config: webhookConfig,
    logger,
    registry: metrics.registry,
    deadlines: config.deadlines,
    retryAfterSeconds: config.retryAfterSeconds,
    bodyBudget,
    maxConnections: config.maxConnections,
  }).catch((err: unknown) => {
    logger.error('admission webhook cannot start', {
      port: webhookConfig.port,
      error: err instanceof Error ? err.message : String(err),
    });
    process.exit(1);
  });
}

function main(): void {
  const settings = loadSettings();
  const { config, registry } = settings;
  const logger = createLogger({ level: config.logLevel });
  keepServingOnStrayErrors(logger);

  const metrics = createMetrics();
  const readiness = new Readiness();
  const bodyBudget = bodyBudgetOf(config);
  const app = createApp({ registry, logger, metrics, config, readiness, bodyBudget });
  let webhook: WebhookServer | undefined;
  const webhookStarted = startWebhook(settings, logger, metrics, bodyBudget).then((started) => {
    webhook = started;
  });

  // Metacontroller is a Go client that keeps idle connections for 90 s. If Node closed them
  // first (default 5 s), a request sent on a connection being closed fails with "server closed
  // idle connection": the keep-alive timeout outlives the client, except when many connections
  // are open (connections.ts says why that is safe). A request itself must arrive within the
  // headers and body deadlines, and be answered within the request deadline (deadlines.ts).
  const server = createServer(deadlineServerOptions(config.deadlines), app);
  guardConnections(server, { maxConnections: config.maxConnections, logger, listener: 'hooks' });
  server.listen(config.port, async () => {
    // Ready once both listeners are.
    await webhookStarted;
    readiness.markReady();
    logger.info('hook server listening', {
      port: (server.address() as AddressInfo).port,
      bodyLimit: config.bodyLimit,
      logLevel: config.logLevel,
      maxInflight: config.maxInflight,
      deadlines: config.deadlines,
      bodyBudget: config.bodyBudget,
      maxConnections: config.maxConnections,
      controllers: registry.registered(),
    });
  });
  server.on('error', (err) => {
    // Listen errors (port in use, no permission) are fatal: nothing is served.
    logger.error('hook server cannot listen', { port: config.port, error: err.message });
    process.exit(1);
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => shutdown(server, readiness, logger, signal, webhook));
  }
}

/**
 * Stop taking new calls, let in-flight ones finish, then exit. Metacontroller
 * retries any call that fails, so a call cut off at the deadline is not lost.
 */
function shutdown(
  server: Server,
  readiness: Readiness,
  logger: Logger,
  signal: string,
  webhook?: WebhookServer,
): void {
  readiness.markNotReady(`shutting down (${signal})`);
  logger.info('hook server shutting down', { signal });
  const deadline = setTimeout(() => {
    logger.warn('in-flight hook calls did not finish in time; closing them', {
      graceMs: SHUTDOWN_GRACE_MS,
    });
    server.closeAllConnections();
    webhook?.closeAllConnections();
  }, SHUTDOWN_GRACE_MS);
  deadline.unref();
  const webhookClosed = webhook?.close() ?? Promise.resolve();
  server.close(() => {
    void webhookClosed.then(() => {
      logger.info('hook server stopped');
      process.exit(0);
    });
  });
  server.closeIdleConnections();
}

/**
 * Log and keep serving on an uncaught exception or unhandled rejection.
 *
 * Node's default is to crash. For this server that default is the wrong
 * trade: it holds no state between calls (everything lives in the parents'
 * status), so an error escaping one call cannot corrupt another. A crash, on
 * the other hand, drops every in-flight call of every controller, and since
 * Metacontroller retries the offending object forever, one bad object would
 * keep the whole server in CrashLoopBackOff. Express already turns errors in
 * handlers into 500 answers; this only catches what escapes a request (a
 * callback thrown from a timer, a promise nobody awaited).
 */
function keepServingOnStrayErrors(logger: Logger): void {
  process.on('uncaughtException', (err) => {
    logger.error('uncaught exception; still serving', { error: err.message, stack: err.stack });
  });
  process.on('unhandledRejection', (reason) => {
    logger.error('unhandled promise rejection; still serving', {
      error: reason instanceof Error ? reason.message : String(reason),
      stack: reason instanceof Error ? reason.stack : undefined,
    });
  });
}

main();
