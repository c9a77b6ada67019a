/**
 * Hook request bodies as Metacontroller v4.17.2 posts them, for tests (not loaded in production).
 *
 * The fixtures under `__fixtures__/` are written out field by field from Metacontroller's Go
 * structs, so that a test posting them sends what the real binary sends:
 *
 * - `decorator-sync-v2.json`: the kubecell-host-namespace sync of a host namespace that already
 *   carries the baseline, with its four NetworkPolicies observed. `DecoratorHookRequest` of
 *   `pkg/controller/decorator/api/v2/hooks.go` (json tags `controller`, `object`, `attachments`,
 *   `related`, `finalizing`); `attachments` holds the NetworkPolicy group because the
 *   DecoratorController declares it (`getChildren`, `pkg/controller/decorator/controller.go`);
 *   `related` is `{}` because the customize hook asks for nothing (`GetRelatedObjects`,
 *   `pkg/controller/common/customize/manager.go`). The observed policies carry what the
 *   apiserver and Metacontroller add: owner reference, `metacontroller.k8s.io/decorator-controller`
 *   and the last-applied annotation, managedFields.
 * - `decorator-sync-related-v2.json`: the kubecell-class-usage sync of a VirtualNodeClass with two
 *   related VirtualClusters (one resolved to it, one Pending); `attachments` is `{}` since the
 *   DecoratorController declares none.
 * - `decorator-customize-v2.json`: the kubecell-class-usage customize request,
 *   `CustomizeHookRequest` of `pkg/controller/common/customize/api/v2/hooks.go`: `controller` and
 *   `parent` (the customize request keeps the key `parent` for decorators).
 *
 * Map keys are written sorted inside Kubernetes objects, as Go writes an unstructured object.
 */
import { readFileSync } from 'node:fs';
import type { KubernetesObject, ObjectMap } from './protocol.js';

/** The json tags of `DecoratorHookRequest`, in struct order (pkg/controller/decorator/api/v2/hooks.go). */
export const DECORATOR_HOOK_REQUEST_FIELDS = [
  'controller',
  'object',
  'attachments',
  'related',
  'finalizing',
] as const;

/** The json tags of `CustomizeHookRequest` (pkg/controller/common/customize/api/v2/hooks.go). */
export const CUSTOMIZE_HOOK_REQUEST_FIELDS = ['controller', 'parent'] as const;

export type FixtureName =
  'decorator-sync-v2' | 'decorator-sync-related-v2' | 'decorator-customize-v2';

/** A fresh copy of a fixture, free to change. */
export function loadFixture<T = Record<string, unknown>>(name: FixtureName): T {
  const url = new URL(`./__fixtures__/${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')) as T;
}

/** A DecoratorController sync or finalize body, as Metacontroller v2 builds it. */
export interface DecoratorHookBody<P extends KubernetesObject = KubernetesObject> {
  controller: Record<string, unknown>;
  object: P;
  attachments: ObjectMap;
  related: ObjectMap;
  finalizing: boolean;
}

/**
 * Builds a DecoratorController sync or finalize body the way Metacontroller's v2 request builder
 * does: every field present, empty maps as `{}` (never `null`).
 */
export function decoratorHookBody<P extends KubernetesObject>(
  controller: Record<string, unknown>,
  object: P,
  options: { attachments?: ObjectMap; related?: ObjectMap; finalizing?: boolean } = {},
): DecoratorHookBody<P> {
  return {
    controller,
    object,
    attachments: options.attachments ?? {},
    related: options.related ?? {},
    finalizing: options.finalizing ?? false,
  };
}
