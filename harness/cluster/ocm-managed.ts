// A real managed cluster joined to a real OCM hub (ocm-hub.ts): a second local control plane
// (etcd, kube-apiserver, kube-controller-manager, as control-plane.ts starts them) with the
// archive's klusterlet-side CRDs (manifests/klusterlet/managed/), and OCM's `registration agent`
// and `work agent` running as processes beside it, as the klusterlet's Deployments would.
//
// The join follows OCM's own integration tests (test/integration/registration/
// managedcluster_lease_test.go bootstrapManagedCluster, test/integration/util/managedcluster.go
// AcceptManagedClusterWithLeaseDuration): the agent bootstraps with the bootstrap kubeconfig and
// creates its ManagedCluster and CSR; the hub administrator sets spec.hubAcceptsClient = true and
// spec.leaseDurationSeconds; the CSR is approved (here by the hub's registration controller,
// --auto-approved-csr-users) and signed (here by the hub's kube-controller-manager); the agent
// writes the hub kubeconfig Secret and its files (pkg/registration/spoke/spokeagent.go), and the
// work agent connects to the hub with them.
//
// The hub learns nothing of this cluster's apiserver: no --spoke-external-server-urls, so the
// ManagedCluster carries no client config, and the hub holds no credential of this cluster.
import { existsSync } from 'node:fs';
import { startControlPlane, type ControlPlane, type ControlPlaneOptions } from './control-plane.js';
import { installCrds } from './crds.js';
import { kubectlOk } from './kubecell.js';
import { agentLauncher, OCM_AGENT_NAMESPACE } from './ocm-agents.js';
import { ocmManagedClusterCrdFiles, type OcmHub } from './ocm-hub.js';
import { poll, type PollOutcome } from '../poll.js';
import { whileRunning, type ManagedProcess } from './processes.js';

export { HUB_KUBECONFIG_SECRET, OCM_AGENT_NAMESPACE } from './ocm-agents.js';
export const DEFAULT_MANAGED_CLUSTER_NAME = 'cell-remote';

