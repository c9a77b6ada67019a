// The SIMULATED outside world of a KubeCell control plane, all actors together: what
// `npm run local-up -- --simulate`, the end-to-end tests and the benchmarks run next to a real
// kube-apiserver, Metacontroller and KubeCell hook server. Each actor writes only what the real
// component would write, under a field manager naming it; none of them does KubeCell's work.
//
// - OCM (ocm.ts): for every Cell's spec.managedClusterRef, the ManagedCluster joins (accepted,
//   joined, available) and its lease is renewed on a loop; the hub's lease controller marks a
//   ManagedCluster whose lease is no longer renewed Available=Unknown;
// - the provider baseline (provider-baseline.ts): k3k's namespace, CRDs and controller, the CNI
//   and TopoLVM DaemonSets, ready;
// - kubelets (kubelet.ts): N Ready Nodes per Cell machine profile, labelled
//   kubecell.io/machine-profile=<profile>, offering each declared device and TopoLVM capacity;
// - k3k (k3k.ts): every k3k Cluster served (Ready, admin kubeconfig Secret);
// - KubeVirt (kubevirt.ts) and Cluster API (cluster-api.ts): every GPUCellPool VM or Machine
//   runs and its cell's Node joins;
// - optionally (cluster-api-crds.ts), a permissive stand-in CRD for the Cluster API kind the
//   shared upstream CRDs lack, KubevirtMachine (`clusterAPIStandInCrds`).
import { API_VERSION } from '../../hooks/api/kinds.js';
import { DEFAULT_CELL_CONFIG } from '../../hooks/cell/config.js';
import { ClusterAPISimulator, type ClusterAPISimulatorOptions } from './cluster-api.js';
import { ensureClusterAPIStandInCrds } from './cluster-api-crds.js';
import { K3kSimulator, type K3kSimulatorOptions } from './k3k.js';
import { KubeClient, clientFor, isNotFound, resourcePath, type KubeObject } from './kube-client.js';
import { DEFAULT_NODE_CAPACITY, registerNode, type NodeRegistration } from './kubelet.js';
import { KubeVirtSimulator, type KubeVirtSimulatorOptions } from './kubevirt.js';
import { HubLeaseController, LeaseRenewer, joinManagedCluster, managedClusterPath } from './ocm.js';
import {
  installProviderBaseline,
  rescheduleDaemonSets,
  type ProviderBaselineOptions,
} from './provider-baseline.js';
import { Poller, silent, type Log } from './support.js';

export interface OcmOptions {
  /** spec.leaseDurationSeconds of the ManagedClusters joined; default 60. */
  leaseDurationSeconds?: number;
  /** How often leases are renewed; default the lease duration (what the OCM agent does). */
  renewIntervalMs?: number;
  /**
   * Run the hub's lease controller (HubLeaseController: every ManagedCluster whose lease is not
   * renewed for 5 lease durations turns Available=Unknown); default true. Without it a stale
   * lease goes unnoticed, as on a hub whose registration controller is down.
   */
  hub?: boolean;
  /** How often the hub's lease controller looks at the leases; default 1 s. */
  hubIntervalMs?: number;
}

export interface ProfileNodeOptions {
  /** Nodes per machine profile; default 2. */
  perProfile?: number;
  /** Capacity besides the devices; default 32 cpu, 256Gi memory, 110 pods, 500Gi ephemeral-storage. */
  capacity?: Record<string, string>;
  /** Allocatable; default the capacity. */
  allocatable?: Record<string, string>;
  /** How many of each declared device (resourceName) a Node offers; default 8. */
  devicesPerNode?: number;
  /**
   * TopoLVM's free capacity per device class, as its node agent annotates
   * `capacity.topolvm.io/<class>` (bytes); default `{ '00default': 1 TiB }`. `{}`: no annotation,
   * so the Cell's free storage is unknown.
   */
  topolvm?: Record<string, string>;
}

export interface SimulationOptions {
  /** How often Cells are looked at for new managed clusters and profiles; default 1 s. */
  intervalMs?: number;
  /** Where Cells live; default kubecell-system. */
  cellNamespace?: string;
  ocm?: false | OcmOptions;
  providerBaseline?: false | ProviderBaselineOptions;
  profileNodes?: false | ProfileNodeOptions;
  k3k?: false | K3kSimulatorOptions;
  kubevirt?: false | KubeVirtSimulatorOptions;
  clusterAPI?: false | ClusterAPISimulatorOptions;
  /**
   * Install a permissive stand-in CRD (labelled as such) for each Cluster API kind of
   * samples/36-gpucellpool-clusterapi.yaml that no pinned upstream CRD defines and is missing:
   * KubevirtMachine (cluster-api-crds.ts); default false.
   */
  clusterAPIStandInCrds?: boolean;
  log?: Log;
}

