/**
 * What a VirtualCluster sync establishes before it renders, as pure functions of the prior
 * status, the observation and the clock:
 *
 * - the placement: the stored snapshot (`status.resolved`) when usable; only while none is
 *   stored (and nothing sticky failed, and it is not being deleted) a new resolution
 *   (resolve.ts). A stored snapshot is never evaluated again.
 * - the failure, first match wins: a sticky Failed phase stays; otherwise an unusable stored
 *   snapshot (ResolvedSnapshotInvalid), an older VirtualCluster in the namespace
 *   (NamespaceOccupied), or, once resolved, another Cell under the resolved name (CellReplaced)
 *   or the Cell's ManagedCluster replaced (ManagedClusterReplaced).
 * - the resolved Cell's liveness (status.ts `assessCell`, the CellLive condition);
 * - what Ready waits for among the children: the allocated NodePort, the published kubeconfig
 *   and the quota in force; on a `delivery: ManifestWork` Cell, the NodePort fed back through
 *   the VirtualCluster's ManifestWork and the kubeconfig fed back sealed (remote.ts), whose
 *   quota the hub does not see.
 */
import type {
  Condition,
  ResolvedPlacement,
  VirtualCluster,
  VirtualClusterStatus,
} from '../generated/types/index.js';
import type { FeasibilityResult } from '../feasibility/evaluate.js';
import { isJsonObject } from '../json/json.js';
import { isEndpointAddress } from '../kube/addresses.js';
import { findCondition } from '../status/conditions.js';
import type { VirtualClusterConfig } from './config.js';
import { endpointUrl } from './kubeconfig.js';
import type { PriorStatus, VirtualClusterObservation } from './observe.js';
import { REASONS, STICKY_FAILURES } from './reasons.js';
import { allocatedNodePort, secretPointsAt } from './render.js';
import {
  olderNeighbours,
  resolvedIsUsable,
  resolvePlacement,
  type Resolution,
  type Unresolved,
} from './resolve.js';
import { assessCell, type CellLiveness } from './cell-liveness.js';
import { deliveredByWork } from './manifestwork.js';
import { assessRemote, type RemoteState } from './remote.js';

export interface Failure {
  reason: string;
  message: string;
}

/** The state of the children that Ready waits for. */
export interface ChildrenState {
  /** The NodePort allocated to the API Service; only once resolved. */
  port?: number;
  /** `https://<endpoint address>:<port>`, once both are known. */
  url?: string;
  /** The kubeconfig Secret points at `url`. */
  published: boolean;
  /** The ResourceQuota reports a non-empty `status.hard` (not seen on a ManifestWork Cell). */
  quotaInPlace: boolean;
}

export interface Assessment {
  /** `deletionTimestamp` is set. */
  deleting: boolean;
  /** `status.resolved` as stored, usable or not (the status keeps it); absent when none. */
  stored?: VirtualClusterStatus['resolved'];
  /** The snapshot the children are rendered from: the stored one when usable, or a new one. */
  resolved?: ResolvedPlacement;
  /** Why there is no snapshot; undefined when `resolved` is set. */
  unresolved?: Unresolved;
  /** This sync's feasibility evaluation; only when it resolved anew. */
  evaluation?: FeasibilityResult;
  failure?: Failure;
  cell: CellLiveness;
  children: ChildrenState;
  /** What the ManifestWork says, when `resolved` delivers the children through one. */
  remote?: RemoteState;
}

export function assessVirtualCluster(
  vc: VirtualCluster,
  prior: PriorStatus,
  observation: VirtualClusterObservation,
  config: VirtualClusterConfig,
  now: Date,
): Assessment {
  const deleting = vc.metadata.deletionTimestamp !== undefined;
  const stored = prior.status.resolved ?? undefined;
  const sticky = stickyFailure(prior.status.phase, prior.conditions);
  const failure = sticky ?? snapshotFailure(stored) ?? occupiedFailure(vc, observation);
  const resolution: Partial<Resolution> =
    stored === undefined && sticky === undefined && !deleting
      ? resolvePlacement(vc, observation, config, now, failure !== undefined)
      : { resolved: resolvedIsUsable(stored) ? stored : undefined };
  const { resolved } = resolution;
  const cell = assessCell(resolved?.cell.name ?? observation.cellName, observation, resolved);
  return {
    deleting,
    ...(stored === undefined ? {} : { stored }),
    ...resolution,
    unresolved: unresolvedBecause(resolution, failure),
    failure: failure ?? cellFailure(resolved, cell),
    cell,
    ...assessDelivery(vc, resolved, observation, config),
  };
}

