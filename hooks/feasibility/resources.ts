/**
 * How ResourceQuota keys of an entitlement (`workloadHard`) map onto the Cell's inventory.
 *
 * - Capacity-checked: `requests.<r>` (except `requests.storage`) and the plain forms `cpu`,
 *   `memory`, `ephemeral-storage` (which a ResourceQuota treats as requests), against
 *   inventory resource `<r>`: `requests.cpu` and `cpu` → `cpu`, `requests.nvidia.com/gpu` →
 *   `nvidia.com/gpu`, `requests.hugepages-2Mi` → `hugepages-2Mi`. The mapping itself is
 *   `nodeResourceOfQuotaKey` (hooks/kube/entitlement.ts), shared with the Cell controller.
 *   When both forms of one resource are present, each is a hard limit on the same usage,
 *   so the smaller amount is what the quota allows, and that is the requirement.
 * - Storage-checked: `requests.storage` and `<storageClassName>.storageclass.storage.k8s.io/requests.storage`
 *   (the smaller of the two when both are present), against TopoLVM free capacity.
 * - Not capacity-checked: `limits.*` (limits may exceed what the machines have; the
 *   scheduler places by requests), `pods`, `services*`, `count/*`, `configmaps`, `secrets`,
 *   `persistentvolumeclaims`, bare `hugepages-<size>`, other storage-class keys. They bound
 *   the tenant, not the Cell.
 * - Extended resources (for ResourceOffered): `requests.<name>` and `limits.<name>` where
 *   `<name>` has a domain prefix (`nvidia.com/gpu`, `huawei.com/Ascend910B3`).
 *
 * The Cell controller sums entitlements into `inventory[r].committed` with the same key
 * mapping, so a plan and the Cell count a class the same way.
 */
import { compareStrings } from '../json/compare.js';
import { nodeResourceOfQuotaKey } from '../kube/entitlement.js';
import {
  minQuantity,
  parseQuantity,
  QuantityError,
  type ParsedQuantity,
} from '../quantity/quantity.js';

const STORAGE_KEY = 'requests.storage';
const STORAGE_CLASS_KEY_SUFFIX = '.storageclass.storage.k8s.io/requests.storage';
const EXTENDED_KEY = /^(?:requests|limits)\.([^/]+\/.+)$/;

export type WorkloadHard = Readonly<Record<string, string | number | undefined>>;

/** The inventory resource a quota key is compared with, or undefined if not capacity-checked. */
export function capacityResourceOf(key: string): string | undefined {
  return nodeResourceOfQuotaKey(key);
}

/** The extended resource a quota key names (`requests.nvidia.com/gpu` → `nvidia.com/gpu`). */
export function extendedResourceOf(key: string): string | undefined {
  return EXTENDED_KEY.exec(key)?.[1];
}

export interface InvalidEntry {
  key: string;
  value: unknown;
  error: string;
}

export interface CapacityRequirements {
  /** Inventory resource → the amount the quota allows, sorted by resource name. */
  required: Map<string, ParsedQuantity>;
  /** The quota keys behind each resource, for messages. */
  keys: Map<string, string[]>;
  /** Capacity-checked entries whose value does not parse, by inventory resource. */
  invalid: Map<string, InvalidEntry>;
}

/** The capacity-checked requirements of an entitlement. */
export function capacityRequirements(workloadHard: WorkloadHard | undefined): CapacityRequirements {
  const required = new Map<string, ParsedQuantity>();
  const keys = new Map<string, string[]>();
  const invalid = new Map<string, InvalidEntry>();
  for (const key of sortedKeys(workloadHard)) {
    const resource = capacityResourceOf(key);
    if (resource === undefined) continue;
    keys.set(resource, [...(keys.get(resource) ?? []), key]);
    const value = workloadHard?.[key];
    const parsed = tryParse(value);
    if (parsed instanceof QuantityError) {
      if (!invalid.has(resource)) invalid.set(resource, { key, value, error: parsed.message });
      continue;
    }
    const prior = required.get(resource);
    required.set(resource, prior === undefined ? parsed : minQuantity(prior, parsed));
  }
  return { required: sortMap(required), keys, invalid };
}

export type StorageRequirement =
  | { kind: 'none' }
  | { kind: 'required'; key: string; required: ParsedQuantity }
  | { kind: 'invalid'; entry: InvalidEntry };

/** The storage the entitlement allows on the class's storage class, if it limits it. */
export function storageRequirement(
  workloadHard: WorkloadHard | undefined,
  storageClassName: string | undefined,
): StorageRequirement {
  const candidates = [STORAGE_KEY];
  if (storageClassName) candidates.push(`${storageClassName}${STORAGE_CLASS_KEY_SUFFIX}`);
  let best: { key: string; required: ParsedQuantity } | undefined;
  for (const key of candidates) {
    const value = workloadHard?.[key];
    if (value === undefined) continue;
    const parsed = tryParse(value);
    if (parsed instanceof QuantityError) {
      return { kind: 'invalid', entry: { key, value, error: parsed.message } };
    }
    if (best === undefined || parsed.nanos < best.required.nanos) best = { key, required: parsed };
  }
  return best === undefined ? { kind: 'none' } : { kind: 'required', ...best };
}

/** The distinct extended resources an entitlement names, sorted. */
export function extendedResources(workloadHard: WorkloadHard | undefined): string[] {
  const names = new Set<string>();
  for (const key of sortedKeys(workloadHard)) {
    const name = extendedResourceOf(key);
    if (name !== undefined) names.add(name);
  }
  return [...names].sort(compareStrings);
}

export function tryParse(value: unknown): ParsedQuantity | QuantityError {
  try {
    return parseQuantity(value as string);
  } catch (err) {
    if (err instanceof QuantityError) return err;
    throw err;
  }
}

function sortedKeys(record: WorkloadHard | undefined): string[] {
  return Object.keys(record ?? {})
    .filter((key) => record?.[key] !== undefined)
    .sort(compareStrings);
}

function sortMap<V>(map: Map<string, V>): Map<string, V> {
  return new Map([...map].sort(([a], [b]) => compareStrings(a, b)));
}
