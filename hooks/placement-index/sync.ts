/**
 * The kubecell-placement-index sync hook: the index (hooks/api/placement-index.ts) as the one
 * attachment of its source ConfigMap, rebuilt from every Cell of the controller namespace each
 * time one changes. Pure: the same Cells give the same bytes, so Metacontroller writes the index
 * only when what a placement reads of a Cell changed.
 *
 * When the Cells were not observed (the related informer not synced, a customize answer from
 * before), the index already there is kept as it is: a plan reading an old index is judged
 * against old figures, re-evaluated on the next write, while a missing index would leave every
 * selector plan undecided. Labels, annotations and status of the source are left alone.
 */
import type { ConfigMapObject } from '../api/cell-liveness-record.js';
import { API_VERSION } from '../api/kinds.js';
import { PLACEMENT_INDEX_NAME, placementIndexBinaryData } from '../api/placement-index.js';
import type { Cell } from '../generated/types/index.js';
import { TYPE_KEYS } from '../kube/objects.js';
import {
  childKey,
  observedGroup,
  type DecoratorSyncRequest,
  type DecoratorSyncResponse,
} from '../metacontroller/protocol.js';
import type { PlacementIndexConfig } from './config.js';
import { isIndexSource } from './source.js';

const CELL = childKey(API_VERSION, 'Cell');

export function syncPlacementIndex(
  request: DecoratorSyncRequest<ConfigMapObject>,
  config: PlacementIndexConfig,
): DecoratorSyncResponse {
  if (!isIndexSource(request.parent, config)) return { attachments: [] };
  const cells = observedGroup<Cell>(request.related, CELL);
  if (cells === undefined) return { attachments: observedIndex(request) };
  return {
    attachments: [
      placementIndex(
        config,
        cells.filter((cell) => cell.metadata.namespace === config.cellNamespace),
      ),
    ],
  };
}

function placementIndex(config: PlacementIndexConfig, cells: readonly Cell[]): ConfigMapObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: PLACEMENT_INDEX_NAME,
      namespace: config.cellNamespace,
      labels: { 'app.kubernetes.io/part-of': 'kubecell' },
    },
    binaryData: placementIndexBinaryData(cells),
  };
}

function observedIndex(request: DecoratorSyncRequest<ConfigMapObject>): ConfigMapObject[] {
  return (observedGroup<ConfigMapObject>(request.children, TYPE_KEYS.configMap) ?? []).filter(
    (configMap) => configMap.metadata.name === PLACEMENT_INDEX_NAME,
  );
}
