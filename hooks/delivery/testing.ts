/** Fixtures of the delivery tests: the JSON Metacontroller would send (not loaded in production). */
import { snapshotsBeside } from '../../test/support/snapshots.js';
import { API_VERSION } from '../api/kinds.js';
import type { Cell, VirtualCluster } from '../generated/types/index.js';
import { TYPE_KEYS } from '../kube/objects.js';
import {
  MANIFEST_WORK_API_VERSION,
  MANIFEST_WORK_RESOURCE,
  MANIFEST_WORK_TYPE_KEY,
} from '../remote/manifest-work.js';
import {
  toObjectMap,
  type DecoratorSyncRequest,
  type KubernetesObject,
  type ObjectMap,
} from '../metacontroller/protocol.js';
import { decoratorHookBody, type DecoratorHookBody } from '../metacontroller/testing.js';
import { runSync, virtualCluster } from '../virtualcluster/testing.js';
import { DEFAULT_DELIVERY_CONFIG, type DeliveryConfig } from './config.js';

export const NOW = new Date('2026-11-30T00:00:00Z');
/** The managed cluster of the two-cluster tests. */
export const CLUSTER = 'cell-remote';
export const CLUSTER_UID = '0b7d3f4e-2a61-4c1e-9d55-6f1e2a3b4c5d';
export const WORK_KEY = MANIFEST_WORK_TYPE_KEY;
/** A public key as the config carries it (any PEM text; the render does not parse it). */
export const PUBLIC_KEY_PEM =
  '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAfake\n-----END PUBLIC KEY-----\n';

export const CONFIG: DeliveryConfig = {
  ...structuredClone(DEFAULT_DELIVERY_CONFIG),
  publicKeyPem: PUBLIC_KEY_PEM,
};

/** A ManagedCluster as OCM v1.3.1's registration controller and agent leave it: joined, Available. */
export function managedCluster(name = CLUSTER): KubernetesObject {
  const condition = (type: string, reason: string, message: string) => ({
    type,
    status: 'True',
    lastTransitionTime: '2026-11-29T20:00:00Z',
    reason,
    message,
  });
  return {
    apiVersion: 'cluster.open-cluster-management.io/v1',
    kind: 'ManagedCluster',
    metadata: {
      name,
      uid: CLUSTER_UID,
      resourceVersion: '4711',
      generation: 1,
      creationTimestamp: '2026-11-29T19:59:00Z',
      finalizers: ['cluster.open-cluster-management.io/api-resource-cleanup'],
      labels: {
        'cluster.open-cluster-management.io/clusterset': 'default',
        'feature.open-cluster-management.io/addon-work-manager': 'unreachable',
      },
    },
    spec: {
      hubAcceptsClient: true,
      leaseDurationSeconds: 60,
      managedClusterClientConfigs: [{ url: 'https://127.0.0.1:6443', caBundle: 'Y2E=' }],
    },
    status: {
      conditions: [
        condition(
          'HubAcceptedManagedCluster',
          'HubClusterAdminAccepted',
          'Accepted by hub cluster admin',
        ),
        condition('ManagedClusterJoined', 'ManagedClusterJoined', 'Managed cluster joined'),
        condition(
          'ManagedClusterConditionAvailable',
          'ManagedClusterAvailable',
          'Managed cluster is available',
        ),
      ],
      capacity: { cpu: '8', memory: '32879352Ki', pods: '110' },
      allocatable: { cpu: '8', memory: '32776952Ki', pods: '110' },
      version: { kubernetes: 'v1.34.1' },
      clusterClaims: [{ name: 'id.k8s.io', value: 'cell-remote' }],
    },
  } as KubernetesObject;
}

/** A Cell bound to `cluster`, delivering through ManifestWorks unless told otherwise. */
export function remoteCell(
  options: {
    name?: string;
    profile?: string;
    cluster?: string;
    delivery?: 'Local' | 'ManifestWork';
  } = {},
): Cell {
  const name = options.name ?? 'remote-a100';
  return {
    apiVersion: API_VERSION,
    kind: 'Cell',
    metadata: { name, namespace: 'kubecell-system', uid: `${name}-uid`, generation: 1 },
    spec: {
      managedClusterRef: { name: options.cluster ?? CLUSTER },
      machineProfile: { name: options.profile ?? 'a100' },
      ...(options.delivery === undefined
        ? { delivery: 'ManifestWork' }
        : { delivery: options.delivery }),
    },
  } as Cell;
}

/**
 * A VirtualCluster resolved by the VirtualCluster controller's own sync (virtualcluster/testing),
 * its snapshot then moved to `cluster` with `delivery`, with the local children that sync
 * rendered for the same snapshot.
 */
