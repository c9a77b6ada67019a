/**
 * The kubecell-host-namespace DecoratorController's hooks, bound to their settings, ready for
 * `registry.registerDecorator('host-namespace', createHostNamespaceHooks(...))`.
 */
import type { Namespace } from '../kube/objects.js';
import type { DecoratorHooks } from '../metacontroller/controller-hooks.js';
import { loadHostNamespaceConfig, type HostNamespaceConfig } from './config.js';
import { customizeHostNamespace } from './customize.js';
import { finalizeHostNamespace, syncHostNamespace } from './sync.js';

export function createHostNamespaceHooks(config: HostNamespaceConfig): DecoratorHooks<Namespace> {
  return {
    customize: customizeHostNamespace,
    sync: (request) => syncHostNamespace(request, config),
    finalize: (request) => finalizeHostNamespace(request),
  };
}

/** The hooks with their settings read from the environment (throws a `ConfigError`). */
export function hostNamespaceHooksFromEnv(env: NodeJS.ProcessEnv): DecoratorHooks<Namespace> {
  return createHostNamespaceHooks(loadHostNamespaceConfig(env));
}
