/** The kubecell-placement-index customize hook: every Cell of the controller namespace. */
import type { ConfigMapObject } from '../api/cell-liveness-record.js';
import { API_VERSION } from '../api/kinds.js';
import type { CustomizeHookRequest, CustomizeHookResponse } from '../metacontroller/protocol.js';
import type { PlacementIndexConfig } from './config.js';
import { isIndexSource } from './source.js';

export function customizePlacementIndex(
  request: CustomizeHookRequest<ConfigMapObject>,
  config: PlacementIndexConfig,
): CustomizeHookResponse {
  if (!isIndexSource(request.parent, config)) return { relatedResources: [] };
  // A namespace without names or a selector relates every Cell of it (v4.17.2
  // pkg/controller/common/customize/manager.go `determineSelectionType`: NamespacesAndNames,
  // where an empty name list matches every name).
  return {
    relatedResources: [
      { apiVersion: API_VERSION, resource: 'cells', namespace: config.cellNamespace },
    ],
  };
}