export interface OcmManagedClusterOptions {
  /** The ManagedCluster's name; default `cell-remote`. */
  name?: string;
  /**
   * spec.leaseDurationSeconds set on acceptance: the agent renews the lease that often and the
   * hub turns Available Unknown after 5 × this without a renewal (OCM
   * pkg/registration/hub/lease/controller.go). Default 2 (OCM's default is 60).
   */
  leaseDurationSeconds?: number;
  /** The work agent's --status-sync-interval (conditions, feedback); default 2 s (OCM: 10 s). */
  statusSyncIntervalSeconds?: number;
  /**
   * The registration agent's --cluster-healthcheck-period: how often it reports the cluster's
   * status (Available, capacity); default 10 s (OCM: 1 min).
   */
  clusterHealthCheckPeriodSeconds?: number;
  /** The work agent's --feature-gates (e.g. `RawFeedbackJsonString=true`); default none. */
  workAgentFeatureGates?: string;
  /**
   * Further CRD files to install on the managed cluster before the agents start (e.g. k3k's
   * Cluster CRD from crds.ts upstreamCrdFiles(), for works that carry a k3k Cluster).
   */
  extraCrdFiles?: readonly string[];
  /** Options of the managed cluster's control plane. */
  controlPlane?: Omit<ControlPlaneOptions, 'metacontroller' | 'binaries' | 'log'>;
  /** How long the join may take; default 120 s. */
  joinTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface OcmAgents {
  registration: ManagedProcess;
  work: ManagedProcess;
}

export interface OcmManagedCluster {
  /** The ManagedCluster's name on the hub (and the hub namespace of its ManifestWorks). */
  name: string;
  /** The managed cluster's own control plane: `cluster.kubectl` / `kubeconfigPath` are its admin. */
  cluster: ControlPlane;
  hub: OcmHub;
  leaseDurationSeconds: number;
  /** The running agents; undefined while stopped. */
  agents(): OcmAgents | undefined;
  /** Stops both agents (the lease is no longer renewed; applied work stays as it is). */
  stopAgents(): Promise<void>;
  /**
   * Starts both agents again with the hub kubeconfig they got on joining (no new bootstrap);
   * resolves once the work agent serves and the registration agent has renewed the lease.
   */
  startAgents(): Promise<void>;
  /** Seconds the managed control plane took to start. */
  controlPlaneSeconds: number;
  /** Seconds from the first agent start until Joined and Available. */
  joinSeconds: number;
  /** True when an agent exited on its own. */
  crashed(): boolean;
  /** Stops the agents and the managed control plane (logs kept on request or after a crash). */
  stop(options?: { keepLogs?: boolean }): Promise<void>;
}

interface ManagedClusterJson {
  spec?: { hubAcceptsClient?: boolean; leaseDurationSeconds?: number };
  status?: { conditions?: { type: string; status: string; reason?: string }[] };
}

/** The status of one condition of the hub's ManagedCluster `name`, or why it cannot be read. */
export async function managedClusterCondition(
  hub: ControlPlane,
  name: string,
  type: string,
): Promise<{ status: string; reason?: string } | string> {
  const result = await hub.kubectl([
    'get',
    'managedclusters.cluster.open-cluster-management.io',
    name,
    '-o',
    'json',
  ]);
  if (result.code !== 0) return result.stderr.trim();
  const cluster = JSON.parse(result.stdout) as ManagedClusterJson;
  const condition = cluster.status?.conditions?.find((candidate) => candidate.type === type);
  return condition ?? `no ${type} condition yet`;
}

async function untilCondition(
  hub: ControlPlane,
  name: string,
  type: string,
  status: string,
  timeoutMs: number,
  watched?: ManagedProcess,
): Promise<void> {
  await poll(
    `ManagedCluster ${name} ${type}=${status}`,
    async () => {
      const condition = await managedClusterCondition(hub, name, type);
      if (typeof condition === 'string') return { notYet: condition };
      return condition.status === status
        ? { value: undefined }
        : { notYet: `${condition.status} (${condition.reason ?? ''})` };
    },
    { timeoutMs, intervalMs: 500, ...(watched ? whileRunning(watched) : {}) },
  );
}

/**
 * Starts a managed control plane and joins it to `hub` as `options.name` (default
 * `cell-remote`); resolves once the ManagedCluster is Joined and Available on the hub.
 */
export async function startOcmManagedCluster(
  hub: OcmHub,
  options: OcmManagedClusterOptions = {},
): Promise<OcmManagedCluster> {
  const name = options.name ?? DEFAULT_MANAGED_CLUSTER_NAME;
  const log =
    options.log ?? ((line: string) => process.stderr.write(`[ocm-managed ${name}] ${line}\n`));
  const leaseDurationSeconds = options.leaseDurationSeconds ?? 2;
  const joinTimeoutMs = options.joinTimeoutMs ?? 120_000;
  const cluster = await startControlPlane({
    ...options.controlPlane,
    binaries: hub.cluster.binaries,
    log: (line) => log(`control plane: ${line}`),
  });
  // The running agents; the work agent starts once the registration agent has joined.
  let running: ManagedProcess[] = [];
  let stopping = false;
  const stopAgents = async (): Promise<void> => {
    const agents = running;
    running = [];
    await Promise.all([...agents].reverse().map((agent) => agent.stop()));
  };
  const crashed = (): boolean =>
    !stopping && running.some((agent) => agent.exitStatus() !== undefined);
  const agents = (): OcmAgents | undefined => {
    const [registration, work] = running;
    return registration && work ? { registration, work } : undefined;
  };
  try {
    await installCrds(cluster.kubectl, [
      ...ocmManagedClusterCrdFiles(hub.binaries.ocmSourceDir),
      ...(options.extraCrdFiles ?? []),
    ]);
    await kubectlOk(cluster, ['create', 'namespace', OCM_AGENT_NAMESPACE]);
    const launcher = await agentLauncher(hub, cluster, name, options);
    const joinStarted = performance.now();
    const registration = await launcher.registration();
    running = [registration];
    await acceptOnHub(hub.cluster, name, leaseDurationSeconds, joinTimeoutMs, registration);
    await poll(
      `the hub kubeconfig of ${name} (CSR approved and signed, Secret written)`,
      async () =>
        existsSync(launcher.hubKubeconfigFile) ? { value: undefined } : { notYet: 'no file yet' },
      { timeoutMs: joinTimeoutMs, intervalMs: 500, ...whileRunning(registration) },
    );
    running = [registration, await launcher.work()];
    await untilCondition(
      hub.cluster,
      name,
      'ManagedClusterJoined',
      'True',
      joinTimeoutMs,
      registration,
    );
    await untilCondition(
      hub.cluster,
      name,
      'ManagedClusterConditionAvailable',
      'True',
      joinTimeoutMs,
      registration,
    );
    const joinSeconds = (performance.now() - joinStarted) / 1000;
    log(
      `joined the OCM hub as ${name} in ${joinSeconds.toFixed(1)} s (lease ${leaseDurationSeconds} s)`,
    );
    return {
      name,
      cluster,
      hub,
      leaseDurationSeconds,
      agents,
      stopAgents,
      async startAgents(): Promise<void> {
        if (running.length > 0) throw new Error(`the agents of ${name} are running`);
        const renewedAfter = new Date();
        const restarted = await launcher.registration();
        running = [restarted]; // tracked (and stopped) even if the work agent fails to start
        running = [restarted, await launcher.work()];
        await poll(
          `the registration agent of ${name} renewing its lease`,
          async () => leaseRenewedSince(hub.cluster, name, renewedAfter),
          { timeoutMs: joinTimeoutMs, intervalMs: 500, ...whileRunning(restarted) },
        );
      },
      controlPlaneSeconds: cluster.startupSeconds,
      joinSeconds,
      crashed,
      async stop(stopOptions = {}): Promise<void> {
        const keep = (stopOptions.keepLogs ?? false) || crashed();
        stopping = true;
        await stopAgents();
        await cluster.stop({ keepLogs: keep });
      },
    };
  } catch (error) {
    stopping = true;
    await stopAgents();
    await cluster.stop({ keepLogs: true });
    throw error;
  }
}

/** As OCM's integration tests accept a cluster: hubAcceptsClient and the lease duration. */
async function acceptOnHub(
  hub: ControlPlane,
  name: string,
  leaseDurationSeconds: number,
  timeoutMs: number,
  agent: ManagedProcess,
): Promise<void> {
  await poll(
    `the registration agent creating ManagedCluster ${name} on the hub`,
    async () => {
      const result = await hub.kubectl([
        'get',
        'managedclusters.cluster.open-cluster-management.io',
        name,
        '-o',
        'name',
      ]);
      return result.code === 0 ? { value: undefined } : { notYet: result.stderr.trim() };
    },
    { timeoutMs, intervalMs: 500, ...whileRunning(agent) },
  );
  await kubectlOk(hub, [
    'patch',
    'managedclusters.cluster.open-cluster-management.io',
    name,
    '--type=merge',
    '-p',
    JSON.stringify({ spec: { hubAcceptsClient: true, leaseDurationSeconds } }),
  ]);
}

/** Done once the hub's managed-cluster-lease of `name` was renewed after `since`. */
async function leaseRenewedSince(
  hub: ControlPlane,
  name: string,
  since: Date,
): Promise<PollOutcome<void>> {
  const result = await hub.kubectl([
    'get',
    'lease',
    'managed-cluster-lease',
    '-n',
    name,
    '-o',
    'jsonpath={.spec.renewTime}',
  ]);
  if (result.code !== 0) return { notYet: result.stderr.trim() };
  const renewed = Date.parse(result.stdout.trim());
  return renewed >= since.getTime() - 1000
    ? { value: undefined }
    : { notYet: `last renewed ${result.stdout.trim()}` };
}
