// SIMULATED Open Cluster Management: what OCM's registration agent (on the managed cluster) and
// the hub's registration controllers would write for one ManagedCluster, so that a Cell bound to
// it can be Joined, Available and live. Nothing here is KubeCell: the Cell controller only reads
// the ManagedCluster (hooks/cell/liveness.ts, hooks/cell/customize.ts).
//
// - ManagedCluster `cluster.open-cluster-management.io/v1` (cluster-scoped): created by the agent
//   with spec.leaseDurationSeconds; spec.hubAcceptsClient set by the hub administrator
//   (`clusteradm accept`); status conditions HubAcceptedManagedCluster (hub),
//   ManagedClusterJoined and ManagedClusterConditionAvailable (agent), capacity, allocatable and
//   version.
// - The namespace named after the cluster (the hub creates it on acceptance).
// - Lease `coordination.k8s.io/v1` `managed-cluster-lease` in that namespace, renewed by the agent
//   (spec.renewTime, MicroTime). When the agent renews while Available is Unknown, it reports
//   Available=True again (the agent's status sync does that in OCM).
// - The hub's lease controller (HubLeaseController, OCM v1.3.1
//   pkg/registration/hub/lease/controller.go): once a lease is not renewed for
//   5 × spec.leaseDurationSeconds (5 × 60 s when unset), it sets ManagedClusterConditionAvailable
//   to Unknown, reason ManagedClusterLeaseUpdateStopped, unless it already is Unknown; it creates
//   the lease of an accepted cluster that has none. It can be told to ignore chosen clusters
//   (`ignored`), as a hub whose registration controller is down for them. The Cell judges the
//   Lease itself and counts that condition as well (hooks/cell/liveness.ts).
import { poll } from '../poll.js';
import {
  KubeClient,
  isConflict,
  isNotFound,
  resourcePath,
  type KubeObject,
} from './kube-client.js';
import {
  Poller,
  PollingActor,
  formatMicroTime,
  setConditions,
  silent,
  type Condition,
  type DesiredCondition,
  type Log,
} from './support.js';

export const OCM_AGENT_FIELD_MANAGER = 'simulated-ocm-agent';
export const OCM_HUB_FIELD_MANAGER = 'simulated-ocm-hub';
export const MANAGED_CLUSTER_LEASE = 'managed-cluster-lease';
export const MANAGED_CLUSTER_API_VERSION = 'cluster.open-cluster-management.io/v1';
/** OCM's default when spec.leaseDurationSeconds is unset. */
export const DEFAULT_LEASE_DURATION_SECONDS = 60;
/** The hub judges a lease stale after this many lease durations (OCM's `leaseDurationTimes`). */
export const LEASE_DURATION_TIMES = 5;
export const AVAILABLE_CONDITION = 'ManagedClusterConditionAvailable';
export const HUB_ACCEPTED_CONDITION = 'HubAcceptedManagedCluster';
/** The label OCM puts on a cluster's objects in its namespace (clusterv1.ClusterNameLabelKey). */
export const CLUSTER_NAME_LABEL = 'open-cluster-management.io/cluster-name';

/** What OCM's hub lease controller writes once the lease is not renewed (updateClusterStatus). */
export const LEASE_UPDATE_STOPPED: DesiredCondition = Object.freeze({
  type: AVAILABLE_CONDITION,
  status: 'Unknown',
  reason: 'ManagedClusterLeaseUpdateStopped',
  message: 'Registration agent stopped updating its lease.',
});

/** What the agent's status sync reports for a healthy managed cluster. */
export const MANAGED_CLUSTER_AVAILABLE: DesiredCondition = Object.freeze({
  type: AVAILABLE_CONDITION,
  status: 'True',
  reason: 'ManagedClusterAvailable',
  message: 'Managed cluster is available',
});

export function managedClusterPath(name: string): string {
  return resourcePath({
    apiVersion: MANAGED_CLUSTER_API_VERSION,
    resource: 'managedclusters',
    name,
  });
}

export function leasePath(clusterName: string): string {
  return resourcePath({
    apiVersion: 'coordination.k8s.io/v1',
    resource: 'leases',
    namespace: clusterName,
    name: MANAGED_CLUSTER_LEASE,
  });
}

