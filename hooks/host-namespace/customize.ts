/** The kubecell-host-namespace customize hook. */
import type { CustomizeHookResponse } from '../metacontroller/protocol.js';

/** No related objects: the baseline depends on the namespace and the settings only. */
export function customizeHostNamespace(): CustomizeHookResponse {
  return { relatedResources: [] };
}
