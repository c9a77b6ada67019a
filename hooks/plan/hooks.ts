/**
 * The kubecell-plan CompositeController's hooks, bound to their settings and clock, ready
 * for `registry.registerComposite('plan', createPlanHooks(...))`.
 */
import type { VirtualClusterPlan } from '../generated/types/index.js';
import type { CompositeHooks } from '../metacontroller/controller-hooks.js';
import type { Clock } from '../status/clock.js';
import { loadPlanConfig, type PlanConfig } from './config.js';
import { customizePlan } from './customize.js';
import { syncPlan } from './sync.js';

export function createPlanHooks(options: {
  config: PlanConfig;
  clock: Clock;
}): CompositeHooks<VirtualClusterPlan> {
  const { config, clock } = options;
  return {
    customize: (request) => customizePlan(request, config),
    sync: (request) => syncPlan(request, config, clock()),
  };
}

/** The hooks with their settings read from the environment (throws a `ConfigError`). */
export function planHooksFromEnv(
  env: NodeJS.ProcessEnv,
  clock: Clock,
): CompositeHooks<VirtualClusterPlan> {
  return createPlanHooks({ config: loadPlanConfig(env), clock });
}
