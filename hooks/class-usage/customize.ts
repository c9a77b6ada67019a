/**
 * The kubecell-class-usage customize hook: the VirtualClusters labelled `kubecell.io/class=<class>`,
 * which the mutating admission webhook copies from `spec.classRef.name`; with v2 hooks a
 * label-selector rule spans every namespace.
 */
import { API_VERSION } from '../api/kinds.js';
import type { VirtualNodeClass } from '../generated/types/index.js';
import { isLabelValue, LABELS } from '../kube/labels.js';
import type {
  CustomizeHookRequest,
  CustomizeHookResponse,
  RelatedResourceRule,
} from '../metacontroller/protocol.js';

/**
 * The VirtualClusters labelled with the class, in every namespace. A class whose name is no
 * valid label value (longer than 63 characters) cannot be referenced by any VirtualCluster
 * (`spec.classRef.name` is at most 63 characters), so it relates to nothing.
 */
export function classUsageRelatedResources(klass: VirtualNodeClass): RelatedResourceRule[] {
  const name = klass.metadata.name;
  if (!isLabelValue(name)) return [];
  return [
    {
      apiVersion: API_VERSION,
      resource: 'virtualclusters',
      labelSelector: { matchLabels: { [LABELS.class]: name } },
    },
  ];
}

export function customizeClassUsage(
  request: CustomizeHookRequest<VirtualNodeClass>,
): CustomizeHookResponse {
  return { relatedResources: classUsageRelatedResources(request.parent) };
}
