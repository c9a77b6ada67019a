/**
 * What Metacontroller delivered for one ManagedCluster, sorted into the inputs of a sync: the
 * Cells that bind it with `delivery: ManifestWork`, the VirtualClusters, and the observed works.
 *
 * A list is `undefined` when its group is missing from `related` altogether: the source was not
 * observed, which is not the same as observed and empty (hooks/virtualcluster/observe.ts does
 * the same). Then the works that depend on it are kept as observed, never dropped.
 */
import type { Cell, VirtualCluster } from '../generated/types/index.js';
import { TYPE_KEYS } from '../kube/objects.js';
import {
  observedGroup,
  type KubernetesObject,
  type ObjectMap,
} from '../metacontroller/protocol.js';
import type { DeliveryConfig } from './config.js';

export interface DeliveryObservation {
  /** The ManagedCluster's name: the hub namespace of its works. */
  clusterName: string;
  /** The Cells of the controller namespace bound to it with delivery ManifestWork. */
  cells?: Cell[];
  /** Every VirtualCluster, in every namespace. */
  virtualClusters?: VirtualCluster[];
  /** The observed works, by `namespace/name`. */
  works: Map<string, KubernetesObject>;
}

/** Whether `cell` delivers to the ManagedCluster `clusterName` through ManifestWorks. */
export function deliversTo(cell: Cell, clusterName: string, namespace: string): boolean {
  return (
    cell.metadata.namespace === namespace &&
    cell.spec?.managedClusterRef?.name === clusterName &&
    cell.spec.delivery === 'ManifestWork'
  );
}

export function observeDelivery(
  parent: KubernetesObject,
  related: ObjectMap,
  attachments: ObjectMap,
  config: Pick<DeliveryConfig, 'controllerNamespace'>,
): DeliveryObservation {
  const clusterName = parent.metadata.name;
  const cells = observedGroup<Cell>(related, TYPE_KEYS.cell)?.filter((cell) =>
    deliversTo(cell, clusterName, config.controllerNamespace),
  );
  const virtualClusters = observedGroup<VirtualCluster>(related, TYPE_KEYS.virtualCluster);
  const works = new Map<string, KubernetesObject>();
  for (const type of Object.keys(attachments).sort()) {
    for (const work of observedGroup(attachments, type) ?? []) {
      works.set(`${work.metadata.namespace ?? ''}/${work.metadata.name}`, work);
    }
  }
  return {
    clusterName,
    ...(cells ? { cells } : {}),
    ...(virtualClusters ? { virtualClusters } : {}),
    works,
  };
}