export interface ManagedClusterObject extends KubeObject {
  spec?: { hubAcceptsClient?: boolean; leaseDurationSeconds?: number };
  status?: {
    conditions?: Condition[];
    capacity?: Record<string, string>;
    allocatable?: Record<string, string>;
    version?: { kubernetes?: string };
  };
}

export interface JoinOptions {
  /** spec.leaseDurationSeconds; default 60 (OCM's default). */
  leaseDurationSeconds?: number;
  /** The hub accepts the cluster (spec.hubAcceptsClient); default true. */
  accept?: boolean;
  /** The agent reports ManagedClusterJoined=True (only once accepted); default true. */
  joined?: boolean;
  /** The agent reports ManagedClusterConditionAvailable=True (False when false); default true. */
  available?: boolean;
  /** Renew the lease as part of joining; default true. */
  renewLease?: boolean;
  /** status.capacity / status.allocatable (the sum of the managed cluster's Nodes). */
  capacity?: Record<string, string>;
  allocatable?: Record<string, string>;
  /** status.version.kubernetes; default v1.35.4. */
  kubernetesVersion?: string;
  /** The clock; default now. */
  now?: Date;
}

const DEFAULT_CAPACITY = { cpu: '128', memory: '1Ti', pods: '220' };

/** The status conditions OCM reports for a cluster in the given state (pure). */
export function managedClusterConditions(state: {
  accepted: boolean;
  joined: boolean;
  available: boolean;
}): DesiredCondition[] {
  const conditions: DesiredCondition[] = [
    state.accepted
      ? {
          type: 'HubAcceptedManagedCluster',
          status: 'True',
          reason: 'HubClusterAdminAccepted',
          message: 'Accepted by hub cluster admin',
        }
      : {
          type: 'HubAcceptedManagedCluster',
          status: 'False',
          reason: 'HubClusterAdminDenied',
          message: 'Denied by hub cluster admin',
        },
  ];
  if (state.accepted) {
    conditions.push(
      state.joined
        ? {
            type: 'ManagedClusterJoined',
            status: 'True',
            reason: 'ManagedClusterJoined',
            message: 'Managed cluster joined',
          }
        : {
            type: 'ManagedClusterJoined',
            status: 'False',
            reason: 'ManagedClusterNotJoined',
            message: 'Managed cluster has not joined yet',
          },
    );
  }
  // The agent reports Available once joined: True when the managed cluster's kube-apiserver is
  // healthy. Unknown is the hub's verdict on a stale lease (HubLeaseController), not the agent's.
  if (state.accepted && state.joined) {
    conditions.push(
      state.available
        ? MANAGED_CLUSTER_AVAILABLE
        : {
            type: AVAILABLE_CONDITION,
            status: 'False',
            reason: 'ManagedClusterKubeAPIServerUnavailable',
            message: 'The kube-apiserver of the managed cluster is not ok',
          },
    );
  }
  return conditions;
}

async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  await client.apply(
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
    OCM_HUB_FIELD_MANAGER,
  );
}

/**
 * Registers a ManagedCluster the way a klusterlet joins a hub that accepts it: the
 * ManagedCluster, its namespace, its status and (by default) a freshly renewed lease. Idempotent:
 * joining again re-asserts the same state. Returns the ManagedCluster as stored.
 */
export async function joinManagedCluster(
  client: KubeClient,
  name: string,
  options: JoinOptions = {},
): Promise<ManagedClusterObject> {
  const now = options.now ?? new Date();
  const accepted = options.accept ?? true;
  const leaseDurationSeconds = options.leaseDurationSeconds ?? DEFAULT_LEASE_DURATION_SECONDS;
  // The agent creates the ManagedCluster; the hub administrator accepts it.
  await client.apply(
    {
      apiVersion: MANAGED_CLUSTER_API_VERSION,
      kind: 'ManagedCluster',
      metadata: { name },
      spec: { leaseDurationSeconds },
    },
    OCM_AGENT_FIELD_MANAGER,
  );
  await client.apply(
    {
      apiVersion: MANAGED_CLUSTER_API_VERSION,
      kind: 'ManagedCluster',
      metadata: { name },
      spec: { hubAcceptsClient: accepted },
    },
    OCM_HUB_FIELD_MANAGER,
  );
  if (accepted) await ensureNamespace(client, name);
  const stored = await setManagedClusterStatus(client, name, {
    accepted,
    joined: options.joined ?? true,
    available: options.available ?? true,
    capacity: options.capacity ?? DEFAULT_CAPACITY,
    allocatable: options.allocatable ?? options.capacity ?? DEFAULT_CAPACITY,
    kubernetesVersion: options.kubernetesVersion ?? 'v1.35.4',
    now,
  });
  if (accepted && (options.renewLease ?? true)) {
    await renewLease(client, name, now, { leaseDurationSeconds });
  }
  return stored;
}