/** The children's state: observed on the hub, or reported by the ManifestWork. */
function assessDelivery(
  vc: VirtualCluster,
  resolved: ResolvedPlacement | undefined,
  observation: VirtualClusterObservation,
  config: Pick<VirtualClusterConfig, 'sealingKeys'>,
): Pick<Assessment, 'children' | 'remote'> {
  if (resolved === undefined || !deliveredByWork(resolved)) {
    return { children: assessChildren(resolved, observation) };
  }
  const remote = assessRemote(vc, resolved, observation, config.sealingKeys);
  const { port } = remote;
  const url = port === undefined ? undefined : endpointUrl(resolved.endpointAddress, port);
  const children: ChildrenState = {
    ...(port === undefined ? {} : { port }),
    ...(url === undefined ? {} : { url }),
    published: url !== undefined && secretPointsAt(observation.children.secret, url),
    quotaInPlace: false,
  };
  return { children, remote };
}

/** A Failed phase recorded by an earlier sync that must stay (its reason is sticky). */
export function stickyFailure(
  phase: string | undefined,
  conditions: readonly Condition[] | undefined,
): Failure | undefined {
  if (phase !== 'Failed') return undefined;
  const ready = findCondition(conditions, 'Ready');
  if (ready === undefined || !STICKY_FAILURES.includes(ready.reason)) return undefined;
  return { reason: ready.reason, message: ready.message };
}

/**
 * A stored snapshot that lacks what the children are rendered from, or whose endpoint address
 * is not one (never quoted: it would carry the bytes into the message, issue 23).
 */
function snapshotFailure(stored: unknown): Failure | undefined {
  if (stored === undefined || resolvedIsUsable(stored)) return undefined;
  const address = isJsonObject(stored) ? stored['endpointAddress'] : undefined;
  const what =
    typeof address === 'string' && address !== '' && !isEndpointAddress(address)
      ? 'status.resolved.endpointAddress is not an IP address or DNS-1123 hostname, so no server URL is built from it'
      : 'status.resolved lacks fields the children are rendered from';
  return {
    reason: REASONS.ResolvedSnapshotInvalid,
    message: `${what}; the children are kept as they are. Delete and recreate the VirtualCluster to place it again.`,
  };
}

/** An older VirtualCluster keeps the namespace (a namespace hosts one). */
function occupiedFailure(
  vc: VirtualCluster,
  observation: VirtualClusterObservation,
): Failure | undefined {
  const older = olderNeighbours(vc, observation);
  if (older.length === 0) return undefined;
  return {
    reason: REASONS.NamespaceOccupied,
    message: `Namespace ${observation.namespace} already hosts VirtualCluster ${older[0]?.metadata.name ?? ''}, which is older; a namespace hosts one VirtualCluster. Delete this one and create it in another host namespace.`,
  };
}

/** Once resolved: the Cell was replaced, or it reports its ManagedCluster replaced. */
function cellFailure(
  resolved: ResolvedPlacement | undefined,
  cell: CellLiveness,
): Failure | undefined {
  if (resolved === undefined) return undefined;
  if (cell.replaced) return { reason: REASONS.CellReplaced, message: cell.verdict.message };
  if (!cell.managedClusterReplaced) return undefined;
  return {
    reason: REASONS.ManagedClusterReplaced,
    message: `Cell ${resolved.cell.name} reports its ManagedCluster replaced; the VirtualCluster is left as it is until an operator accepts the new cluster on the Cell.`,
  };
}

/** Why there is no snapshot: the failure when there is one, else what the resolution said. */
function unresolvedBecause(
  resolution: Partial<Resolution>,
  failure: Failure | undefined,
): Unresolved | undefined {
  if (resolution.resolved !== undefined) return undefined;
  if (failure !== undefined) return { why: 'failed', message: failure.message };
  return resolution.unresolved ?? { why: 'notEvaluated' };
}

/** The NodePort, the endpoint URL, whether the kubeconfig points at it, the quota in force. */
export function assessChildren(
  resolved: ResolvedPlacement | undefined,
  observation: VirtualClusterObservation,
): ChildrenState {
  const port = resolved === undefined ? undefined : allocatedNodePort(observation.children.service);
  const url =
    resolved !== undefined && port !== undefined
      ? endpointUrl(resolved.endpointAddress, port)
      : undefined;
  const hard = observation.children.resourceQuota?.status?.hard;
  return {
    ...(port === undefined ? {} : { port }),
    ...(url === undefined ? {} : { url }),
    published: url !== undefined && secretPointsAt(observation.children.secret, url),
    quotaInPlace: isJsonObject(hard) && Object.keys(hard).length > 0,
  };
}
