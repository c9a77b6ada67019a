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
  KUBECONFIG_KEY,
  LIMIT_RANGE_DEFAULT_LIMIT,
  LIMIT_RANGE_DEFAULT_REQUEST,
  MANAGED_BY,
  storageClassReserve,
} from './constants.js';
import {
  canonicalKubeconfig,
  endpointUrl,
  kubeconfigServers,
  rewriteKubeconfigServer,
  type KubeconfigRefusal,
} from './kubeconfig.js';
import { MAX_KUBECONFIG_BYTES } from './kubeconfig-policy.js';
import { childNames, type ChildNames } from './names.js';
import type {
  ObservedChildren,
  SecretObject,
  ServiceObject,
  VirtualClusterObservation,
} from './observe.js';

/**
 * The children a sync returns: rendered from the snapshot, with the plan for the kubeconfig
 * Secret; or, without a usable snapshot, the observed children as they are, so a missing or
 * malformed input never deletes or changes one.
 */
export type Rendering =
  | { rendered: true; children: KubernetesObject[]; secret: SecretPlan }
  | { rendered: false; children: KubernetesObject[] };

export function renderVirtualCluster(
  vc: VirtualCluster,
  resolved: ResolvedPlacement | undefined,
  observation: VirtualClusterObservation,
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
    allocatedNodePort(observation.children.service),
    observation.k3kKubeconfig,
    observation.children,
  );
  const placed = renderPlaced(names, resolved, labels);
  return {
    rendered: true,
    children: [
      placed.cluster,
      placed.quota,
      placed.limitRange,
      placed.service,
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
export function childLabels(
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

/** What a Secret's `kubeconfig.yaml` holds, read without quoting it. */
export type SecretKubeconfig =
  { ok: true; text: string } | { ok: false; refusal: KubeconfigRefusal; problem: string };

/** Base64 characters of the largest kubeconfig accepted. */
const MAX_ENCODED_LENGTH = 4 * Math.ceil(MAX_KUBECONFIG_BYTES / 3);

/**
 * Decodes a Secret's `kubeconfig.yaml`. A value longer than the base64 of 64 KiB is refused
 * before it is decoded.
 */
export function readSecretKubeconfig(secret: SecretObject | undefined): SecretKubeconfig {
  const encoded = secret?.data?.[KUBECONFIG_KEY];
  const unreadable: SecretKubeconfig = {
    ok: false,
    refusal: 'invalid',
    problem: `its data.${KUBECONFIG_KEY} is missing or not base64 UTF-8`,
  };
  if (typeof encoded !== 'string' || encoded === '') return unreadable;
  if (encoded.length > MAX_ENCODED_LENGTH) {
    return {
      ok: false,
      refusal: 'rejected',
      problem: `its data.${KUBECONFIG_KEY} is ${encoded.length} base64 characters, more than the ${MAX_ENCODED_LENGTH} of the ${MAX_KUBECONFIG_BYTES} bytes (64 KiB) a kubeconfig may have`,
    };
  }
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return unreadable;
  const bytes = Buffer.from(encoded, 'base64');
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? { ok: true, text } : unreadable;
}

/** The text of a Secret's `kubeconfig.yaml`, or undefined when absent, not decodable or too large. */
export function secretKubeconfig(secret: SecretObject | undefined): string | undefined {
  const read = readSecretKubeconfig(secret);
  return read.ok ? read.text : undefined;
}

/** Why the kubeconfig Secret is not rendered from k3k's: no port, k3k's missing or refused. */
export type SecretPlanWhy = 'k3kMissing' | 'k3kInvalid' | 'k3kRejected' | 'noPort';

export type SecretPlan =
  | { kind: 'render'; secret: KubernetesObject }
  | { kind: 'keep'; secret: KubernetesObject; why: SecretPlanWhy; problem?: string }
  | {
      kind: 'none';
      why: SecretPlanWhy;
      problem?: string;
      /** Why the observed published Secret was not kept (it would not be published today). */
      withdrawn?: string;
    };

/**
 * The admin kubeconfig Secret. Rendered once the NodePort is allocated and k3k's kubeconfig
 * is readable and passes the allowlist. Once published it is not withdrawn: when k3k's Secret
 * disappears or is refused (or the port is unknown), the published Secret is returned as
 * observed, unless it holds what would not be published today (unreadable, over 64 KiB, or a
 * field off the allowlist: edited by hand, or written by a release before the allowlist); that
 * one is withdrawn.
 */
export function planSecret(
  names: ChildNames,
  resolved: ResolvedPlacement,
  labels: Record<string, string>,
  port: number | undefined,
  k3kKubeconfig: SecretObject | undefined,
  observed: ObservedChildren,
): SecretPlan {
  const keep = (why: SecretPlanWhy, problem?: string): SecretPlan => {
    const detail = problem === undefined ? {} : { problem };
    if (observed.secret === undefined) return { kind: 'none', why, ...detail };
    const kept = republished(observed.secret);
    return kept.ok
      ? { kind: 'keep', secret: kept.secret, why, ...detail }
      : { kind: 'none', why, ...detail, withdrawn: kept.problem };
  };
  if (port === undefined) return keep('noPort');
  if (k3kKubeconfig === undefined) return keep('k3kMissing');
  const source = readSecretKubeconfig(k3kKubeconfig);
  const rewritten = source.ok
    ? rewriteKubeconfigServer(source.text, endpointUrl(resolved.endpointAddress, port))
    : source;
  if (!rewritten.ok) {
    return keep(rewritten.refusal === 'rejected' ? 'k3kRejected' : 'k3kInvalid', rewritten.problem);
  }
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

/**
 * The observed published Secret as it is kept: its kubeconfig written anew by KubeCell from its
 * own allowlisted values (the same text when KubeCell wrote it; a Secret of k3k's bytes from a
 * release before issue 23 is rewritten), and nothing else in its data. Not kept when it holds
 * what would not be published today (unreadable, too large, a character or field refused).
 */
function republished(
  secret: SecretObject,
): { ok: true; secret: KubernetesObject } | { ok: false; problem: string } {
  const read = readSecretKubeconfig(secret);
  const written = read.ok ? canonicalKubeconfig(read.text) : read;
  if (!written.ok) return written;
  const kept = keptChild(secret) as KubernetesObject & { data?: Record<string, string> };
  kept.data = { [KUBECONFIG_KEY]: Buffer.from(written.text, 'utf8').toString('base64') };
  return { ok: true, secret: kept };
}

/** Whether an observed Secret holds a kubeconfig whose every server is `url`. */
export function secretPointsAt(secret: SecretObject | undefined, url: string): boolean {
  const text = secretKubeconfig(secret);
  const servers = text === undefined ? undefined : kubeconfigServers(text);
  return servers !== undefined && servers.every((server) => server === url);
}
