/**
 * The one place where controllers are wired to the hook server.
 *
 * Add one line per controller as it is built, for example:
 *
 *   registry.registerComposite<Cell>('cell', { customize: customizeCell, sync: syncCell, finalize: finalizeCell });
 *   registry.registerDecorator<Namespace>('host-namespace', { sync: syncHostNamespace, finalize: finalizeHostNamespace });
 *
 * A controller that is not registered answers 404 "not implemented yet" on
 * all its hooks, never a made-up result.
 */
import type { HookRegistry } from './registry.js';

export function registerControllers(registry: HookRegistry): HookRegistry {
  // No controller is built yet.
  return registry;
}
