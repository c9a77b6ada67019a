/**
 * The kubecell-virtualcluster CompositeController's hooks, bound to their settings and clock,
 * ready for `registry.registerComposite('virtualcluster', ...)`.
 *
 * customize and sync first check the VirtualCluster's spec with the webhook's own rules
 * (hooks/server/valid-parent.ts): a parent the apiserver let through without the webhook gets
 * a 400 naming the field, and Metacontroller then keeps every child. finalize is not guarded:
 * deletion must always be able to finish (it reads no spec field, and the annotation
 * kubecell.io/skip-cleanup must keep working whatever the spec says).
 */
import type { VirtualCluster } from '../generated/types/index.js';
import type { CompositeHooks } from '../metacontroller/controller-hooks.js';
import { requireValidSpec } from '../server/valid-parent.js';
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
    customize: (request) => {
      requireValidSpec('VirtualCluster', request.parent);
      return customizeVirtualCluster(request, config.cellNamespace);
    },
    sync: (request) => {
      requireValidSpec('VirtualCluster', request.parent);
      return syncVirtualCluster(request, config, clock());
    },
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
