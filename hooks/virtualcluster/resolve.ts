/**
 * Resolution: the feasibility evaluation of a VirtualCluster that has no `status.resolved`
 * yet, the choice of its endpoint address, and the immutable snapshot written once accepted.
 */
import { createHash } from 'node:crypto';
import type {
  Cell,
  ResolvedPlacement,
  VirtualCluster,
  VirtualNodeClass,
} from '../generated/types/index.js';
import { evaluateFeasibility, type FeasibilityInput } from '../feasibility/evaluate.js';
import { compareStrings } from '../feasibility/resources.js';
import { LABELS } from '../kube/labels.js';
import { conditionIsTrue, type Node } from '../kube/objects.js';
import { formatTime } from '../status/conditions.js';
import type { VirtualClusterConfig } from './config.js';
import type { VirtualClusterObservation } from './observe.js';

/**
 * Whether `a` was created before `b`: the older VirtualCluster of a namespace keeps it.
 * creationTimestamp first, then name (code-unit order). A VirtualCluster without a readable
 * creationTimestamp (never the case from the apiserver) counts as the newest.
 */
export function isOlder(a: VirtualCluster, b: VirtualCluster): boolean {
  const ta = createdAt(a);
  const tb = createdAt(b);
  if (ta !== tb) return ta < tb;
  return compareStrings(a.metadata?.name ?? '', b.metadata?.name ?? '') < 0;
}

function createdAt(vc: VirtualCluster): number {
  const stamp = vc.metadata?.creationTimestamp;
  const time = stamp === undefined ? NaN : Date.parse(stamp);
  return Number.isNaN(time) ? Number.POSITIVE_INFINITY : time;
}

/**
 * The older VirtualClusters of the same namespace that keep it, oldest first (empty when this
 * one is the oldest). One being deleted is left out: it still occupies the namespace (the
 * feasibility evaluation's NamespaceAvailable check says so, and this one waits Pending), but
 * it is going away, so it does not make this one Failed.
 */
export function olderNeighbours(
  vc: VirtualCluster,
  observation: VirtualClusterObservation,
): VirtualCluster[] {
  return (observation.virtualClusters ?? [])
    .filter((other) => other.metadata?.namespace === vc.metadata.namespace)
    .filter((other) => other.metadata?.deletionTimestamp === undefined)
    .filter((other) => isOlder(other, vc))
    .sort((a, b) => (isOlder(a, b) ? -1 : isOlder(b, a) ? 1 : 0));
}

/**
 * The feasibility input for this VirtualCluster. Newer VirtualClusters of the same namespace
 * that have not resolved are left out: the oldest keeps the namespace, so they must not block
 * it (they go Failed themselves). A resolved one is kept: its children occupy the namespace.
 */
export function feasibilityInput(
  vc: VirtualCluster,
  observation: VirtualClusterObservation,
  config: VirtualClusterConfig,
  now: Date,
): FeasibilityInput {
  const others = (observation.virtualClusters ?? []).filter(
    (other) =>
      other.metadata?.namespace !== vc.metadata.namespace ||
      isOlder(other, vc) ||
      other.status?.resolved !== undefined,
  );
  return {
    cellName: observation.cellName,
    cell: observation.cell,
    className: observation.className,
    virtualNodeClass: observation.virtualNodeClass,
    namespace: observation.namespace,
    ...(observation.hostNamespace === undefined
      ? {}
      : { namespaceLabels: observation.hostNamespace.metadata.labels ?? {} }),
    virtualClusters: others,
    nodePortRange: config.nodePortRange,
    inventoryMaxAgeSeconds: config.inventoryMaxAgeSeconds,
    now,
  };
}

export { evaluateFeasibility };

export interface EndpointChoice {
  address: string;
  node: string;
}

/** The first InternalIP a Node lists, if any. */
export function internalIP(node: Node): string | undefined {
  return node.status?.addresses?.find(
    (address) => address.type === 'InternalIP' && typeof address.address === 'string',
  )?.address;
}

/**
 * The endpoint address rule, applied once, at resolution:
 *
 * 1. candidates: the Nodes labelled `kubecell.io/machine-profile=<the Cell's profile>` whose
 *    Ready condition is True, that are not cordoned (`spec.unschedulable`), and that list an
 *    InternalIP;
 * 2. sorted by Node name (code-unit order);
 * 3. the one at index `sha256(<VirtualCluster UID>) mod <number of candidates>` (the first
 *    8 bytes of the digest as an unsigned integer); its first InternalIP.
 *
 * The same inputs always give the same address, and VirtualClusters spread over the profile's
 * Nodes instead of all pointing at one. kube-proxy opens a NodePort on every Node, so any of
 * them serves; the address is then fixed in `status.resolved.endpointAddress`.
 */
