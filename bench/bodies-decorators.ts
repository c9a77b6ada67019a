/**
 * Steady-state requests of KubeCell's three DecoratorControllers, as Metacontroller v4.17.2
 * posts them (`{controller, object, attachments, related, finalizing}`,
 * pkg/controller/decorator/api/v2/hooks.go), each built by running the hook until its answer
 * changes nothing and observing what it answered the way Metacontroller leaves attachments
 * (owner reference, decorator annotation, last-applied configuration, managedFields):
 *
 * - host-namespace: a host namespace on the current baseline with its four NetworkPolicies
 *   (from hooks/metacontroller/__fixtures__/decorator-sync-v2.json, moved to the baseline);
 * - class-usage: the class with the 20 VirtualClusters of the benchmark's Cell related to it,
 *   each as stored in steady state (bodies-virtualcluster.ts);
 * - delivery: a remote ManagedCluster with its Cells and the hub's 20 VirtualClusters related
 *   (its customize relates every VirtualCluster) and its 21 ManifestWorks observed with OCM's
 *   status feedback.
 */
import { TYPE_KEYS, type Namespace } from '../hooks/kube/objects.js';
import { toObjectMap, type KubernetesObject } from '../hooks/metacontroller/protocol.js';
import {
  decoratorHookBody,
  loadFixture,
  type DecoratorHookBody,
} from '../hooks/metacontroller/testing.js';
import { DEFAULT_HOST_NAMESPACE_CONFIG } from '../hooks/host-namespace/config.js';
import { NETWORK_POLICY_KEY, syncHostNamespace } from '../hooks/host-namespace/sync.js';
import { applyResponse } from '../hooks/host-namespace/testing.js';
import { DEFAULT_DELIVERY_CONFIG } from '../hooks/delivery/config.js';
import { syncDelivery } from '../hooks/delivery/sync.js';
import {
  managedCluster,
  observedWorks,
  placedVirtualCluster,
  relatedOf as deliveryRelatedOf,
  remoteCell,
  WORK_KEY,
} from '../hooks/delivery/testing.js';
import { reportedCell } from './bodies.js';
import { steadyVirtualCluster, storedClass, virtualClusterName } from './bodies-virtualcluster.js';
import { applied, asStored, controllerOf, pick, type Json } from './stored.js';

/** Host namespaces and VirtualClusters of the benchmark's hub, as in cellSyncBody. */
export const BENCH_VIRTUALCLUSTERS = 20;

const APPLIED = '2026-11-29T12:01:00Z';

/** A desired attachment as Metacontroller creates it for `parent` (manage_children.go). */
function storedAttachment(
  desired: KubernetesObject,
  parent: KubernetesObject,
  controller: string,
): KubernetesObject {
  const observed = structuredClone(desired) as KubernetesObject & Json;
  const metadata = observed.metadata as unknown as Json;
  metadata.annotations = {
    ...(desired.metadata.annotations ?? {}),
    'metacontroller.k8s.io/decorator-controller': controller,
    'metacontroller.k8s.io/last-applied-configuration': JSON.stringify(desired),
  };
  metadata.ownerReferences = [
    {
      apiVersion: parent.apiVersion,
      kind: parent.kind,
      name: parent.metadata.name,
      uid: parent.metadata.uid,
      controller: true,
      blockOwnerDeletion: true,
    },
  ];
  metadata.generation = 1;
  return asStored(observed, [
    {
      manager: 'metacontroller',
      operation: 'Update',
      fields: {
        metadata: pick(metadata, ['annotations', 'labels', 'ownerReferences']),
        ...pick(desired as KubernetesObject & Json, ['spec', 'data']),
      },
      time: APPLIED,
    },
  ]);
}

const wire = (body: unknown): Json => JSON.parse(JSON.stringify(body)) as Json;

/** kubecell-host-namespace: a host namespace on the current baseline, policies in place. */
export function hostNamespaceSyncBody(): Json {
  const fixture = loadFixture<DecoratorHookBody<Namespace>>('decorator-sync-v2');
  const request = {
    parent: fixture.object,
    children: fixture.attachments,
    related: {},
    finalizing: false,
  };
  const answer = syncHostNamespace(request, DEFAULT_HOST_NAMESPACE_CONFIG);
  const namespace = applyResponse(fixture.object, answer);
  const policies = answer.attachments.map((policy) =>
    storedAttachment(policy, namespace, 'kubecell-host-namespace'),
  );
  return wire(
    decoratorHookBody(controllerOf('host-namespace.yaml'), namespace, {
      attachments: { [NETWORK_POLICY_KEY]: {}, ...toObjectMap(policies) },
    }),
  );
}

/** The hub's VirtualClusters in steady state, all of class small on the benchmark's Cell. */
function hubVirtualClusters(now: Date, count: number): KubernetesObject[] {
  const cell = reportedCell(now, 10);
  return Array.from(
    { length: count },
    (_, n) => steadyVirtualCluster(now, virtualClusterName(n), cell).vc as KubernetesObject,
  );
}

/** kubecell-class-usage: the class and every VirtualCluster labelled with it. */
export function classUsageSyncBody(now: Date, count = BENCH_VIRTUALCLUSTERS): Json {
  return wire(
    decoratorHookBody(controllerOf('class-usage.yaml'), storedClass(count), {
      related: { [TYPE_KEYS.virtualCluster]: {}, ...toObjectMap(hubVirtualClusters(now, count)) },
    }),
  );
}

/** A VirtualCluster placed on the remote Cell, as stored. */
function remoteVirtualCluster(n: number): KubernetesObject {
  const { vc } = placedVirtualCluster(virtualClusterName(n));
  return applied(vc as KubernetesObject);
}

/**
 * kubecell-delivery: the remote ManagedCluster, the Cells of the controller namespace (the
 * local one with its reported status, the remote one) and `count` VirtualClusters placed on
 * the remote Cell, with the works the hook answered as OCM reports on them.
 */
export function deliverySyncBody(now: Date, count = BENCH_VIRTUALCLUSTERS): Json {
  const cluster = managedCluster();
  const cells = [reportedCell(now, 10), remoteCell()].map((cell) =>
    applied(cell as KubernetesObject),
  );
  const vcs = Array.from({ length: count }, (_, n) => remoteVirtualCluster(n));
  const related = deliveryRelatedOf([...cells, ...vcs]);
  const first = syncDelivery(
    { parent: cluster, related, children: { [WORK_KEY]: {} }, finalizing: false },
    DEFAULT_DELIVERY_CONFIG,
  );
  const works = observedWorks(first.attachments).map((work) =>
    asStored(work, [
      {
        manager: 'metacontroller',
        operation: 'Update',
        fields: pick(work as KubernetesObject & Json, ['spec']),
        time: APPLIED,
      },
      {
        manager: 'work-agent',
        operation: 'Update',
        subresource: 'status',
        fields: pick(work as KubernetesObject & Json, ['status']),
        time: APPLIED,
      },
    ]),
  );
  return wire(
    decoratorHookBody(controllerOf('delivery.yaml'), cluster, {
      attachments: { [WORK_KEY]: {}, ...toObjectMap(works) },
      related,
    }),
  );
}
