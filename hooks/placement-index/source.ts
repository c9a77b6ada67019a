/**
 * Which ConfigMap is the index's source: only `kubecell-placement` in the controller namespace.
 * The controller selects ConfigMaps by label (metacontroller/placement-index.yaml), and a label
 * copied onto another ConfigMap must not make a second owner of the one index name.
 */
import type { ConfigMapObject } from '../api/cell-liveness-record.js';
import { PLACEMENT_INDEX_SOURCE_NAME } from '../api/placement-index.js';
import type { PlacementIndexConfig } from './config.js';

export function isIndexSource(source: ConfigMapObject, config: PlacementIndexConfig): boolean {
  return (
    source.metadata.name === PLACEMENT_INDEX_SOURCE_NAME &&
    source.metadata.namespace === config.cellNamespace
  );
}
