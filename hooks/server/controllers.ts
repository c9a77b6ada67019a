/**
 * The one place where controllers are wired to the hook server. A controller that is not
 * registered answers 404 "not implemented yet" on all its hooks, never a made-up result.
 */
import { cellConfigFromEnv } from '../cell/config.js';
import { cellHooks } from '../cell/hooks.js';
import { classUsageHooks } from '../class-usage/usage.js';
import type { Cell, GPUCellPool, VirtualClusterPlan } from '../generated/types/index.js';
import { gpuCellPoolHooksFromEnv } from '../gpucellpool/hooks.js';
import { hostNamespaceHooksFromEnv } from '../host-namespace/hooks.js';
import { loadPlanConfig } from '../plan/config.js';
import { createPlanHooks } from '../plan/hooks.js';
import { systemClock, type Clock } from '../status/clock.js';
import { virtualClusterHooksFromEnv } from '../virtualcluster/hooks.js';
import type { HookRegistry } from './registry.js';
import { withValidParents } from './valid-parent.js';

export interface ControllerDependencies {
  /** Controller settings come from the environment, like the server's own. */
  env: NodeJS.ProcessEnv;
  clock: Clock;
}

export function registerControllers(
  registry: HookRegistry,
  { env, clock }: ControllerDependencies = { env: process.env, clock: systemClock },
): HookRegistry {
  registry.registerComposite<Cell>(
    'cell',
    withValidParents('Cell', cellHooks(cellConfigFromEnv(env), clock)),
  );
  registry.registerComposite<VirtualClusterPlan>(
    'plan',
    withValidParents('VirtualClusterPlan', createPlanHooks({ config: loadPlanConfig(env), clock })),
  );
  registry.registerComposite('virtualcluster', virtualClusterHooksFromEnv(env, clock));
  registry.registerDecorator('host-namespace', hostNamespaceHooksFromEnv(env));
  registry.registerDecorator('class-usage', classUsageHooks());
  registry.registerComposite<GPUCellPool>(
    'gpucellpool',
    withValidParents('GPUCellPool', gpuCellPoolHooksFromEnv(env, clock)),
  );
  return registry;
}
