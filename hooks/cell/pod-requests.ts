import type { Container, Pod } from '../kube/objects.js';
import {
  addQuantities,
  compareQuantities,
  parseQuantity,
  type ParsedQuantity,
} from '../quantity/quantity.js';

/** Resource name → exact amount. */
export type Amounts = Map<string, ParsedQuantity>;

function requestsOf(container: Container): Amounts {
  const amounts: Amounts = new Map();
  for (const [resource, value] of Object.entries(container.resources?.requests ?? {})) {
    amounts.set(resource, parseQuantity(value));
  }
  return amounts;
}

/** Adds amounts (or a wire resource list) into `target`, resource by resource. */
export function addInto(
  target: Amounts,
  source: Amounts | Readonly<Record<string, string | number | undefined>>,
): Amounts {
  const entries: Iterable<readonly [string, ParsedQuantity]> =
    source instanceof Map
      ? source.entries()
      : Object.entries(source).flatMap(([resource, value]) =>
          value === undefined ? [] : [[resource, parseQuantity(value)] as const],
        );
  for (const [resource, amount] of entries) {
    const sum = target.get(resource);
    target.set(resource, sum ? addQuantities(sum, amount) : amount);
  }
  return target;
}

/**
 * What the scheduler reserves for a pod: per resource, the larger of the biggest init container
 * and the sum of the app containers, plus the pod overhead (RuntimeClass).
 */
export function effectiveRequests(pod: Pod): Amounts {
  const total: Amounts = new Map();
  for (const container of pod.spec?.containers ?? []) addInto(total, requestsOf(container));
  for (const init of pod.spec?.initContainers ?? []) {
    for (const [resource, amount] of requestsOf(init)) {
      const containers = total.get(resource);
      if (!containers || compareQuantities(amount, containers) > 0) total.set(resource, amount);
    }
  }
  return addInto(total, pod.spec?.overhead ?? {});
}

/** Succeeded and Failed pods hold nothing; everything else, terminating included, still does. */
export function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}
