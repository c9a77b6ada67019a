/**
 * The children of a resolved VirtualCluster, rendered from `status.resolved` alone (and, for
 * the kubeconfig Secret, from k3k's kubeconfig and the NodePort where its placement has them:
 * observed on the hub, or fed back through its ManifestWork). Nothing here reads the Cell, the
 * class or any other related object: once resolved, changing or deleting those never changes a
 * child. A placement on the hub renders every child; one through the work the kubeconfig Secret
 * alone (kubecell-delivery puts the others into the work, from `placedChildren`).
 *
 * All children live in the host namespace (`resolved.hostNamespace`, the VirtualCluster's own
 * namespace). Metacontroller adds its `controller-uid` label and the owner reference.
 */
import { keptChild } from '../metacontroller/kept-child.js';
import type { ResolvedPlacement, VirtualCluster } from '../generated/types/index.js';
import { compareStrings } from '../json/compare.js';
import { isLabelValue, LABELS } from '../kube/labels.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import {
  addQuantities,
  formatQuantity,
  parseQuantity,
  QuantityError,
} from '../quantity/quantity.js';
import {
  API_PORT_NAME,
  CHILD_LABELS,
  CONTROL_PLANE_RESERVE,
  K3K_API_VERSION,
  K3K_SERVER_POD_LABELS,
  K3K_SERVER_PORT,
  K3K_SERVER_REQUESTS,
  K3K_SERVER_ROLE,
  K3K_SERVERS,
  K3K_STORAGE_REQUEST_SIZE,
  LIMIT_RANGE_DEFAULT_LIMIT,
  LIMIT_RANGE_DEFAULT_REQUEST,
  MANAGED_BY,
  storageClassReserve,
} from './constants.js';
import { planSecret, type SecretPlan } from './kubeconfig-secret.js';
import { childNames, type ChildNames } from './names.js';
import type { Assessment } from './assess.js';
import type { VirtualClusterObservation } from './observe.js';

/**
 * The children a sync returns: rendered from the snapshot, with the plan for the kubeconfig
 * Secret; or, without a usable snapshot, the observed children as they are, so a missing or
 * malformed input never deletes or changes one.
 */
export type Rendering =
  | { rendered: true; children: KubernetesObject[]; secret: SecretPlan }
  | { rendered: false; children: KubernetesObject[] };

/** A rendering from a usable snapshot. */
export type RenderedChildren = Extract<Rendering, { rendered: true }>;

export function renderVirtualCluster(
  vc: VirtualCluster,
  { resolved, placement }: Pick<Assessment, 'resolved' | 'placement'>,
  observation: Pick<VirtualClusterObservation, 'names' | 'children'>,
): Rendering {
  if (resolved === undefined) {
    return { rendered: false, children: observation.children.all.map(keptChild) };
  }
  const { names } = observation;
  const labels = childLabels(vc, resolved);
  const secret = planSecret(
    names,
    resolved,
    labels,
    placement.children.port,
    placement.source,
    observation.children.secret,
  );
  const placed = placement.where === 'hub' ? renderPlaced(names, resolved, labels) : undefined;
  return {
    rendered: true,
    children: [
      ...(placed ? [placed.cluster, placed.quota, placed.limitRange, placed.service] : []),
      ...(secret.kind === 'none' ? [] : [secret.secret]),
    ],
    secret,
  };
}

/**
 * What a resolved VirtualCluster places on its Cell's cluster, whichever way it gets there:
 * Metacontroller applies these as children on a Local Cell, and the delivery carries the same
 * objects, byte for byte, in the VirtualCluster's ManifestWork on a ManifestWork Cell
 * (hooks/delivery/vc-work.ts). The kubeconfig Secret is not among them: it is published on the
 * hub (planSecret).
 */
export interface PlacedChildren {
  cluster: KubernetesObject;
  quota: KubernetesObject;
  limitRange: KubernetesObject;
  service: KubernetesObject;
}

export function placedChildren(
  vc: Pick<VirtualCluster, 'metadata'>,
  resolved: ResolvedPlacement,
): PlacedChildren {
  const names = childNames(vc.metadata.name, vc.metadata.uid);
  return renderPlaced(names, resolved, childLabels(vc, resolved));
}

function renderPlaced(
  names: ChildNames,
  resolved: ResolvedPlacement,
  labels: Record<string, string>,
): PlacedChildren {
  return {
    cluster: renderK3kCluster(names, resolved, labels),
    quota: renderResourceQuota(names, resolved, labels),
    limitRange: renderLimitRange(names, resolved, labels),
    service: renderApiService(names, resolved, labels),
  };
}

