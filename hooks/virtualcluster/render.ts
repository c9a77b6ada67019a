/**
 * The children of a resolved VirtualCluster, rendered from `status.resolved` alone (and, for
 * the kubeconfig Secret, from k3k's observed kubeconfig and the observed NodePort). Nothing
 * here reads the Cell, the class or any other related object: once resolved, changing or
 * deleting those never changes a child.
 *
 * All children live in the host namespace (`resolved.hostNamespace`, the VirtualCluster's own
 * namespace). Metacontroller adds its `controller-uid` label and the owner reference.
 */
import { keptChild } from '../metacontroller/kept-child.js';
import type { ResolvedPlacement, VirtualCluster } from '../generated/types/index.js';
import { compareStrings } from '../feasibility/resources.js';
import { LABELS } from '../kube/labels.js';
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
  KUBECONFIG_KEY,
  LIMIT_RANGE_DEFAULT_LIMIT,
  LIMIT_RANGE_DEFAULT_REQUEST,
  MANAGED_BY,
  storageClassReserve,
} from './constants.js';
import { endpointUrl, kubeconfigServers, rewriteKubeconfigServer } from './kubeconfig.js';
import type { ChildNames } from './names.js';
import type { ObservedChildren, SecretObject, ServiceObject } from './observe.js';

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** The labels of every child; a value that is not a valid label value is left out. */
export function childLabels(
  vc: VirtualCluster,
  resolved: ResolvedPlacement,
): Record<string, string> {
  const labels: Record<string, string> = { [CHILD_LABELS.managedBy]: MANAGED_BY };
  const candidates: [string, string][] = [
    [CHILD_LABELS.virtualCluster, vc.metadata.name],
    [CHILD_LABELS.cell, resolved.cell.name],
    [CHILD_LABELS.class, resolved.class.name],
  ];
  for (const [key, value] of candidates) {
    if (value.length <= 63 && LABEL_VALUE.test(value)) labels[key] = value;
  }
  return labels;
}

function meta(name: string, resolved: ResolvedPlacement, labels: Record<string, string>) {
  return { name, namespace: resolved.hostNamespace, labels: { ...labels } };
}

/** The k3k Cluster: shared mode on the profile's Nodes, etcd on the class's storage class. */
export function renderK3kCluster(
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

export function renderResourceQuota(
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
export function renderLimitRange(
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
export function renderApiService(
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

/** The NodePort the apiserver allocated to the API Service, if any. */
export function allocatedNodePort(service: ServiceObject | undefined): number | undefined {
  const ports = service?.spec?.ports;
  if (!Array.isArray(ports)) return undefined;
  const port = ports.find((p) => p?.name === API_PORT_NAME) ?? ports[0];
  const nodePort = port?.nodePort;
  return typeof nodePort === 'number' &&
    Number.isInteger(nodePort) &&
    nodePort > 0 &&
    nodePort <= 65535
    ? nodePort
    : undefined;
}

/** The text of a Secret's `kubeconfig.yaml`, or undefined when absent or not decodable. */
export function secretKubeconfig(secret: SecretObject | undefined): string | undefined {
  const encoded = secret?.data?.[KUBECONFIG_KEY];
  if (typeof encoded !== 'string' || encoded === '') return undefined;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(encoded, 'base64');
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? text : undefined;
}

export type SecretPlan =
  | { kind: 'render'; secret: KubernetesObject }
  | { kind: 'keep'; secret: KubernetesObject; why: 'k3kMissing' | 'k3kInvalid' | 'noPort' }
  | { kind: 'none'; why: 'k3kMissing' | 'k3kInvalid' | 'noPort'; problem?: string };

/**
 * The admin kubeconfig Secret. Rendered once the NodePort is allocated and k3k's kubeconfig
 * is readable. Once published it is never withdrawn: when k3k's Secret disappears or becomes
 * unreadable (or the port is unknown), the published Secret is returned as observed.
 */
export function planSecret(
  names: ChildNames,
  resolved: ResolvedPlacement,
  labels: Record<string, string>,
  port: number | undefined,
  k3kKubeconfig: SecretObject | undefined,
  observed: ObservedChildren,
): SecretPlan {
  const keep = (why: 'k3kMissing' | 'k3kInvalid' | 'noPort', problem?: string): SecretPlan =>
    observed.secret !== undefined
      ? { kind: 'keep', secret: keptChild(observed.secret), why }
      : { kind: 'none', why, ...(problem === undefined ? {} : { problem }) };
  if (port === undefined) return keep('noPort');
  if (k3kKubeconfig === undefined) return keep('k3kMissing');
  const source = secretKubeconfig(k3kKubeconfig);
  if (source === undefined) {
    return keep('k3kInvalid', `its data.${KUBECONFIG_KEY} is missing or not base64 UTF-8`);
  }
  const rewritten = rewriteKubeconfigServer(source, endpointUrl(resolved.endpointAddress, port));
  if (!rewritten.ok) return keep('k3kInvalid', rewritten.problem);
  return {
    kind: 'render',
    secret: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: meta(names.secret, resolved, labels),
      type: 'Opaque',
      data: { [KUBECONFIG_KEY]: Buffer.from(rewritten.text, 'utf8').toString('base64') },
    } as KubernetesObject,
  };
}

/** Whether an observed Secret holds a kubeconfig whose every server is `url`. */
export function secretPointsAt(secret: SecretObject | undefined, url: string): boolean {
  const text = secretKubeconfig(secret);
  const servers = text === undefined ? undefined : kubeconfigServers(text);
  return servers !== undefined && servers.every((server) => server === url);
}
