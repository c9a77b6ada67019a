/**
 * The kubecell-delivery DecoratorController's hooks, bound to their settings, ready for
 * `registry.registerDecorator('delivery', ...)`. Binding only: the hooks are customize.ts and
 * sync.ts. No finalize hook: KubeCell puts no finalizer on OCM's ManagedCluster.
 */
import type { DecoratorHooks } from '../metacontroller/controller-hooks.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { loadDeliveryConfig, type DeliveryConfig } from './config.js';
import { customizeDelivery } from './customize.js';
import { syncDelivery } from './sync.js';

export function createDeliveryHooks(config: DeliveryConfig): DecoratorHooks<KubernetesObject> {
  return {
    customize: () => customizeDelivery(config),
    sync: (request) => syncDelivery(request, config),
  };
}

/** The hooks with their settings read from the environment (throws a `ConfigError`). */
export function deliveryHooksFromEnv(env: NodeJS.ProcessEnv): DecoratorHooks<KubernetesObject> {
  return createDeliveryHooks(loadDeliveryConfig(env));
}
