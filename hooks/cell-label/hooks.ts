/**
 * The kubecell-cell-label DecoratorController's hooks, ready for
 * `registry.registerDecorator('cell-label', createCellLabelHooks())`. It has no settings and
 * relates nothing.
 */
import type { VirtualCluster } from '../generated/types/index.js';
import type { DecoratorHooks } from '../metacontroller/controller-hooks.js';
import { syncCellLabel } from './sync.js';

export function createCellLabelHooks(): DecoratorHooks<VirtualCluster> {
  return { sync: syncCellLabel };
}

/** The same hooks, named like every kind's: the controller reads no environment variable. */
export function cellLabelHooksFromEnv(): DecoratorHooks<VirtualCluster> {
  return createCellLabelHooks();
}
