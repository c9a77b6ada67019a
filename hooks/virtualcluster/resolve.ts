/**
 * Resolution: the feasibility evaluation of a VirtualCluster that has no `status.resolved`
 * yet, the choice of its endpoint address, and the immutable snapshot written once accepted.
 * `resolvePlacement` runs them in that order, after refusing a stale copy of the VirtualCluster
 * (`refuseStaleCopy`).
 */
import { createHash } from 'node:crypto';
import type {
  Cell,
  CellNodeAddress,
  PlacementReport,
  PlanFollowed,
  ResolvedPlacement,
  VirtualCluster,
  VirtualNodeClass,
} from '../generated/types/index.js';
import {
  evaluateFeasibility,
  type FeasibilityInput,
  type FeasibilityResult,
} from '../feasibility/evaluate.js';
import { Decision } from '../feasibility/reasons.js';
import { compareStrings } from '../json/compare.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { isEndpointAddress } from '../kube/addresses.js';
import { RetryLaterError } from '../metacontroller/retry-later.js';
import { selectCell } from '../placement/select.js';
import { formatTime } from '../status/conditions.js';
import type { VirtualClusterConfig } from './config.js';
import type { VirtualClusterObservation } from './observe.js';
import { plannedCell, planOutcome } from './planned-cell.js';

/** Why a VirtualCluster has no usable placement; status.ts words it in the Resolved condition. */
export type Unresolved =
  | { why: 'notEvaluated' }
  | { why: 'failed'; message: string }
  | { why: 'rejected' | 'undecided'; placement?: PlacementReport }
  | { why: 'noEndpointAddress'; profile: string };

export interface Resolution {
  evaluation: FeasibilityResult;
  /** The Cell resolved to, as observed: with a cellSelector, the one chosen. */
  cell?: Cell;
  /** The new snapshot, once the placement is accepted and has an endpoint address. */
  resolved?: ResolvedPlacement;
  /** Why there is no snapshot, otherwise. */
  unresolved?: Unresolved;
}

/**
 * Resolves a VirtualCluster that has no `status.resolved`: refuses a stale copy, evaluates the
 * placement, and when it is accepted and nothing has `failed`, writes the snapshot. Anything but
 * Accepted leaves it unresolved with the report in the evaluation.
 */
export function resolvePlacement(
  vc: VirtualCluster,
  observation: VirtualClusterObservation,
  config: VirtualClusterConfig,
  now: Date,
  failed: boolean,
): Resolution {
  refuseStaleCopy(vc, observation, now);
  const { evaluation, cell, placement, plan } = evaluatePlacement(vc, observation, config, now);
  const { virtualNodeClass } = observation;
  const accepted =
    !failed &&
    evaluation.decision === Decision.Accepted &&
    cell !== undefined &&
    virtualNodeClass !== undefined;
  if (!accepted) {
    const why = evaluation.decision === Decision.Rejected ? 'rejected' : 'undecided';
    return { evaluation, unresolved: { why, ...(placement === undefined ? {} : { placement }) } };
  }
  const uid = vc.metadata.uid ?? `${observation.namespace}/${vc.metadata.name}`;
  const endpoint = chooseEndpoint(cell.status?.nodeAddresses, uid);
  if (endpoint === undefined) {
    const profile = cell.spec.machineProfile.name;
    return { evaluation, unresolved: { why: 'noEndpointAddress', profile } };
  }
  const resolved = snapshot(vc, cell, virtualNodeClass, endpoint.address, now);
  return {
    evaluation,
    cell,
    resolved: {
      ...resolved,
      ...(placement === undefined ? {} : { placement }),
      ...(plan === undefined ? {} : { plan }),
    },
  };
}

/**
 * The feasibility evaluation on the Cell `spec.cellRef` names, or, with `spec.cellSelector`, on
 * each Cell it matched and the choice among them (hooks/placement/select.ts, the same as a
 * plan's): `cell` is the Cell to resolve to when the evaluation accepts.
 */
function evaluatePlacement(
  vc: VirtualCluster,
  observation: VirtualClusterObservation,
  config: VirtualClusterConfig,
  now: Date,
): {
  evaluation: FeasibilityResult;
  cell?: Cell;
  placement?: PlacementReport;
  /** With a plan named and a Cell chosen: what resolution records of the plan. */
  plan?: PlanFollowed;
} {
  const { cellSelector } = vc.spec;
  if (cellSelector === undefined) {
    const evaluation = evaluateFeasibility(feasibilityInput(vc, observation, config, now));
    return { evaluation, ...(observation.cell === undefined ? {} : { cell: observation.cell }) };
  }
  const cells = observation.selectedCells ?? [];
  const named = observation.plan;
  const planned = named === undefined ? undefined : plannedCell(named, now);
  const preferred = planned !== undefined && !('result' in planned) ? planned.cell : undefined;
  const selection = selectCell({
    cells,
    ...(preferred === undefined ? {} : { prefer: preferred }),
    selector: cellSelector,
    policy: vc.spec.placementPolicy,
    cellNamespace: config.cellNamespace,
    evaluatedAgain:
      'the VirtualCluster stays Pending and is evaluated again when a Cell is created or labelled to match.',
    evaluate: (cell) =>
      evaluateFeasibility(
        feasibilityInput(
          vc,
          { ...observation, cellName: cell?.metadata.name ?? '', ...(cell ? { cell } : {}) },
          config,
          now,
        ),
      ),
  });
  const { decision, checks, report, chosen } = selection;
  return {
    evaluation: { decision, checks },
    ...(chosen === undefined ? {} : { cell: chosen }),
    placement: report,
    ...(named === undefined || planned === undefined || chosen === undefined
      ? {}
      : {
          plan: planOutcome(
            named.name,
            planned,
            cells.map((matched) => matched.metadata.name),
            chosen.metadata.name,
          ),
        }),
  };
}

