/**
 * The GPUCellPool hooks, bound to their settings, clock and view of the served kinds, ready for
 * `registry.registerComposite('gpucellpool', ...)`. Both GPUCellPool CompositeControllers
 * (metacontroller/gpucellpool/kubevirt/ and metacontroller/gpucellpool/cluster-api/) call them.
 */
import type { GPUCellPool } from '../generated/types/index.js';
import type { CompositeHooks } from '../metacontroller/controller-hooks.js';
import type { Clock } from '../status/clock.js';
import { loadGPUCellPoolConfig, type GPUCellPoolConfig } from './config.js';
import { customizeGPUCellPool } from './customize.js';
import { servedKindsFromEnv, unknownServedKinds, type ServedKinds } from './served-kinds.js';
import { finalizeGPUCellPool, syncGPUCellPool } from './sync.js';

export function createGPUCellPoolHooks(options: {
  config: GPUCellPoolConfig;
  clock: Clock;
  /** Which kinds the apiserver serves; without it, every kind is asked for (not known). */
  served?: ServedKinds;
}): CompositeHooks<GPUCellPool> {
  const { config, clock } = options;
  const served = options.served ?? unknownServedKinds('no API discovery configured');
  return {
    customize: (request) => customizeGPUCellPool(request, config, served),
    sync: (request) => syncGPUCellPool(request, config, clock()),
    finalize: (request) => finalizeGPUCellPool(request, config, clock()),
  };
}

/**
 * The hooks with settings from the environment (see config.ts; throws a ConfigError), and API
 * discovery when the environment has credentials (served-kinds.ts, `servedKindsFromEnv`).
 */
export function gpuCellPoolHooksFromEnv(
  env: NodeJS.ProcessEnv,
  clock: Clock,
): CompositeHooks<GPUCellPool> {
  return createGPUCellPoolHooks({
    config: loadGPUCellPoolConfig(env),
    clock,
    served: servedKindsFromEnv(env),
  });
}