export interface Simulation {
  client: KubeClient;
  leases?: LeaseRenewer;
  /** OCM's hub lease controller (ocm.ts), unless `ocm: false` or `ocm.hub: false`. */
  ocmHub?: HubLeaseController;
  k3k?: K3kSimulator;
  kubevirt?: KubeVirtSimulator;
  clusterAPI?: ClusterAPISimulator;
  /** ManagedClusters this simulation joined. */
  joinedClusters: ReadonlySet<string>;
  /** Nodes registered per machine profile. */
  profileNodes: ReadonlyMap<string, readonly string[]>;
  /** Looks at the Cells now: joins new managed clusters, registers Nodes for new profiles. */
  syncCells(): Promise<void>;
  /** Stops every loop (objects written stay); closes the client if it was made here. */
  stop(): Promise<void>;
}

interface CellObject extends KubeObject {
  spec?: {
    managedClusterRef?: { name?: string };
    machineProfile?: { name?: string; devices?: { name?: string; resourceName?: string }[] };
  };
}

export const ONE_TIB_BYTES = String(1024 ** 4);

/** A DNS-1123 name for the i-th simulated Node of a profile (pure). */
export function profileNodeName(profile: string, index: number): string {
  const safe = profile
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `sim-${safe || 'profile'}-${index}`;
}

/** The profile Nodes' registrations for a profile and the devices its Cells declare (pure). */
export function profileNodeRegistrations(
  profile: string,
  resourceNames: Iterable<string>,
  options: ProfileNodeOptions = {},
): NodeRegistration[] {
  const devices = Object.fromEntries(
    [...resourceNames].sort().map((name) => [name, String(options.devicesPerNode ?? 8)]),
  );
  const capacity = { ...(options.capacity ?? DEFAULT_NODE_CAPACITY), ...devices };
  const topolvm = options.topolvm ?? { '00default': ONE_TIB_BYTES };
  const annotations = Object.fromEntries(
    Object.entries(topolvm).map(([deviceClass, bytes]) => [
      `capacity.topolvm.io/${deviceClass}`,
      bytes,
    ]),
  );
  return Array.from({ length: options.perProfile ?? 2 }, (_, index) => ({
    name: profileNodeName(profile, index),
    labels: { 'kubecell.io/machine-profile': profile },
    annotations,
    capacity,
    allocatable: { ...(options.allocatable ?? capacity), ...devices },
  }));
}

