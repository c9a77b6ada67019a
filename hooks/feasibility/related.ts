/**
 * What a placement is evaluated from, as Metacontroller related-resource rules: the Cell, the
 * class, the VirtualClusters already on the Cell (their committed capacity) and those of the
 * namespace (one per namespace). The plan and the VirtualCluster both ask for these, and each
 * adds its namespace (for its labels) and what only it needs.
 */
import { API_VERSION } from '../api/kinds.js';
import { LABELS } from '../kube/labels.js';
import type { RelatedResourceRule } from '../metacontroller/protocol.js';

export interface PlacementRefs {
  /** The namespace Cells live in. */
  cellNamespace: string;
  cellName: string;
  className: string;
  /** The namespace of the plan or VirtualCluster. */
  namespace: string;
}

export function placementRelatedResources(refs: PlacementRefs): RelatedResourceRule[] {
  const { cellNamespace, cellName, className, namespace } = refs;
  return [
    { apiVersion: API_VERSION, resource: 'cells', namespace: cellNamespace, names: [cellName] },
    { apiVersion: API_VERSION, resource: 'virtualnodeclasses', names: [className] },
    {
      apiVersion: API_VERSION,
      resource: 'virtualclusters',
      labelSelector: { matchLabels: { [LABELS.cell]: cellName } },
    },
    { apiVersion: API_VERSION, resource: 'virtualclusters', namespace },
  ];
}
