/**
 * Which VirtualClusters use a VirtualNodeClass: its `status.usedBy`.
 *
 * A VirtualCluster is resolved to a class when its `status.resolved.class` names the class and
 * carries the class's UID (a VirtualCluster that resolved an earlier class of the same name
 * does not count). Pending VirtualClusters that name the class in `spec.classRef` but were not
 * accepted yet do not count either: usedBy says which running clusters took their quota from the
 * class. The status is a pure function of the class's name and UID and of those VirtualClusters,
 * sorted, so the same input gives byte-identical output and Metacontroller writes only when
 * something changed.
 */
import type {
  VirtualCluster,
  VirtualClusterName,
  VirtualNodeClass,
  VirtualNodeClassStatus,
} from '../generated/types/index.js';
import { LABELS } from '../kube/labels.js';
import { TYPE_KEYS } from '../kube/objects.js';
import { listObjects, type ObjectMap } from '../metacontroller/protocol.js';

/**
 * The schema lists at most this many VirtualClusters; `count` is always the full number. Every
 * VirtualCluster relates to its class, so the class must not grow with them (issue 14).
 */
export const MAX_LISTED_VIRTUALCLUSTERS = 10;

/** Whether a VirtualCluster is resolved to this very class. */
export function isResolvedTo(vc: VirtualCluster, klass: VirtualNodeClass): boolean {
  const name = klass.metadata.name;
  const resolved = vc.status?.resolved?.class;
  if (vc.metadata.labels?.[LABELS.class] !== name) return false;
  if (resolved === undefined || resolved.name !== name) return false;
  const uid = klass.metadata.uid;
  return uid === undefined || uid === '' || resolved.uid === uid;
}

function compareNames(a: VirtualClusterName, b: VirtualClusterName): number {
  const byNamespace = a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0;
  if (byNamespace !== 0) return byNamespace;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** The class's status from the related VirtualClusters. */
export function computeClassUsage(
  klass: VirtualNodeClass,
  related: ObjectMap,
): VirtualNodeClassStatus {
  const names = listObjects<VirtualCluster>(related, TYPE_KEYS.virtualCluster)
    .filter((vc) => isResolvedTo(vc, klass))
    .map((vc) => ({ namespace: vc.metadata.namespace ?? '', name: vc.metadata.name }))
    .sort(compareNames);
  return {
    usedBy: {
      count: names.length,
      virtualClusters: names.slice(0, MAX_LISTED_VIRTUALCLUSTERS),
    },
  };
}
