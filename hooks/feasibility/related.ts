/**
 * What a placement is evaluated from, as Metacontroller related-resource rules: the Cell (its
 * status carries the capacity already committed to its VirtualClusters), the class, and the
 * VirtualClusters of the namespace (one per namespace). The plan and the VirtualCluster both ask
 * for these, and each adds its namespace (for its labels) and what only it needs.
 *
 * The VirtualClusters of the Cell are not related: the Cell sums their entitlements in
 * `status.inventory[r].committed`, so a change to one of them does not re-sync every other
 * VirtualCluster and plan of the Cell, and a request stays the same size however many there are.
 */
import { API_VERSION } from '../api/kinds.js';
import { PLACEMENT_INDEX_NAME } from '../api/placement-index.js';
import type { CellSelector } from '../generated/types/index.js';
import type { RelatedResourceRule } from '../metacontroller/protocol.js';

export interface PlacementRefs {
  /** The namespace Cells live in. */
  cellNamespace: string;
  cellName: string;
  /**
   * A `spec.cellSelector`: every Cell of `cellNamespace` it matches instead of `cellName`
   * (Metacontroller applies the selector: a v2 rule with a namespace and a label selector).
   */
  cellSelector?: CellSelector;
  className: string;
  /** The namespace of the plan or VirtualCluster. */
  namespace: string;
}

export function placementRelatedResources(refs: PlacementRefs): RelatedResourceRule[] {
  const { cellNamespace, cellName, cellSelector, className, namespace } = refs;
  const cells =
    cellSelector === undefined
      ? { names: [cellName] }
      : { labelSelector: { ...cellSelector } as RelatedResourceRule['labelSelector'] };
  return [
    { apiVersion: API_VERSION, resource: 'cells', namespace: cellNamespace, ...cells },
    { apiVersion: API_VERSION, resource: 'virtualnodeclasses', names: [className] },
    { apiVersion: API_VERSION, resource: 'virtualclusters', namespace },
  ];
}

/**
 * The placement index (hooks/api/placement-index.ts), which a plan with a selector relates
 * instead of the Cells it matches: one small object, however many Cells there are (D50).
 */
export function placementIndexRule(cellNamespace: string): RelatedResourceRule {
  return {
    apiVersion: 'v1',
    resource: 'configmaps',
    namespace: cellNamespace,
    names: [PLACEMENT_INDEX_NAME],
  };
}