export interface ManagedClusterState {
  accepted: boolean;
  joined: boolean;
  available: boolean;
  capacity?: Record<string, string>;
  allocatable?: Record<string, string>;
  kubernetesVersion?: string;
  now?: Date;
}

/**
 * Writes the ManagedCluster's status conditions (and capacity) for a state, keeping the
 * lastTransitionTime of conditions whose status does not change.
 */
export async function setManagedClusterStatus(
  client: KubeClient,
  name: string,
  state: ManagedClusterState,
): Promise<ManagedClusterObject> {
  const path = managedClusterPath(name);
  const current = await client.get<ManagedClusterObject>(path);
  const conditions = setConditions(
    current.status?.conditions,
    managedClusterConditions(state),
    state.now ?? new Date(),
  ).filter((condition) => state.accepted || condition.type === 'HubAcceptedManagedCluster');
  return client.patchStatus<ManagedClusterObject>(
    path,
    {
      status: {
        conditions,
        ...(state.capacity ? { capacity: state.capacity } : {}),
        ...(state.allocatable ? { allocatable: state.allocatable } : {}),
        ...(state.kubernetesVersion ? { version: { kubernetes: state.kubernetesVersion } } : {}),
      },
    },
    OCM_AGENT_FIELD_MANAGER,
  );
}

/** The Lease the agent renews (pure). */
export function renderLease(
  clusterName: string,
  renewTime: Date,
  leaseDurationSeconds = DEFAULT_LEASE_DURATION_SECONDS,
): KubeObject {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: MANAGED_CLUSTER_LEASE, namespace: clusterName },
    spec: { leaseDurationSeconds, renewTime: formatMicroTime(renewTime) },
  };
}

/**
 * Renews `managed-cluster-lease` in the cluster's namespace: renewTime = `at` (default now).
 * A time in the past makes a stale lease (5 lease durations back, and OCM's hub marks the
 * ManagedCluster's Available Unknown). When the renewal is fresh and the hub had marked
 * Available Unknown, the agent's status sync reports it True again (`agentStatusSync`).
 */
export async function renewLease(
  client: KubeClient,
  clusterName: string,
  at: Date = new Date(),
  options: { leaseDurationSeconds?: number } = {},
): Promise<KubeObject> {
  const lease = await client.apply(
    renderLease(clusterName, at, options.leaseDurationSeconds),
    OCM_AGENT_FIELD_MANAGER,
  );
  await agentStatusSync(client, clusterName, at);
  return lease;
}

function findCondition(
  cluster: ManagedClusterObject | undefined,
  type: string,
): Condition | undefined {
  return cluster?.status?.conditions?.find((condition) => condition.type === type);
}

/** OCM's grace period for a cluster's lease: 5 × spec.leaseDurationSeconds (60 s when unset or 0). */
export function leaseGraceSeconds(cluster: ManagedClusterObject | undefined): number {
  const duration = cluster?.spec?.leaseDurationSeconds;
  return LEASE_DURATION_TIMES * (duration ? duration : DEFAULT_LEASE_DURATION_SECONDS);
}

/** The lease's spec.renewTime; undefined when it has none or it does not parse. */
export function leaseRenewTime(lease: KubeObject | undefined): Date | undefined {
  const text = (lease?.['spec'] as { renewTime?: string } | undefined)?.renewTime;
  const millis = text ? Date.parse(text) : NaN;
  return Number.isNaN(millis) ? undefined : new Date(millis);
}

