/**
 * The hooks one controller answers, as handler functions over the typed v2 requests of
 * protocol.ts. Each kind's binding module returns one of these; the wiring registers it.
 */
import type {
  Awaitable,
  CompositeSyncRequest,
  CompositeSyncResponse,
  CustomizeHookRequest,
  CustomizeHookResponse,
  DecoratorSyncRequest,
  DecoratorSyncResponse,
  KubernetesObject,
} from './protocol.js';

export type CustomizeHandler<P extends KubernetesObject = KubernetesObject> = (
  request: CustomizeHookRequest<P>,
) => Awaitable<CustomizeHookResponse>;

export type CompositeSyncHandler<P extends KubernetesObject = KubernetesObject> = (
  request: CompositeSyncRequest<P>,
) => Awaitable<CompositeSyncResponse>;

export type DecoratorSyncHandler<P extends KubernetesObject = KubernetesObject> = (
  request: DecoratorSyncRequest<P>,
) => Awaitable<DecoratorSyncResponse>;

/** The hooks of one CompositeController; `sync` is mandatory. */
export interface CompositeHooks<P extends KubernetesObject = KubernetesObject> {
  customize?: CustomizeHandler<P>;
  sync: CompositeSyncHandler<P>;
  finalize?: CompositeSyncHandler<P>;
}

/** The hooks of one DecoratorController; `sync` is mandatory. */
export interface DecoratorHooks<P extends KubernetesObject = KubernetesObject> {
  customize?: CustomizeHandler<P>;
  sync: DecoratorSyncHandler<P>;
  finalize?: DecoratorSyncHandler<P>;
}
