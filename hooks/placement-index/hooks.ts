/**
 * The kubecell-placement-index DecoratorController's hooks, bound to their settings, ready for
 * `registry.registerDecorator('placement-index', createPlacementIndexHooks(...))`.
 */
import type { ConfigMapObject } from '../api/cell-liveness-record.js';
import type { DecoratorHooks } from '../metacontroller/controller-hooks.js';
import { loadPlacementIndexConfig, type PlacementIndexConfig } from './config.js';
import { customizePlacementIndex } from './customize.js';
import { syncPlacementIndex } from './sync.js';

export function createPlacementIndexHooks(
  config: PlacementIndexConfig,
): DecoratorHooks<ConfigMapObject> {
  return {
    customize: (request) => customizePlacementIndex(request, config),
    sync: (request) => syncPlacementIndex(request, config),
  };
}

/** The hooks with their settings read from the environment (throws a `ConfigError`). */
export function placementIndexHooksFromEnv(
  env: NodeJS.ProcessEnv,
): DecoratorHooks<ConfigMapObject> {
  return createPlacementIndexHooks(loadPlacementIndexConfig(env));
}