/** OCM's `leaseExpired := !now.Before(renewTime.Add(gracePeriod))` (pure). */
export function leaseExpired(
  renewTime: Date | undefined,
  graceSeconds: number,
  now: Date,
): boolean {
  if (!renewTime) return true;
  return now.getTime() >= renewTime.getTime() + graceSeconds * 1000;
}

/**
 * Whether the agent, having renewed its lease at `renewTime`, reports Available=True again: the
 * cluster is joined, the hub had marked Available Unknown, and the renewal is fresh by the hub's
 * own rule (a renewal back-dated past the grace period changes nothing). Pure.
 */
export function agentRestoresAvailable(
  cluster: ManagedClusterObject | undefined,
  renewTime: Date,
  now: Date,
): boolean {
  if (findCondition(cluster, 'ManagedClusterJoined')?.status !== 'True') return false;
  if (findCondition(cluster, AVAILABLE_CONDITION)?.status !== 'Unknown') return false;
  return !leaseExpired(renewTime, leaseGraceSeconds(cluster), now);
}

/**
 * Writes conditions on a ManagedCluster as read (`meta.SetStatusCondition` on that copy), with
 * its resourceVersion as a precondition, as OCM's patcher does: a concurrent writer makes this
 * one fail with a conflict instead of being overwritten. False on a conflict or when it is gone.
 */
async function patchConditions(
  client: KubeClient,
  cluster: ManagedClusterObject,
  desired: readonly DesiredCondition[],
  fieldManager: string,
  now: Date,
): Promise<boolean> {
  try {
    await client.patchStatus(
      managedClusterPath(cluster.metadata.name ?? ''),
      {
        metadata: { resourceVersion: cluster.metadata.resourceVersion },
        status: { conditions: setConditions(cluster.status?.conditions, desired, now) },
      },
      fieldManager,
    );
    return true;
  } catch (error) {
    if (isConflict(error) || isNotFound(error)) return false;
    throw error;
  }
}

/**
 * The agent's status sync after a renewal: Available=True again once the hub had marked it
 * Unknown (agentRestoresAvailable). True when it wrote. Nothing happens without a ManagedCluster.
 */
export async function agentStatusSync(
  client: KubeClient,
  clusterName: string,
  renewedAt: Date,
  now: Date = new Date(),
): Promise<boolean> {
  const cluster = await client.find<ManagedClusterObject>(managedClusterPath(clusterName));
  if (!cluster || !agentRestoresAvailable(cluster, renewedAt, now)) return false;
  return patchConditions(
    client,
    cluster,
    [MANAGED_CLUSTER_AVAILABLE],
    OCM_AGENT_FIELD_MANAGER,
    now,
  );
}

/**
 * The managed cluster is re-registered from scratch (a reinstalled cluster under the same name):
 * the ManagedCluster is deleted and, once gone, joined again, so it has a new UID. The Cell
 * notices the new UID and turns Failed (ManagedClusterReplaced).
 */
export async function replaceManagedCluster(
  client: KubeClient,
  name: string,
  options: JoinOptions & { timeoutMs?: number } = {},
): Promise<{ oldUid?: string; newUid?: string; managedCluster: ManagedClusterObject }> {
  const path = managedClusterPath(name);
  const old = await client.find<ManagedClusterObject>(path);
  if (old) {
    await client.delete(path);
    await poll(
      `ManagedCluster ${name} to be gone`,
      async () => ((await client.find(path)) ? { notYet: 'still there' } : { value: true }),
      { timeoutMs: options.timeoutMs ?? 30_000, intervalMs: 100 },
    );
  }
  const managedCluster = await joinManagedCluster(client, name, options);
  return {
    ...(old?.metadata.uid ? { oldUid: old.metadata.uid } : {}),
    ...(managedCluster.metadata.uid ? { newUid: managedCluster.metadata.uid } : {}),
    managedCluster,
  };
}

/** Removes a ManagedCluster (a detached cluster); its namespace and lease stay, as on a hub. */
export async function removeManagedCluster(client: KubeClient, name: string): Promise<boolean> {
  return client.delete(managedClusterPath(name));
}

