/**
 * The one place where KubeCell's controllers meet the hook server: each kind's hooks, with their
 * settings read from the environment, behind the one validation layer (request-validation.ts),
 * registered under the URL name of their Metacontroller object (`kubecell-<name>`, see
 * metacontroller/). The server itself knows no kind.
 */
import { cellHooksFromEnv } from '../cell/hooks.js';
import { createClassUsageHooks } from '../class-usage/hooks.js';
import { gpuCellPoolHooksFromEnv } from '../gpucellpool/hooks.js';
import { hostNamespaceHooksFromEnv } from '../host-namespace/hooks.js';
import { planHooksFromEnv } from '../plan/hooks.js';
import type { HookRegistry } from '../server/registry.js';
import { systemClock, type Clock } from '../status/clock.js';
import { virtualClusterHooksFromEnv } from '../virtualcluster/hooks.js';
import { validatedCompositeHooks, validatedDecoratorHooks } from './request-validation.js';

export interface ControllerDependencies {
  /** Controller settings come from the environment, like the server's own. */
  env: NodeJS.ProcessEnv;
  clock: Clock;
}

/** CompositeControllers, by URL name. */
export const COMPOSITE_CONTROLLERS = ['cell', 'plan', 'virtualcluster', 'gpucellpool'] as const;
/** DecoratorControllers, by URL name. */
export const DECORATOR_CONTROLLERS = ['host-namespace', 'class-usage'] as const;

/** Registers every controller; throws a ConfigError when a setting is invalid. */
export function registerControllers(
  registry: HookRegistry,
  { env, clock }: ControllerDependencies = { env: process.env, clock: systemClock },
): HookRegistry {
  return registry
    .registerComposite('cell', validatedCompositeHooks(cellHooksFromEnv(env, clock)))
    .registerComposite('plan', validatedCompositeHooks(planHooksFromEnv(env, clock)))
    .registerComposite(
      'virtualcluster',
      validatedCompositeHooks(virtualClusterHooksFromEnv(env, clock)),
    )
    .registerComposite('gpucellpool', validatedCompositeHooks(gpuCellPoolHooksFromEnv(env, clock)))
    .registerDecorator('host-namespace', validatedDecoratorHooks(hostNamespaceHooksFromEnv(env)))
    .registerDecorator('class-usage', validatedDecoratorHooks(createClassUsageHooks()));
}
