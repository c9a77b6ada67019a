/**
 * The kubecell-class-usage DecoratorController: `status.usedBy` of every VirtualNodeClass, the
 * VirtualClusters resolved to it. Status only: no attachments, no labels, no annotations.
 *
 * A VirtualCluster is resolved to a class when its `status.resolved.class` names the class and
 * carries the class's UID (a VirtualCluster that resolved an earlier class of the same name
 * does not count). Pending VirtualClusters that name the class in `spec.classRef` but were not
 * accepted yet do not count either: usedBy says which running clusters took their quota from the
 * class.
 *
 * The VirtualClusters are related objects selected by the label `kubecell.io/class=<class>`,
 * which the mutating admission webhook copies from `spec.classRef.name`; with v2 hooks a
 * label-selector rule spans every namespace. The status is a pure function of the class's name
 * and UID and of those VirtualClusters, sorted, so the same input gives byte-identical output
 * and Metacontroller writes only when something changed.
 *
 * Metacontroller posts `{controller, object, attachments, related, finalizing}` to sync (the
 * request check hands the class over as `parent`), and `{controller, parent}` to customize. It
 * sends the VirtualCluster group whenever the customize answer has the rule, empty when no
 * VirtualCluster matches (`GetRelatedObjects`, pkg/controller/common/customize/manager.go). A
 * request without the group did not observe the VirtualClusters: the answer then has no status,
 * which Metacontroller reads as "leave .status as it is" (`syncParentObject`,
 * pkg/controller/decorator/controller.go), instead of a made-up zero.
 */
import { isLabelValue } from '../kube/labels.js';
import type {
  VirtualCluster,
  VirtualClusterName,
  VirtualNodeClass,
  VirtualNodeClassStatus,
} from '../generated/types/index.js';
import { LABELS } from '../kube/labels.js';
import { TYPE_KEYS } from '../kube/objects.js';
import { InvalidHookInputError } from '../metacontroller/invalid-input.js';
import {
  listObjects,
  type CustomizeHookRequest,
  type CustomizeHookResponse,
  type DecoratorSyncRequest,
  type DecoratorSyncResponse,
  type ObjectMap,
  type RelatedResourceRule,
} from '../metacontroller/protocol.js';
import type { DecoratorHooks } from '../metacontroller/controller-hooks.js';

/** The schema lists at most this many VirtualClusters; `count` is always the full number. */
export const MAX_LISTED_VIRTUALCLUSTERS = 1000;

function requireClass(parent: VirtualNodeClass): void {
  if (parent.apiVersion !== 'kubecell.io/v1alpha1' || parent.kind !== 'VirtualNodeClass') {
    throw new InvalidHookInputError(
      `parent is ${parent.apiVersion} ${parent.kind} ${parent.metadata.name}, expected a ` +
        'kubecell.io/v1alpha1 VirtualNodeClass: the kubecell-class-usage DecoratorController ' +
        'must select virtualnodeclasses only',
    );
  }
}

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
      apiVersion: 'kubecell.io/v1alpha1',
      resource: 'virtualclusters',
      labelSelector: { matchLabels: { [LABELS.class]: name } },
    },
  ];
}

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

export function customizeClassUsage(
  request: CustomizeHookRequest<VirtualNodeClass>,
): CustomizeHookResponse {
  requireClass(request.parent);
  return { relatedResources: classUsageRelatedResources(request.parent) };
}

export function syncClassUsage(
  request: DecoratorSyncRequest<VirtualNodeClass>,
): DecoratorSyncResponse {
  requireClass(request.parent);
  const observed = request.related[TYPE_KEYS.virtualCluster] !== undefined;
  // A class that relates nothing (its name is no label value) is used by no VirtualCluster.
  if (!observed && classUsageRelatedResources(request.parent).length > 0) {
    return { attachments: [] };
  }
  return { status: computeClassUsage(request.parent, request.related), attachments: [] };
}

export function classUsageHooks(): DecoratorHooks<VirtualNodeClass> {
  return { customize: customizeClassUsage, sync: syncClassUsage };
}