export interface LeaseRenewerOptions {
  /** How often each lease is renewed; default 60 s, OCM's default lease duration. */
  intervalMs?: number;
  /** spec.leaseDurationSeconds written on the lease; default 60. */
  leaseDurationSeconds?: number;
  log?: Log;
}

/**
 * The registration agents' lease loop for a set of clusters: renews every lease at once on
 * start, then every `intervalMs`. Clusters can be added and removed while it runs; a removed
 * cluster's lease simply stops being renewed (it goes stale, as when an agent dies).
 */
export class LeaseRenewer {
  private readonly clusters = new Set<string>();
  private readonly poller: Poller;
  /** When each cluster's lease was last renewed by this loop. */
  readonly renewedAt = new Map<string, Date>();

  constructor(
    private readonly client: KubeClient,
    clusters: Iterable<string> = [],
    private readonly options: LeaseRenewerOptions = {},
  ) {
    for (const name of clusters) this.clusters.add(name);
    this.poller = new Poller(
      'lease renewer',
      options.intervalMs ?? DEFAULT_LEASE_DURATION_SECONDS * 1000,
      () => this.renewAll(),
      options.log ?? silent,
    );
  }

  get names(): string[] {
    return [...this.clusters].sort();
  }

  /** Adds a cluster; when the loop runs, its lease is renewed right away. */
  async add(name: string): Promise<void> {
    if (this.clusters.has(name)) return;
    this.clusters.add(name);
    if (!this.poller.active) return;
    try {
      await this.renew(name);
    } catch (error) {
      // Its namespace does not exist yet (not accepted): the loop tries again.
      if (!isNotFound(error)) throw error;
    }
  }

  remove(name: string): void {
    this.clusters.delete(name);
  }

  start(): void {
    this.poller.start();
  }

  stop(): Promise<void> {
    return this.poller.stop();
  }

  /** Renews every lease now. */
  renewNow(): Promise<void> {
    return this.poller.runOnce();
  }

  private async renewAll(): Promise<void> {
    const failures: string[] = [];
    for (const name of this.names) {
      try {
        await this.renew(name);
      } catch (error) {
        // No namespace yet (not accepted), or a transient failure: try again next round.
        if (!isNotFound(error)) failures.push(`${name}: ${(error as Error).message}`);
      }
    }
    if (failures.length > 0) throw new Error(`lease renewal failed: ${failures.join('; ')}`);
  }

  private async renew(name: string): Promise<void> {
    const now = new Date();
    await renewLease(this.client, name, now, {
      leaseDurationSeconds: this.options.leaseDurationSeconds ?? DEFAULT_LEASE_DURATION_SECONDS,
    });
    this.renewedAt.set(name, now);
  }
}

/** What OCM's hub lease controller does for one ManagedCluster on one sync (pure). */
export type HubLeaseAction =
  /** Never accepted (no HubAcceptedManagedCluster condition): skipped. */
  | 'skip'
  /** An accepted cluster without a lease: the hub creates it, renewed now. */
  | 'createLease'
  /** The lease expired (or is gone while the cluster is deleted): Available=Unknown. */
  | 'markUnknown'
  /** The lease is fresh, or Available already is Unknown. */
  | 'none';

/** OCM v1.3.1 pkg/registration/hub/lease/controller.go `sync` and `updateClusterStatus`. */
export function hubLeaseAction(
  cluster: ManagedClusterObject,
  lease: KubeObject | undefined,
  now: Date,
): HubLeaseAction {
  if (!findCondition(cluster, HUB_ACCEPTED_CONDITION)) return 'skip';
  const alreadyUnknown = findCondition(cluster, AVAILABLE_CONDITION)?.status === 'Unknown';
  if (!lease) {
    if (!cluster.metadata.deletionTimestamp) return 'createLease';
    return alreadyUnknown ? 'none' : 'markUnknown';
  }
  if (!leaseExpired(leaseRenewTime(lease), leaseGraceSeconds(cluster), now)) return 'none';
  return alreadyUnknown ? 'none' : 'markUnknown';
}

