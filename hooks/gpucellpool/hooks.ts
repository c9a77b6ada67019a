/**
 * The kubecell-gpucellpool CompositeController's hooks, bound to their settings and clock,
 * ready for `registry.registerComposite('gpucellpool', ...)`.
 */
import type { GPUCellPool } from '../generated/types/index.js';
import type { CompositeHooks } from '../server/registry.js';
import type { Clock } from '../status/clock.js';
import { loadGPUCellPoolConfig, type GPUCellPoolConfig } from './config.js';
import { customizeGPUCellPool } from './customize.js';
import { finalizeGPUCellPool, syncGPUCellPool } from './sync.js';

export function createGPUCellPoolHooks(options: {
  config: GPUCellPoolConfig;
  clock: Clock;
}): CompositeHooks<GPUCellPool> {
  const { config, clock } = options;
  return {
    customize: (request) => customizeGPUCellPool(request, config),
    sync: (request) => syncGPUCellPool(request, config, clock()),
    finalize: (request) => finalizeGPUCellPool(request, config, clock()),
  };
}

/** The hooks with settings from the environment (see config.ts); throws a ConfigError. */
export function gpuCellPoolHooksFromEnv(
  env: NodeJS.ProcessEnv,
  clock: Clock,
): CompositeHooks<GPUCellPool> {
  return createGPUCellPoolHooks({ config: loadGPUCellPoolConfig(env), clock });
}
