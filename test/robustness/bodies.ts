/**
 * Well-formed request bodies for every endpoint, built from the controllers' own test fixtures:
 * the starting points that the hostile-body tests break in every way they can.
 */
import { admissionReview, loadSamples, type Json } from '../../hooks/admission/testing.js';
import {
  cell,
  hostNamespace as cellHostNamespace,
  managedCluster,
  node as cellNode,
  NOW as CELL_NOW,
  pod,
  readyProvider,
  relatedOf,
  resolvedVirtualCluster,
} from '../../hooks/cell/testing.js';
import type { KubernetesObject } from '../../hooks/metacontroller/protocol.js';
import { acceptedRelated as planRelated, plan } from '../../hooks/plan/testing.js';
import {
  acceptedRelated as vcRelated,
  asObserved,
  k3kKubeconfigSecret,
  NOW as VC_NOW,
  syncRequest as vcSyncRequest,
  virtualCluster,
} from '../../hooks/virtualcluster/testing.js';
import { syncVirtualCluster } from '../../hooks/virtualcluster/sync.js';
import { CONFIG as VC_CONFIG } from '../../hooks/virtualcluster/testing.js';

const CONTROLLER = {
  apiVersion: 'metacontroller.k8s.io/v1alpha1',
  kind: 'CompositeController',
  metadata: { name: 'kubecell-controller' },
};

/** A Cell sync request with a bit of everything: Ready Nodes, pods, a VirtualCluster. */
export function cellSyncBody(finalizing = false): Json {
  const objects: KubernetesObject[] = [
    managedCluster(),
    cellNode('node-a', { cpu: '64', memory: '512Gi', 'nvidia.com/gpu': '8' }),
    cellNode(
      'node-b',
      { cpu: '63500m', memory: '500Gi', 'nvidia.com/gpu': '8' },
      { annotations: { 'capacity.topolvm.io/ssd': '1099511627776' } },
    ),
    pod('p1', 'tenant-a', 'node-a', [{ cpu: '2', memory: '4Gi', 'nvidia.com/gpu': '1' }]),
    pod('p2', 'tenant-a', undefined, [{ cpu: '500m' }], { init: [{ cpu: '1' }] }),
    cellHostNamespace('tenant-a'),
    resolvedVirtualCluster('vc1', 'tenant-a', { 'requests.cpu': '4' }),
    ...readyProvider(),
  ];
  return {
    controller: CONTROLLER,
    parent: cell(),
    children: {},
    related: relatedOf(objects),
    finalizing,
  };
}

/** A resolved VirtualCluster whose children exist, with k3k's kubeconfig: the richest sync. */
export function virtualClusterSyncBody(finalizing = false): Json {
  const vc = virtualCluster();
  const first = syncVirtualCluster(vcSyncRequest(vc), VC_CONFIG, VC_NOW);
  const children = first.children.map((child) =>
    asObserved(child, child.kind === 'Service' ? { nodePort: 31234 } : {}),
  );
  const request = vcSyncRequest(
    { ...vc, status: first.status } as typeof vc,
    [...vcRelated(), k3kKubeconfigSecret()],
    children,
    finalizing,
  );
  return JSON.parse(JSON.stringify({ controller: CONTROLLER, ...request })) as Json;
}

export function planSyncBody(): Json {
  return {
    controller: CONTROLLER,
    parent: plan(),
    children: {},
    related: planRelated(),
    finalizing: false,
  };
}

/** Parents of the controllers that have no richer fixture here, by controller name. */
const PLAIN_PARENTS: Record<string, KubernetesObject> = {
  'host-namespace': {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'tenant-a', uid: 'ns-uid', labels: { 'kubecell.io/host-namespace': 'true' } },
  },
  'class-usage': {
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'VirtualNodeClass',
    metadata: { name: 'small', uid: 'class-uid', generation: 1 },
    spec: {
      entitlement: { workloadHard: { 'requests.cpu': '4' } },
      storageClassName: 'topolvm-provisioner',
    },
  } as KubernetesObject,
};

/**
 * The base body of each `<controller>/<hook>` route, and whether it is known to be accepted
 * (answered 200). A controller registered after these tests were written gets a plain body
 * (its parent with empty maps, in the composite shape): the hostile variations still run
 * against it.
 */
export function hookBody(controller: string, hook: string): { body: Json; accepted: boolean } {
  const parent = (body: Json): Json => ({ controller: CONTROLLER, parent: body.parent });
  const known = (body: Json) => ({ body, accepted: true });
  switch (`${controller}/${hook}`) {
    case 'cell/customize':
      return known(parent(cellSyncBody()));
    case 'cell/sync':
      return known(cellSyncBody());
    case 'cell/finalize':
      return known(cellSyncBody(true));
    case 'plan/customize':
      return known(parent(planSyncBody()));
    case 'plan/sync':
      return known(planSyncBody());
    case 'virtualcluster/customize':
      return known(parent(virtualClusterSyncBody()));
    case 'virtualcluster/sync':
      return known(virtualClusterSyncBody());
    case 'virtualcluster/finalize':
      return known(virtualClusterSyncBody(true));
    case 'host-namespace/customize':
    case 'class-usage/customize': {
      const plain = PLAIN_PARENTS[controller] as KubernetesObject;
      return known({ controller: CONTROLLER, parent: plain });
    }
    case 'host-namespace/sync':
    case 'host-namespace/finalize':
    case 'class-usage/sync': {
      // A DecoratorController's request names the decorated object `object` and its
      // attachments `attachments` (Metacontroller pkg/controller/decorator/api/v2/hooks.go).
      const plain = PLAIN_PARENTS[controller] as KubernetesObject;
      return known({
        controller: CONTROLLER,
        object: plain,
        attachments:
          controller === 'host-namespace' ? { 'NetworkPolicy.networking.k8s.io/v1': {} } : {},
        related: controller === 'class-usage' ? { 'VirtualCluster.kubecell.io/v1alpha1': {} } : {},
        finalizing: hook === 'finalize',
      });
    }
    default: {
      const plain: KubernetesObject = PLAIN_PARENTS[controller] ?? {
        apiVersion: 'kubecell.io/v1alpha1',
        kind: 'Unknown',
        metadata: { name: 'x', uid: 'x-uid' },
      };
      const body: Json =
        hook === 'customize'
          ? { controller: CONTROLLER, parent: plain }
          : {
              controller: CONTROLLER,
              parent: plain,
              children: {},
              related: {},
              finalizing: hook === 'finalize',
            };
      return { body, accepted: false };
    }
  }
}

/** An AdmissionReview for every KubeCell sample: creates, and updates of the same object. */
export function admissionBodies(): Json[] {
  const objects = loadSamples()
    .map((sample) => sample.object)
    .filter((object) => String(object.apiVersion).startsWith('kubecell.io/'));
  return [
    ...objects.map((object) => admissionReview('CREATE', object)),
    ...objects.map((object) => admissionReview('UPDATE', object, structuredClone(object))),
    ...objects.slice(0, 2).map((object) => admissionReview('DELETE', null, object)),
  ];
}

export { CELL_NOW, VC_NOW };