/** Starts the chosen actors against the apiserver of `client` (or a kubeconfig path). */
export async function startSimulation(
  clientOrKubeconfig: KubeClient | string,
  options: SimulationOptions = {},
): Promise<Simulation> {
  const ownClient = typeof clientOrKubeconfig === 'string';
  const client = clientFor(clientOrKubeconfig);
  const log = options.log ?? silent;
  const cellNamespace = options.cellNamespace ?? 'kubecell-system';
  const joinedClusters = new Set<string>();
  const profileNodes = new Map<string, string[]>();
  const profileResources = new Map<string, Set<string>>();
  const baselineConfig =
    options.providerBaseline === false
      ? DEFAULT_CELL_CONFIG
      : (options.providerBaseline?.config ?? DEFAULT_CELL_CONFIG);

  const ocm = options.ocm === false ? undefined : (options.ocm ?? {});
  const leases = ocm
    ? new LeaseRenewer(client, [], {
        ...(ocm.leaseDurationSeconds ? { leaseDurationSeconds: ocm.leaseDurationSeconds } : {}),
        intervalMs: ocm.renewIntervalMs ?? (ocm.leaseDurationSeconds ?? 60) * 1000,
        log,
      })
    : undefined;
  const ocmHub =
    ocm && ocm.hub !== false
      ? new HubLeaseController(client, {
          ...(ocm.hubIntervalMs ? { intervalMs: ocm.hubIntervalMs } : {}),
          log,
        })
      : undefined;
  const nodeOptions = options.profileNodes === false ? undefined : (options.profileNodes ?? {});

  const syncCells = async (): Promise<void> => {
    let cells: CellObject[];
    try {
      cells = await client.list<CellObject>(
        resourcePath({
          apiVersion: API_VERSION,
          resource: 'cells',
          namespace: cellNamespace,
        }),
      );
    } catch (error) {
      if (isNotFound(error)) return; // KubeCell's API is not installed yet
      throw error;
    }
    const wanted = new Map<string, Set<string>>();
    for (const cell of cells) {
      if (cell.metadata.deletionTimestamp) continue;
      const cluster = cell.spec?.managedClusterRef?.name;
      if (leases && ocm && cluster && !joinedClusters.has(cluster)) {
        // A ManagedCluster someone else registered (a test) is left as it is; only its lease runs.
        if (!(await client.find(managedClusterPath(cluster)))) {
          await joinManagedCluster(client, cluster, {
            ...(ocm.leaseDurationSeconds ? { leaseDurationSeconds: ocm.leaseDurationSeconds } : {}),
          });
          log(`ocm: ManagedCluster ${cluster} joined`);
        }
        joinedClusters.add(cluster);
        await leases.add(cluster);
      }
      const profile = cell.spec?.machineProfile?.name;
      if (profile) {
        const resources = wanted.get(profile) ?? new Set<string>();
        for (const device of cell.spec?.machineProfile?.devices ?? []) {
          if (device.resourceName) resources.add(device.resourceName);
        }
        wanted.set(profile, resources);
      }
    }
    if (!nodeOptions) return;
    let registered = false;
    for (const [profile, resources] of wanted) {
      const known = profileResources.get(profile);
      if (known && [...resources].every((resource) => known.has(resource))) continue;
      const all = new Set([...(known ?? []), ...resources]);
      const registrations = profileNodeRegistrations(profile, all, nodeOptions);
      for (const registration of registrations) await registerNode(client, registration);
      profileResources.set(profile, all);
      profileNodes.set(
        profile,
        registrations.map((registration) => registration.name),
      );
      registered = true;
      log(
        `kubelet: ${registrations.length} Nodes of profile ${profile} registered (${[...all].join(', ') || 'no devices'})`,
      );
    }
    if (registered && options.providerBaseline !== false) {
      await rescheduleDaemonSets(client, baselineConfig);
    }
  };

  if (options.providerBaseline !== false) {
    const baseline = await installProviderBaseline(client, options.providerBaseline ?? {});
    log(
      `provider baseline installed${baseline.standInCrds.length > 0 ? ` (stand-in CRDs: ${baseline.standInCrds.join(', ')})` : ''}`,
    );
  }
  if (options.clusterAPIStandInCrds) {
    const standIns = await ensureClusterAPIStandInCrds(client);
    log(
      standIns.length > 0
        ? `cluster-api: permissive stand-in CRDs installed (NOT the providers' CRDs): ${standIns.join(', ')}`
        : 'cluster-api: every Cluster API CRD the samples name is installed; no stand-in needed',
    );
  }
  const cellWatcher = new Poller('cell watcher', options.intervalMs ?? 1000, syncCells, log);
  const k3k = options.k3k === false ? undefined : new K3kSimulator(client, { log, ...options.k3k });
  const kubevirt =
    options.kubevirt === false
      ? undefined
      : new KubeVirtSimulator(client, { log, ...options.kubevirt });
  const clusterAPI =
    options.clusterAPI === false
      ? undefined
      : new ClusterAPISimulator(client, { log, ...options.clusterAPI });

  leases?.start();
  ocmHub?.start();
  await cellWatcher.runOnce();
  cellWatcher.start();
  k3k?.start();
  kubevirt?.start();
  clusterAPI?.start();

  return {
    client,
    ...(leases ? { leases } : {}),
    ...(ocmHub ? { ocmHub } : {}),
    ...(k3k ? { k3k } : {}),
    ...(kubevirt ? { kubevirt } : {}),
    ...(clusterAPI ? { clusterAPI } : {}),
    joinedClusters,
    profileNodes,
    syncCells: () => cellWatcher.runOnce(),
    async stop(): Promise<void> {
      await Promise.all([
        cellWatcher.stop(),
        leases?.stop(),
        ocmHub?.stop(),
        k3k?.stop(),
        kubevirt?.stop(),
        clusterAPI?.stop(),
      ]);
      if (ownClient) client.close();
    },
  };
}

export * from './kube-client.js';
export * from './support.js';
export * from './ocm.js';
export * from './kubelet.js';
export * from './provider-baseline.js';
export * from './k3k.js';
export * from './gpu-cell.js';
export * from './kubevirt.js';
export * from './cluster-api.js';
export * from './cluster-api-crds.js';
