/**
 * The kubecell-cell CompositeController's hooks, bound to their settings and clock, ready for
 * `registry.registerComposite('cell', createCellHooks(...))`.
 */
import type { Cell } from '../generated/types/index.js';
import type { CompositeHooks } from '../metacontroller/controller-hooks.js';
import type { Clock } from '../status/clock.js';
import { loadCellConfig, type CellControllerConfig } from './config.js';
import { customizeCell } from './customize.js';
import { finalizeCell, syncCell } from './sync.js';

export function createCellHooks(options: {
  config: CellControllerConfig;
  clock: Clock;
}): CompositeHooks<Cell> {
  const { config, clock } = options;
  return {
    customize: (request) => customizeCell(request, config),
    sync: (request) => syncCell(request, config, clock()),
    finalize: (request) => finalizeCell(request, config, clock()),
  };
}

/** The hooks with their settings read from the environment (throws a `ConfigError`). */
export function cellHooksFromEnv(env: NodeJS.ProcessEnv, clock: Clock): CompositeHooks<Cell> {
  return createCellHooks({ config: loadCellConfig(env), clock });
}
