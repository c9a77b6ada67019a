/**
 * The kubecell-class-usage DecoratorController's hooks, ready for
 * `registry.registerDecorator('class-usage', createClassUsageHooks())`. It has no settings.
 */
import type { VirtualNodeClass } from '../generated/types/index.js';
import type { DecoratorHooks } from '../metacontroller/controller-hooks.js';
import { customizeClassUsage } from './customize.js';
import { syncClassUsage } from './sync.js';

export function createClassUsageHooks(): DecoratorHooks<VirtualNodeClass> {
  return { customize: customizeClassUsage, sync: syncClassUsage };
}

/** The same hooks, named like every kind's: the controller reads no environment variable. */
export function classUsageHooksFromEnv(): DecoratorHooks<VirtualNodeClass> {
  return createClassUsageHooks();
}