/** The labels of every child; a value that is not a valid label value is left out. */
function childLabels(
  vc: Pick<VirtualCluster, 'metadata'>,
  resolved: ResolvedPlacement,
): Record<string, string> {
  const labels: Record<string, string> = { [CHILD_LABELS.managedBy]: MANAGED_BY };
  const candidates: [string, string][] = [
    [CHILD_LABELS.virtualCluster, vc.metadata.name],
    [CHILD_LABELS.cell, resolved.cell.name],
    [CHILD_LABELS.class, resolved.class.name],
  ];
  for (const [key, value] of candidates) {
    if (isLabelValue(value)) labels[key] = value;
  }
  return labels;
}

function meta(name: string, resolved: ResolvedPlacement, labels: Record<string, string>) {
  return { name, namespace: resolved.hostNamespace, labels: { ...labels } };
}

/** The k3k Cluster: shared mode on the profile's Nodes, etcd on the class's storage class. */
function renderK3kCluster(
  names: ChildNames,
  resolved: ResolvedPlacement,
  labels: Record<string, string>,
): KubernetesObject {
  return {
    apiVersion: K3K_API_VERSION,
    kind: 'Cluster',
    metadata: meta(names.cluster, resolved, labels),
    spec: {
      mode: 'shared',
      servers: K3K_SERVERS,
      nodeSelector: { [LABELS.machineProfile]: resolved.cell.machineProfile.name },
      persistence: {
        type: 'dynamic',
        storageClassName: resolved.class.storageClassName,
        storageRequestSize: K3K_STORAGE_REQUEST_SIZE,
      },
      tlsSANs: [resolved.endpointAddress],
      serverResources: { requests: { ...K3K_SERVER_REQUESTS } },
    },
  } as KubernetesObject;
}

/**
 * `spec.hard` of the ResourceQuota: every entitlement key, plus the control-plane reserve on
 * the keys the entitlement limits (see CONTROL_PLANE_RESERVE). A value that does not parse as
 * a quantity (the CRD schema prevents it) is passed through without a reserve, so the
 * apiserver refuses it visibly instead of the hook guessing.
 */
export function quotaHard(resolved: ResolvedPlacement): Record<string, string> {
  const entitlement = resolved.class.entitlement.workloadHard;
  const reserve: Record<string, string> = {
    ...CONTROL_PLANE_RESERVE,
    ...storageClassReserve(resolved.class.storageClassName),
  };
  const hard: Record<string, string> = {};
  for (const key of Object.keys(entitlement).sort(compareStrings)) {
    const value = entitlement[key];
    if (value === undefined) continue;
    const extra = reserve[key];
    try {
      hard[key] = formatQuantity(
        extra === undefined ? parseQuantity(value) : addQuantities(value, extra),
      );
    } catch (err) {
      if (!(err instanceof QuantityError)) throw err;
      hard[key] = String(value);
    }
  }
  return hard;
}

function renderResourceQuota(
  names: ChildNames,
  resolved: ResolvedPlacement,
  labels: Record<string, string>,
): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: meta(names.resourceQuota, resolved, labels),
    spec: { hard: quotaHard(resolved) },
  } as KubernetesObject;
}

/** Default requests always; a default limit for cpu/memory only when the class limits it. */
function renderLimitRange(
  names: ChildNames,
  resolved: ResolvedPlacement,
  labels: Record<string, string>,
): KubernetesObject {
  const entitlement = resolved.class.entitlement.workloadHard;
  const defaultLimit: Record<string, string> = {};
  for (const resource of ['cpu', 'memory'] as const) {
    if (entitlement[`limits.${resource}`] !== undefined) {
      defaultLimit[resource] = LIMIT_RANGE_DEFAULT_LIMIT[resource];
    }
  }
  return {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: meta(names.limitRange, resolved, labels),
    spec: {
      limits: [
        {
          type: 'Container',
          ...(Object.keys(defaultLimit).length > 0 ? { default: defaultLimit } : {}),
          defaultRequest: { ...LIMIT_RANGE_DEFAULT_REQUEST },
        },
      ],
    },
  } as KubernetesObject;
}

/** A NodePort Service on k3k's server pods; the apiserver allocates the port. */
function renderApiService(
  names: ChildNames,
  resolved: ResolvedPlacement,
  labels: Record<string, string>,
): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(names.service, resolved, labels),
    spec: {
      type: 'NodePort',
      selector: {
        [K3K_SERVER_POD_LABELS.cluster]: names.cluster,
        [K3K_SERVER_POD_LABELS.role]: K3K_SERVER_ROLE,
      },
      ports: [
        {
          name: API_PORT_NAME,
          protocol: 'TCP',
          port: K3K_SERVER_PORT,
          targetPort: K3K_SERVER_PORT,
        },
      ],
    },
  } as KubernetesObject;
}
