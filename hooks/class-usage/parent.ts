/** The kubecell-class-usage DecoratorController's own input rule: its parent is a class. */
import { API_VERSION } from '../api/kinds.js';
import type { VirtualNodeClass } from '../generated/types/index.js';
import { InvalidHookInputError } from '../metacontroller/invalid-input.js';

/** Throws (400) unless the parent is a VirtualNodeClass: a selector mistake, not a class. */
export function requireClass(parent: VirtualNodeClass): void {
  if (parent.apiVersion !== API_VERSION || parent.kind !== 'VirtualNodeClass') {
    throw new InvalidHookInputError(
      `parent is ${parent.apiVersion} ${parent.kind} ${parent.metadata.name}, expected a ` +
        `${API_VERSION} VirtualNodeClass: the kubecell-class-usage DecoratorController ` +
        'must select virtualnodeclasses only',
    );
  }
}