/** The lease the hub creates for an accepted cluster that has none (pure). */
export function renderHubLease(clusterName: string, now: Date): KubeObject {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: MANAGED_CLUSTER_LEASE,
      namespace: clusterName,
      labels: { [CLUSTER_NAME_LABEL]: clusterName },
    },
    spec: { holderIdentity: MANAGED_CLUSTER_LEASE, renewTime: formatMicroTime(now) },
  };
}

export interface HubLeaseControllerOptions {
  /** How often every ManagedCluster's lease is looked at; default 1 s. */
  intervalMs?: number;
  /** Only these clusters (default: every ManagedCluster, as the hub does). */
  filter?: (clusterName: string) => boolean;
  log?: Log;
}

const LEASES_PATH = resourcePath({ apiVersion: 'coordination.k8s.io/v1', resource: 'leases' });
const MANAGED_CLUSTERS_PATH = resourcePath({
  apiVersion: MANAGED_CLUSTER_API_VERSION,
  resource: 'managedclusters',
});

/**
 * OCM's hub lease controller: every `intervalMs` (OCM requeues each cluster exactly at its
 * lease's expiry; a 1 s poll is at most a second later), for every accepted ManagedCluster,
 * marks Available Unknown (reason ManagedClusterLeaseUpdateStopped, message "Registration agent
 * stopped updating its lease.") once its lease was not renewed for 5 × spec.leaseDurationSeconds,
 * unless Available already is Unknown, and creates the lease of a cluster that has none. Setting
 * Available back is the agent's business (renewLease). Several hubs on one apiserver are
 * harmless: each write carries the resourceVersion it read.
 */
export class HubLeaseController extends PollingActor<HubLeaseControllerOptions> {
  /** When this controller marked each cluster's Available Unknown, last. */
  readonly markedUnknown = new Map<string, Date>();
  /**
   * Clusters this hub does not judge, changeable while it runs: a hub whose registration
   * controller is down (or stuck) for these clusters, so their Available stays as the agent last
   * wrote it however stale their leases get.
   */
  readonly ignored = new Set<string>();

  constructor(client: KubeClient, options: HubLeaseControllerOptions = {}) {
    super(client, options, 'OCM hub lease controller', 1000);
  }

  async pollOnce(): Promise<void> {
    let clusters: ManagedClusterObject[];
    try {
      clusters = await this.client.list<ManagedClusterObject>(MANAGED_CLUSTERS_PATH);
    } catch (error) {
      if (isNotFound(error)) return; // OCM's CRDs are not installed
      throw error;
    }
    const wanted = clusters.filter((cluster) => {
      const name = cluster.metadata.name ?? '';
      return !this.ignored.has(name) && (this.options.filter?.(name) ?? true);
    });
    if (wanted.length === 0) return;
    const leases = await this.client.list(LEASES_PATH, {
      fieldSelector: `metadata.name=${MANAGED_CLUSTER_LEASE}`,
    });
    const leaseOf = new Map(leases.map((lease) => [lease.metadata.namespace ?? '', lease]));
    for (const cluster of wanted) {
      await this.syncCluster(cluster, leaseOf.get(cluster.metadata.name ?? ''));
    }
  }

  private async syncCluster(
    cluster: ManagedClusterObject,
    lease: KubeObject | undefined,
  ): Promise<void> {
    const name = cluster.metadata.name ?? '';
    const now = new Date();
    switch (hubLeaseAction(cluster, lease, now)) {
      case 'createLease':
        try {
          await this.client.create(
            resourcePath({
              apiVersion: 'coordination.k8s.io/v1',
              resource: 'leases',
              namespace: name,
            }),
            renderHubLease(name, now),
            OCM_HUB_FIELD_MANAGER,
          );
        } catch (error) {
          // No namespace yet, or the agent was first: the next round looks again.
          if (!isNotFound(error) && !isConflict(error)) throw error;
        }
        return;
      case 'markUnknown':
        if (
          await patchConditions(
            this.client,
            cluster,
            [LEASE_UPDATE_STOPPED],
            OCM_HUB_FIELD_MANAGER,
            now,
          )
        ) {
          this.markedUnknown.set(name, now);
          this.options.log?.(
            `ocm hub: ManagedCluster ${name}: lease not renewed, Available=Unknown`,
          );
        }
        return;
      default:
        return;
    }
  }
}
