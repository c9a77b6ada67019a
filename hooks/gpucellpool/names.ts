/**
 * Names of a pool's cells and of the objects rendered for them.
 *
 * - A cell is `<pool>-<ordinal>`; a new cell takes the lowest ordinal no listed cell uses.
 * - An incarnation of a cell (its machine, the Node its kubelet registers, the user-data
 *   Secret) is `<cell>-<incarnation>`: a new incarnation is a new VM or Machine with a new
 *   firmware UUID and a new Node name, so it never collides with what its predecessor left.
 * - A Cluster API template `<Kind>Template` is cloned into a `<Kind>` named like the Machine.
 */
import type { TypedObjectReference } from '../generated/types/index.js';
import { USER_DATA_SECRET_SUFFIX } from './constants.js';

export function cellName(pool: string, ordinal: number): string {
  return `${pool}-${ordinal}`;
}

/** The ordinal of a cell of this pool, or undefined for a name the pool did not give. */
export function cellOrdinal(pool: string, name: string): number | undefined {
  if (!name.startsWith(`${pool}-`)) return undefined;
  const rest = name.slice(pool.length + 1);
  return /^(0|[1-9]\d{0,5})$/.test(rest) ? Number(rest) : undefined;
}

export function machineName(cell: string, incarnation: number): string {
  return `${cell}-${incarnation}`;
}

/** The incarnation recorded in a machine name `<cell>-<n>`, or undefined. */
export function incarnationOf(cell: string, machine: string | undefined): number | undefined {
  if (machine === undefined || !machine.startsWith(`${cell}-`)) return undefined;
  const rest = machine.slice(cell.length + 1);
  return /^(0|[1-9]\d{0,8})$/.test(rest) ? Number(rest) : undefined;
}

export function userDataSecretName(machine: string): string {
  return `${machine}${USER_DATA_SECRET_SUFFIX}`;
}

/** The API group of an apiVersion (`''` for the core group). */
export function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? (apiVersion.split('/')[0] ?? '') : '';
}

/**
 * The resource (plural) of a kind, the way Cluster API providers name theirs: the lowercase
 * kind plus `s` (KubeadmConfigTemplate → kubeadmconfigtemplates, KubevirtMachine →
 * kubevirtmachines). A customize rule needs it, and customize cannot look it up.
 */
export function pluralOf(kind: string): string {
  return `${kind.toLowerCase()}s`;
}

/** The kind a template is cloned into: `KubeadmConfigTemplate` → `KubeadmConfig` (Cluster API's rule). */
export function clonedKind(templateKind: string): string {
  return templateKind.endsWith('Template')
    ? templateKind.slice(0, -'Template'.length)
    : templateKind;
}

/** The clone of a template ref: same apiVersion, kind without `Template`. */
export function cloneRef(
  template: TypedObjectReference,
  name: string,
): { apiVersion: string; kind: string; name: string } {
  return { apiVersion: template.apiVersion, kind: clonedKind(template.kind), name };
}