/**
 * How long after its newest child was created a VirtualCluster without `status.resolved` is
 * taken for a stale copy (see `staleCopyEvidence`) rather than a snapshot that was never
 * written. Metacontroller's caches lag by far less; past this, the placement is evaluated again.
 */
export const STALE_COPY_GRACE_SECONDS = 60;

/**
 * The child that shows this copy of the VirtualCluster is stale, if any: one was created less
 * than STALE_COPY_GRACE_SECONDS ago, yet the copy has no `status.resolved`.
 *
 * Children exist only once a sync rendered them from a snapshot, and Metacontroller writes the
 * status of that sync right after applying them. The next sync often starts before its cache
 * has seen that write: Metacontroller reads the parent from its informer
 * (`pc.parentLister.Get`, pkg/controller/composite/controller.go), and the children applied in
 * between queue that very sync. Yet it writes the status that sync returns over the latest
 * object, whatever the copy was (`AtomicStatusUpdate` GETs the object and replaces `.status`,
 * pkg/dynamic/clientset/clientset.go). Resolving again from such a copy would re-render the
 * children from the Cell and class as they are now and return a second snapshot, which the CRD
 * refuses, or no snapshot at all (the evaluation no longer accepts, e.g. the Cell now counts this
 * VirtualCluster as committed), which the CRD accepts (its rule compares old and new snapshots
 * only when both exist): the snapshot would be erased. So such a sync is refused; the write it
 * waited for makes Metacontroller sync again, with the snapshot.
 */
export function staleCopyEvidence(
  children: readonly KubernetesObject[],
  now: Date,
): { child: KubernetesObject; created: string } | undefined {
  let newest: { child: KubernetesObject; created: string; at: number } | undefined;
  for (const child of children) {
    const created = child.metadata.creationTimestamp;
    const at = typeof created === 'string' ? Date.parse(created) : NaN;
    if (Number.isNaN(at) || (newest !== undefined && newest.at >= at)) continue;
    newest = { child, created: created as string, at };
  }
  if (newest === undefined || now.getTime() - newest.at >= STALE_COPY_GRACE_SECONDS * 1000) {
    return undefined;
  }
  return { child: newest.child, created: newest.created };
}

/**
 * Throws a RetryLaterError (answered 429 with Retry-After 1: nothing changes, and Metacontroller
 * retries without a SyncError event) when this copy is stale (`staleCopyEvidence`).
 */
export function refuseStaleCopy(
  vc: VirtualCluster,
  observation: VirtualClusterObservation,
  now: Date,
): void {
  const stale = staleCopyEvidence(observation.children.all, now);
  if (stale === undefined) return;
  throw new RetryLaterError(
    `VirtualCluster ${observation.namespace}/${vc.metadata.name}: this copy has no status.resolved, but its ${stale.child.kind} ${stale.child.metadata.name} was created at ${stale.created}: the copy predates the status write that recorded the snapshot, so nothing is changed and the next sync reads the snapshot. If no snapshot appears within ${STALE_COPY_GRACE_SECONDS} s of the newest child's creation, the placement is evaluated again.`,
  );
}

/**
 * Whether `a` was created before `b`: the older VirtualCluster of a namespace keeps it.
 * creationTimestamp first, then name (code-unit order). A VirtualCluster without a readable
 * creationTimestamp (never the case from the apiserver) counts as the newest.
 */
export function isOlder(a: VirtualCluster, b: VirtualCluster): boolean {
  const ta = createdAt(a);
  const tb = createdAt(b);
  if (ta !== tb) return ta < tb;
  return compareStrings(a.metadata.name, b.metadata.name) < 0;
}

function createdAt(vc: VirtualCluster): number {
  const stamp = vc.metadata.creationTimestamp;
  const time = stamp === undefined ? NaN : Date.parse(stamp);
  return Number.isNaN(time) ? Number.POSITIVE_INFINITY : time;
}

/**
 * The older VirtualClusters of the same namespace that keep it, oldest first (empty when this
 * one is the oldest). One being deleted is left out: it still occupies the namespace (the
 * feasibility evaluation's NamespaceAvailable check says so, and this one waits Pending), but
 * it is going away, so it does not make this one Failed.
 */