export function placedVirtualCluster(
  options: {
    name?: string;
    namespace?: string;
    uid?: string;
    cluster?: string;
    delivery?: 'Local' | 'ManifestWork';
  } = {},
): { vc: VirtualCluster; localChildren: KubernetesObject[] } {
  const vc = virtualCluster({
    ...(options.name ? { name: options.name } : {}),
    ...(options.namespace ? { namespace: options.namespace } : {}),
    ...(options.uid ? { uid: options.uid } : {}),
  });
  const local = runSync(vc);
  const status = structuredClone(local.status) as NonNullable<VirtualCluster['status']>;
  const resolved = status.resolved;
  if (resolved === undefined || resolved === null) throw new Error('the fixture did not resolve');
  if (options.namespace) resolved.hostNamespace = options.namespace;
  resolved.cell.managedClusterName = options.cluster ?? CLUSTER;
  resolved.cell.delivery = options.delivery ?? 'ManifestWork';
  return { vc: { ...vc, status }, localChildren: local.children };
}

/** Every related group the customize rules produce, present (possibly empty). */
export function relatedOf(objects: readonly KubernetesObject[], omit: string[] = []): ObjectMap {
  const map = toObjectMap(objects);
  for (const type of [TYPE_KEYS.cell, TYPE_KEYS.virtualCluster]) map[type] ??= {};
  for (const type of omit) delete map[type];
  return map;
}

/** Works as Metacontroller observes them: owned by the ManagedCluster, with server fields. */
export function observedWorks(works: readonly KubernetesObject[]): KubernetesObject[] {
  return works.map((work) => ({
    ...structuredClone(work),
    metadata: {
      ...structuredClone(work.metadata),
      uid: `uid-${work.metadata.name}`,
      resourceVersion: '9',
      finalizers: ['cluster.open-cluster-management.io/manifest-work-cleanup'],
      annotations: { 'metacontroller.k8s.io/decorator-controller': 'kubecell-delivery' },
      ownerReferences: [
        {
          apiVersion: 'cluster.open-cluster-management.io/v1',
          kind: 'ManagedCluster',
          name: CLUSTER,
          uid: CLUSTER_UID,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    status: {
      conditions: [
        {
          type: 'Applied',
          status: 'True',
          reason: 'AppliedManifestWorkComplete',
          message: 'Apply manifest work complete',
          lastTransitionTime: '2026-11-30T00:00:05Z',
          observedGeneration: 1,
        },
      ],
      resourceStatus: {
        manifests: [
          {
            resourceMeta: {
              ordinal: 0,
              group: '',
              version: 'v1',
              kind: 'Service',
              resource: 'services',
              name: 'x',
              namespace: 'y',
            },
            statusFeedback: {
              values: [{ name: 'nodePort', fieldValue: { type: 'Integer', integer: 31234 } }],
            },
            conditions: [
              {
                type: 'Applied',
                status: 'True',
                reason: 'AppliedManifestComplete',
                message: 'Apply manifest complete',
                lastTransitionTime: '2026-11-30T00:00:05Z',
              },
            ],
          },
        ],
      },
    },
  }));
}

/** The sync request the handler gets (after the request check). */
export function syncRequest(
  related: readonly KubernetesObject[],
  works: readonly KubernetesObject[] = [],
  options: { omit?: string[]; parent?: KubernetesObject } = {},
): DecoratorSyncRequest<KubernetesObject> {
  return {
    parent: options.parent ?? managedCluster(),
    related: relatedOf(related, options.omit),
    children: { [WORK_KEY]: {}, ...toObjectMap(works) },
    finalizing: false,
  };
}

/** The body Metacontroller posts (`pkg/controller/decorator/api/v2/hooks.go`). */
export function syncBody(
  related: readonly KubernetesObject[],
  works: readonly KubernetesObject[] = [],
): DecoratorHookBody {
  const request = syncRequest(related, works);
  return decoratorHookBody(deliveryController(), request.parent, {
    attachments: request.children,
    related: request.related,
  });
}

/** The kubecell-delivery DecoratorController, as Metacontroller sends it in `controller`. */
export function deliveryController(): Record<string, unknown> {
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'DecoratorController',
    metadata: { name: 'kubecell-delivery', uid: 'dc-delivery-uid', generation: 1 },
    spec: {
      resources: [
        { apiVersion: 'cluster.open-cluster-management.io/v1', resource: 'managedclusters' },
      ],
      attachments: [
        {
          apiVersion: MANIFEST_WORK_API_VERSION,
          resource: MANIFEST_WORK_RESOURCE,
          updateStrategy: { method: 'InPlace' },
        },
      ],
    },
  };
}

export { objectsYaml } from '../../test/support/snapshots.js';

/** Compares `text` with `hooks/delivery/__snapshots__/<name>.yaml`. */
export const matchSnapshot = snapshotsBeside(import.meta.url);
