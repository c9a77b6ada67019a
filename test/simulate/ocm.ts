// SIMULATED Open Cluster Management: what OCM's registration agent (on the managed cluster) and
// the hub's registration controllers would write for one ManagedCluster, so that a Cell bound to
// it can be Joined, Available and live. Nothing here is KubeCell: the Cell controller only reads
// these objects (hooks/cell/liveness.ts, hooks/cell/customize.ts).
//
// - ManagedCluster `cluster.open-cluster-management.io/v1` (cluster-scoped): created by the agent
//   with spec.leaseDurationSeconds; spec.hubAcceptsClient set by the hub administrator
//   (`clusteradm accept`); status conditions HubAcceptedManagedCluster (hub),
//   ManagedClusterJoined and ManagedClusterConditionAvailable (agent / hub lease controller),
//   capacity, allocatable and version.
// - The namespace named after the cluster (the hub creates it on acceptance).
// - Lease `coordination.k8s.io/v1` `managed-cluster-lease` in that namespace, renewed by the agent
//   (spec.renewTime, MicroTime). The Cell trusts only this lease for liveness.
import { KubeClient, isNotFound, resourcePath, type KubeObject } from './kube-client.js';
import {
  Poller,
  formatMicroTime,
  setConditions,
  silent,
  waitFor,
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
  /** ManagedClusterConditionAvailable=True; default true. */
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
    conditions.push(
      state.available && state.joined
        ? {
            type: 'ManagedClusterConditionAvailable',
            status: 'True',
            reason: 'ManagedClusterAvailable',
            message: 'Managed cluster is available',
          }
        : {
            type: 'ManagedClusterConditionAvailable',
            status: 'Unknown',
            reason: 'ManagedClusterLeaseUpdateStopped',
            message: 'Registration agent stopped updating its lease.',
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
 * A time in the past makes a stale lease (5 lease durations back and the Cell is Degraded).
 */
export async function renewLease(
  client: KubeClient,
  clusterName: string,
  at: Date = new Date(),
  options: { leaseDurationSeconds?: number } = {},
): Promise<KubeObject> {
  return client.apply(
    renderLease(clusterName, at, options.leaseDurationSeconds),
    OCM_AGENT_FIELD_MANAGER,
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
    await waitFor(
      `ManagedCluster ${name} to be gone`,
      async () => ((await client.find(path)) ? undefined : true),
      { timeoutMs: options.timeoutMs ?? 30_000 },
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