export function chooseEndpoint(
  nodes: readonly Node[] | undefined,
  profile: string,
  uid: string,
): EndpointChoice | undefined {
  const candidates = (nodes ?? [])
    .filter((node) => node.metadata?.labels?.[LABELS.machineProfile] === profile)
    .filter((node) => conditionIsTrue(node.status?.conditions, 'Ready'))
    .filter((node) => node.spec?.unschedulable !== true)
    .flatMap((node) => {
      const address = internalIP(node);
      return address === undefined || address === '' ? [] : [{ node: node.metadata.name, address }];
    })
    .sort((a, b) => compareStrings(a.node, b.node));
  if (candidates.length === 0) return undefined;
  const digest = createHash('sha256').update(uid).digest();
  const index = Number(digest.readBigUInt64BE(0) % BigInt(candidates.length));
  return candidates[index];
}

/**
 * Whether the Cell and class carry every field the snapshot copies. Their CRD schemas require
 * them; this keeps a hand-written object from turning into a failed hook call.
 */
export function snapshotSourcesUsable(cell: Cell, cls: VirtualNodeClass): boolean {
  const text = (value: unknown) => typeof value === 'string' && value !== '';
  const workloadHard: unknown = cls.spec?.entitlement?.workloadHard;
  return (
    text(cell.spec?.machineProfile?.name) &&
    text(cell.spec?.managedClusterRef?.name) &&
    text(cls.spec?.storageClassName) &&
    typeof workloadHard === 'object' &&
    workloadHard !== null &&
    !Array.isArray(workloadHard)
  );
}

/** The snapshot written when the placement is accepted (field names are API, see DESIGN). */
export function snapshot(
  vc: VirtualCluster,
  cell: Cell,
  cls: VirtualNodeClass,
  endpointAddress: string,
  now: Date,
): ResolvedPlacement {
  const profile = cell.spec.machineProfile;
  return {
    cell: {
      name: cell.metadata.name,
      uid: cell.metadata.uid ?? '',
      managedClusterName: cell.spec.managedClusterRef.name,
      machineProfile: {
        name: profile.name,
        ...(profile.devices === undefined
          ? {}
          : {
              devices: profile.devices.map((device) => ({
                name: device.name,
                resourceName: device.resourceName,
              })),
            }),
      },
    },
    class: {
      name: cls.metadata.name,
      uid: cls.metadata.uid ?? '',
      storageClassName: cls.spec.storageClassName,
      entitlement: { workloadHard: sortedRecord(cls.spec.entitlement.workloadHard) },
    },
    hostNamespace: vc.metadata.namespace ?? '',
    endpointAddress,
    resolvedAt: formatTime(now),
  };
}

function sortedRecord<V>(record: Record<string, V | undefined>): Record<string, V> {
  const sorted: Record<string, V> = {};
  for (const key of Object.keys(record).sort(compareStrings)) {
    const value = record[key];
    if (value !== undefined) sorted[key] = value;
  }
  return sorted;
}

/**
 * Whether a stored snapshot has everything rendering needs. The CRD schema requires these
 * fields, so this fails only for a status written around the schema (or a future version).
 */
export function resolvedIsUsable(resolved: unknown): resolved is ResolvedPlacement {
  if (typeof resolved !== 'object' || resolved === null) return false;
  const r = resolved as Partial<ResolvedPlacement>;
  const nonEmpty = (value: unknown) => typeof value === 'string' && value !== '';
  const workloadHard = r.class?.entitlement?.workloadHard;
  return (
    nonEmpty(r.cell?.name) &&
    nonEmpty(r.cell?.uid) &&
    nonEmpty(r.cell?.machineProfile?.name) &&
    nonEmpty(r.class?.name) &&
    nonEmpty(r.class?.storageClassName) &&
    typeof workloadHard === 'object' &&
    workloadHard !== null &&
    !Array.isArray(workloadHard) &&
    nonEmpty(r.hostNamespace) &&
    nonEmpty(r.endpointAddress) &&
    nonEmpty(r.resolvedAt)
  );
}
