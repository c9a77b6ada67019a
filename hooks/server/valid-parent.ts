import { KINDS, type KindName } from '../api/kinds.js';
import { validateObject } from '../api/validate-object.js';
import { InvalidHookInputError } from '../metacontroller/invalid-input.js';
import { summarizeProblems } from '../json/json.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { echo } from '../json/echo.js';
import type { CompositeHooks } from '../metacontroller/controller-hooks.js';

/**
 * Checks the parent's spec against its kind's schema and CEL rules (the webhook's rules)
 * before a hook reads it, so a parent the apiserver let through without the webhook gets a 400
 * naming the field instead of a crash or a guess. Status is the controller's own output and is
 * not judged here.
 */
export function requireValidSpec(kind: KindName, parent: KubernetesObject): void {
  const { apiVersion, kind: parentKind, metadata } = parent;
  const spec = (parent as KubernetesObject & { spec?: unknown }).spec;
  const errors = validateObject(KINDS[kind], { apiVersion, kind: parentKind, metadata, spec });
  if (errors.length > 0) {
    const where = echo([metadata.namespace, metadata.name].filter(Boolean).join('/'));
    throw new InvalidHookInputError(
      `${kind} ${where} is invalid: ${summarizeProblems(errors.map((error) => error.message))}`,
    );
  }
}

/** The same hooks, each refusing a parent whose spec is invalid. */
export function withValidParents<P extends KubernetesObject>(
  kind: KindName,
  hooks: CompositeHooks<P>,
): CompositeHooks<P> {
  const guard =
    <R extends { parent: P }, T>(handler: (request: R) => T) =>
    (request: R): T => {
      requireValidSpec(kind, request.parent);
      return handler(request);
    };
  return {
    sync: guard(hooks.sync),
    ...(hooks.customize ? { customize: guard(hooks.customize) } : {}),
    ...(hooks.finalize ? { finalize: guard(hooks.finalize) } : {}),
  };
}