export function olderNeighbours(
  vc: VirtualCluster,
  observation: VirtualClusterObservation,
): VirtualCluster[] {
  return (observation.virtualClusters ?? [])
    .filter((other) => other.metadata.namespace === vc.metadata.namespace)
    .filter((other) => other.metadata.deletionTimestamp === undefined)
    .filter((other) => isOlder(other, vc))
    .sort((a, b) => (isOlder(a, b) ? -1 : isOlder(b, a) ? 1 : 0));
}

/**
 * The feasibility input for this VirtualCluster. Newer VirtualClusters of the same namespace
 * that have not resolved are left out: the oldest keeps the namespace, so they must not block
 * it (they go Failed themselves). A resolved one is kept: its children occupy the namespace.
 */
export function feasibilityInput(
  vc: VirtualCluster,
  observation: VirtualClusterObservation,
  config: VirtualClusterConfig,
  now: Date,
): FeasibilityInput {
  const others = (observation.virtualClusters ?? []).filter(
    (other) =>
      other.metadata.namespace !== vc.metadata.namespace ||
      isOlder(other, vc) ||
      other.status?.resolved !== undefined,
  );
  return {
    cellName: observation.cellName,
    cell: observation.cell,
    className: observation.className,
    virtualNodeClass: observation.virtualNodeClass,
    namespace: observation.namespace,
    ...(observation.hostNamespace === undefined
      ? {}
      : { namespaceLabels: observation.hostNamespace.metadata.labels ?? {} }),
    virtualClusters: others,
    nodePortRange: config.nodePortRange,
    inventoryMaxAgeSeconds: config.inventoryMaxAgeSeconds,
    now,
  };
}

export interface EndpointChoice {
  address: string;
  node: string;
}

/**
 * The endpoint address rule, applied once, at resolution:
 *
 * 1. candidates: the Cell's `status.nodeAddresses`, the InternalIP of each Ready, schedulable
 *    (not `spec.unschedulable`) Node of its profile, as the Cell controller publishes them (at
 *    most 16, the first by Node name); an entry whose address is not an IP address or DNS-1123
 *    hostname (isEndpointAddress, stricter than the Cell's schema: a status written around the
 *    Cell controller), is skipped;
 * 2. sorted by Node name (code-unit order);
 * 3. the one at index `sha256(<VirtualCluster UID>) mod <number of candidates>` (the first
 *    8 bytes of the digest as an unsigned integer).
 *
 * The same inputs always give the same address, and VirtualClusters spread over the profile's
 * Nodes instead of all pointing at one. kube-proxy opens a NodePort on every Node, so any of
 * them serves; the address is then fixed in `status.resolved.endpointAddress`. With at most 16
 * such Nodes the choice is the one the rule made when it read the Nodes themselves.
 */
export function chooseEndpoint(
  addresses: readonly CellNodeAddress[] | undefined,
  uid: string,
): EndpointChoice | undefined {
  const candidates = (addresses ?? [])
    .filter((entry) => isEndpointAddress(entry.address))
    .map(({ node, address }) => ({ node, address }))
    .sort((a, b) => compareStrings(a.node, b.node));
  if (candidates.length === 0) return undefined;
  const digest = createHash('sha256').update(uid).digest();
  const index = Number(digest.readBigUInt64BE(0) % BigInt(candidates.length));
  return candidates[index];
}

/** The snapshot written when the placement is accepted (field names are API, see DESIGN). */
export function snapshot(
  vc: VirtualCluster,
  cell: Cell,
  cls: VirtualNodeClass,
  endpointAddress: string,
  now: Date,
): ResolvedPlacement {
  const profile = cell.spec.machineProfile;
  return {
    cell: {
      name: cell.metadata.name,
      uid: cell.metadata.uid ?? '',
      managedClusterName: cell.spec.managedClusterRef.name,
      ...deliveryField(cell),
      machineProfile: {
        name: profile.name,
        ...(profile.devices === undefined
          ? {}
          : {
              devices: profile.devices.map((device) => ({
                name: device.name,
                resourceName: device.resourceName,
              })),
            }),
      },
    },
    class: {
      name: cls.metadata.name,
      uid: cls.metadata.uid ?? '',
      storageClassName: cls.spec.storageClassName,
      entitlement: { workloadHard: sortedRecord(cls.spec.entitlement.workloadHard) },
    },
    hostNamespace: vc.metadata.namespace ?? '',
    endpointAddress,
    resolvedAt: formatTime(now),
  };
}

/**
 * The Cell's `spec.delivery`, copied as the Cell has it (the apiserver defaults it to Local);
 * nothing when absent (absent means Local), so a Cell without the field gives the snapshot it
 * gave before the field existed.
 */
function deliveryField(cell: Cell): Pick<ResolvedPlacement['cell'], 'delivery'> {
  const { delivery } = cell.spec;
  return delivery === undefined ? {} : { delivery };
}

function sortedRecord<V>(record: Record<string, V | undefined>): Record<string, V> {
  const sorted: Record<string, V> = {};
  for (const key of Object.keys(record).sort(compareStrings)) {
    const value = record[key];
    if (value !== undefined) sorted[key] = value;
  }
  return sorted;
}
