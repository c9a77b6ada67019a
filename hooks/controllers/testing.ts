/** Helpers shared by the tests that run the hook server with every controller (not shipped). */
import { captureLogger } from '../server/testing.js';

/** The real app with every registered controller, a fixed clock and an in-memory logger. */
export async function productApp(now: Date, env: NodeJS.ProcessEnv = {}) {
  const [{ createApp }, { createMetrics }, { registerControllers }, { HookRegistry }] =
    await Promise.all([
      import('../server/app.js'),
      import('../server/metrics.js'),
      import('./register.js'),
      import('../server/registry.js'),
    ]);
  const logs = captureLogger();
  const app = createApp({
    registry: registerControllers(new HookRegistry(), { env, clock: () => now }),
    logger: logs.logger,
    metrics: createMetrics({ processMetrics: false }),
    config: { bodyLimit: '64mb', bodyLimitBytes: 64 * 1024 * 1024 },
  });
  return { app, logs };
}
