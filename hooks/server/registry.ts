/**
 * Which handler answers `POST /hooks/<controller>/<hook>`.
 *
 * A handler is a pure function from a v2 hook request to a v2 hook response
 * (it may return a promise). The registry pairs each handler with the request
 * check and response check for its controller type, so the HTTP layer stays
 * thin and knows nothing about individual controllers.
 */
import {
  parseCompositeSyncRequest,
  parseCustomizeRequest,
  parseDecoratorSyncRequest,
  type ShapeResult,
} from '../metacontroller/request-shape.js';
import type { ResponseKind } from '../metacontroller/response-shape.js';
import type {
  CompositeHooks,
  CustomizeHandler,
  DecoratorHooks,
} from '../metacontroller/controller-hooks.js';
import type { Awaitable, KubernetesObject } from '../metacontroller/protocol.js';

export const HOOK_NAMES = ['customize', 'sync', 'finalize'] as const;
export type HookName = (typeof HOOK_NAMES)[number];

export type ControllerType = 'composite' | 'decorator';

/**
 * A handler bound to its request check. `prepare` checks the body and, when
 * it is well formed, returns the call to make.
 */
export interface ResolvedHook {
  controller: string;
  hook: HookName;
  controllerType: ControllerType;
  responseKind: ResponseKind;
  prepare(body: unknown): ShapeResult<() => Awaitable<unknown>>;
}

export type HookLookup = { found: true; hook: ResolvedHook } | { found: false; message: string };

export interface RegisteredController {
  controller: string;
  controllerType: ControllerType;
  hooks: HookName[];
}

type BoundHooks = Partial<Record<HookName, Omit<ResolvedHook, 'controller' | 'hook'>>>;

export class HookRegistry {
  readonly #controllers = new Map<string, BoundHooks>();
  readonly #types = new Map<string, ControllerType>();

  /**
   * Registers a CompositeController's hooks. `P` is the parent type the
   * handlers expect (e.g. the generated `Cell` type); the request check
   * guarantees its apiVersion, kind and metadata.name, the CRD schema the rest.
   */
  registerComposite<P extends KubernetesObject>(
    controller: string,
    hooks: CompositeHooks<P>,
  ): this {
    const { customize, sync, finalize } = hooks as unknown as CompositeHooks;
    return this.#add(controller, 'composite', {
      customize: customize && bindCustomize('composite', customize),
      sync: bind('composite', 'compositeSync', parseCompositeSyncRequest, sync),
      finalize: finalize && bind('composite', 'compositeSync', parseCompositeSyncRequest, finalize),
    });
  }

  /**
   * Registers a DecoratorController's hooks. Sync and finalize bodies are Metacontroller's
   * decorator request (`object`, `attachments`, `related`, `finalizing`), handed to the handlers
   * as a `DecoratorSyncRequest`; customize bodies are `{controller, parent}`.
   */
  registerDecorator<P extends KubernetesObject>(
    controller: string,
    hooks: DecoratorHooks<P>,
  ): this {
    const { customize, sync, finalize } = hooks as unknown as DecoratorHooks;
    return this.#add(controller, 'decorator', {
      customize: customize && bindCustomize('decorator', customize),
      sync: bind('decorator', 'decoratorSync', parseDecoratorSyncRequest, sync),
      finalize: finalize && bind('decorator', 'decoratorSync', parseDecoratorSyncRequest, finalize),
    });
  }

  /** Finds the handler for a URL's controller and hook, or says why there is none. */
  lookup(controller: string, hook: string): HookLookup {
    const hooks = this.#controllers.get(controller);
    if (hooks === undefined) {
      return {
        found: false,
        message: `unknown controller ${quote(controller)}; controllers are ${[...this.#controllers.keys()].join(', ')}`,
      };
    }
    if (!isHookName(hook)) {
      return {
        found: false,
        message: `unknown hook ${quote(hook)}; hooks are ${HOOK_NAMES.join(', ')}`,
      };
    }
    const bound = hooks[hook];
    if (bound === undefined) {
      return {
        found: false,
        message: `controller ${quote(controller)} has no ${hook} hook`,
      };
    }
    return { found: true, hook: { controller, hook, ...bound } };
  }

  /** Whether `controller` is registered. */
  has(controller: string): boolean {
    return this.#controllers.has(controller);
  }

  /** What is registered, for the startup log. */
  registered(): RegisteredController[] {
    return [...this.#controllers].map(([controller, hooks]) => ({
      controller,
      controllerType: this.#types.get(controller) as ControllerType,
      hooks: HOOK_NAMES.filter((name) => hooks[name] !== undefined),
    }));
  }

  #add(controller: string, type: ControllerType, hooks: BoundHooks): this {
    if (this.#controllers.has(controller)) {
      throw new Error(`controller ${quote(controller)} is already registered`);
    }
    this.#controllers.set(controller, hooks);
    this.#types.set(controller, type);
    return this;
  }
}

export function isHookName(name: string): name is HookName {
  return (HOOK_NAMES as readonly string[]).includes(name);
}

function bind<Req>(
  controllerType: ControllerType,
  responseKind: ResponseKind,
  parse: (body: unknown) => ShapeResult<Req>,
  handler: (request: Req) => Awaitable<unknown>,
): Omit<ResolvedHook, 'controller' | 'hook'> {
  return {
    controllerType,
    responseKind,
    prepare(body) {
      const parsed = parse(body);
      if (!parsed.ok) return parsed;
      return { ok: true, value: () => handler(parsed.value) };
    },
  };
}

function bindCustomize(
  controllerType: ControllerType,
  handler: CustomizeHandler,
): Omit<ResolvedHook, 'controller' | 'hook'> {
  return bind(controllerType, 'customize', parseCustomizeRequest, handler);
}

/** A URL segment quoted for a message, cut short so a long path stays readable. */
function quote(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}
