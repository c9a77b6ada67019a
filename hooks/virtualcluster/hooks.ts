/**
 * The kubecell-virtualcluster CompositeController's hooks, bound to their settings and clock,
 * ready for `registry.registerComposite('virtualcluster', ...)`. Binding only: the hooks are
 * customize.ts and sync.ts. The parent's spec is checked before a hook runs by the wiring layer,
 * not here; finalize reads no spec field, so deletion (and the annotation
 * kubecell.io/skip-cleanup) does not depend on the spec.
 */
import type { VirtualCluster } from '../generated/types/index.js';
import type { CompositeHooks } from '../metacontroller/controller-hooks.js';
import type { Clock } from '../status/clock.js';
import { loadVirtualClusterConfig, type VirtualClusterConfig } from './config.js';
import { customizeVirtualCluster } from './customize.js';
import { finalizeVirtualCluster, syncVirtualCluster } from './sync.js';

export function createVirtualClusterHooks(options: {
  config: VirtualClusterConfig;
  clock: Clock;
}): CompositeHooks<VirtualCluster> {
  const { config, clock } = options;
  return {
    customize: (request) => customizeVirtualCluster(request, config.cellNamespace),
    sync: (request) => syncVirtualCluster(request, config, clock()),
    finalize: (request) => finalizeVirtualCluster(request, config, clock()),
  };
}

/** The hooks with settings from the environment (see config.ts); throws a ConfigError. */
export function virtualClusterHooksFromEnv(
  env: NodeJS.ProcessEnv,
  clock: Clock,
): CompositeHooks<VirtualCluster> {
  return createVirtualClusterHooks({ config: loadVirtualClusterConfig(env), clock });
}
