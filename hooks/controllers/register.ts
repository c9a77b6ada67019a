/**
 * The one place where KubeCell's controllers meet the hook server: each kind's hooks, with their
 * settings read from the environment, behind the one validation layer (request-validation.ts),
 * registered under the URL name of their Metacontroller object (`kubecell-<name>`, see
 * metacontroller/). The server itself knows no kind.
 */
import { API_VERSION } from '../api/kinds.js';
import { cellHooksFromEnv } from '../cell/hooks.js';
import { cellLabelHooksFromEnv } from '../cell-label/hooks.js';
import { classUsageHooksFromEnv } from '../class-usage/hooks.js';
import { deliveryHooksFromEnv } from '../delivery/hooks.js';
import { gpuCellPoolHooksFromEnv } from '../gpucellpool/hooks.js';
import { hostNamespaceHooksFromEnv } from '../host-namespace/hooks.js';
import type { CompositeHooks, DecoratorHooks } from '../metacontroller/controller-hooks.js';
import { placementIndexHooksFromEnv } from '../placement-index/hooks.js';
import { planHooksFromEnv } from '../plan/hooks.js';
import type { HookRegistry } from '../server/registry.js';
import { systemClock, type Clock } from '../status/clock.js';
import { virtualClusterHooksFromEnv } from '../virtualcluster/hooks.js';
import { validatedCompositeHooks, validatedDecoratorHooks } from './request-validation.js';

export interface ControllerDependencies {
  /** Controller settings come from the environment, like the server's own. */
  env: NodeJS.ProcessEnv;
  clock: Clock;
}

type Controller = {
  /** URL name; the Metacontroller object is `kubecell-<name>` (GPUCellPool: one per provisioner). */
  name: string;
  parent: { apiVersion: string; kind: string };
} & (
  | { type: 'CompositeController'; hooks: (deps: ControllerDependencies) => CompositeHooks<never> }
  | { type: 'DecoratorController'; hooks: (deps: ControllerDependencies) => DecoratorHooks<never> }
);

const kubecell = (kind: string) => ({ apiVersion: API_VERSION, kind });

/** Every controller, in the order the startup log lists them. */
export const CONTROLLERS: readonly Controller[] = [
  {
    name: 'cell',
    type: 'CompositeController',
    parent: kubecell('Cell'),
    hooks: ({ env, clock }) => cellHooksFromEnv(env, clock),
  },
  {
    name: 'plan',
    type: 'CompositeController',
    parent: kubecell('VirtualClusterPlan'),
    hooks: ({ env, clock }) => planHooksFromEnv(env, clock),
  },
  {
    name: 'virtualcluster',
    type: 'CompositeController',
    parent: kubecell('VirtualCluster'),
    hooks: ({ env, clock }) => virtualClusterHooksFromEnv(env, clock),
  },
  {
    name: 'gpucellpool',
    type: 'CompositeController',
    parent: kubecell('GPUCellPool'),
    hooks: ({ env, clock }) => gpuCellPoolHooksFromEnv(env, clock),
  },
  {
    name: 'host-namespace',
    type: 'DecoratorController',
    parent: { apiVersion: 'v1', kind: 'Namespace' },
    hooks: ({ env }) => hostNamespaceHooksFromEnv(env),
  },
  {
    name: 'cell-label',
    type: 'DecoratorController',
    parent: kubecell('VirtualCluster'),
    hooks: () => cellLabelHooksFromEnv(),
  },
  {
    name: 'placement-index',
    type: 'DecoratorController',
    parent: { apiVersion: 'v1', kind: 'ConfigMap' },
    hooks: ({ env }) => placementIndexHooksFromEnv(env),
  },
  {
    name: 'class-usage',
    type: 'DecoratorController',
    parent: kubecell('VirtualNodeClass'),
    hooks: () => classUsageHooksFromEnv(),
  },
  {
    name: 'delivery',
    type: 'DecoratorController',
    parent: { apiVersion: 'cluster.open-cluster-management.io/v1', kind: 'ManagedCluster' },
    hooks: ({ env }) => deliveryHooksFromEnv(env),
  },
];

/** Registers every controller; throws a ConfigError when a setting is invalid. */
export function registerControllers(
  registry: HookRegistry,
  deps: ControllerDependencies = { env: process.env, clock: systemClock },
): HookRegistry {
  for (const controller of CONTROLLERS) {
    const parent = {
      ...controller.parent,
      controller: `kubecell-${controller.name} ${controller.type}`,
    };
    if (controller.type === 'CompositeController') {
      registry.registerComposite(
        controller.name,
        validatedCompositeHooks(controller.hooks(deps), parent),
      );
    } else {
      registry.registerDecorator(
        controller.name,
        validatedDecoratorHooks(controller.hooks(deps), parent),
      );
    }
  }
  return registry;
}
