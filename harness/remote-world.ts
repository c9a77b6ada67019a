// Remote Cells' world: a hub running KubeCell and the real OCM hub, and managed clusters joined
// to it by OCM's real registration and work agents, each a control plane of its own. On each
// managed cluster the simulation plays what a kubelet and k3k would do there (the GPU Nodes, the
// provider baseline, k3k's Clusters served; no OCM: the real agents are there), and a
// CellAgentRunner runs the KubeCell cell agent as the Deployment the hub delivers says. The
// hub's components only ever get the hub's kubeconfigs (stack.hubComponentKubeconfigs).
//
//   remoteStackOptions(options)     what the KubeCell stack starts for it: the real OCM hub, the
//                                   first managed cluster joined by OCM's agents (with k3k's
//                                   CRDs, which the VirtualClusters' works carry) and the hook
//                                   server's sealing key
//   startRemoteWorld(stack, options) on that stack: the other managed clusters joined, and on
//                                   every one its simulation and its cell agent runner (not
//                                   started: runner.start() plays a kubelet, runOnce() runs the
//                                   container once)
//
// The cluster tests (test/cluster/e2e/remote-fixtures.ts), the remote benchmark (bench/remote.ts)
// and `npm run local-up -- --simulate --remote` (scripts/local/) build theirs with it.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { CellAgentRunner } from './cell-agent/runner.js';
import { k3kCrdFiles } from './cluster/crds.js';
import type { KubeCellStack, KubeCellStackOptions } from './cluster/kubecell-stack.js';
import {
  startOcmManagedCluster,
  type OcmManagedCluster,
  type OcmManagedClusterOptions,
} from './cluster/ocm-managed.js';
import type { ManagedProcess } from './cluster/processes.js';
import { CellViewClient, boundCluster } from './simulate/cell-view.js';
import {
  KubeClient,
  profileNodeRegistrations,
  registerNode,
  startSimulation,
  type Simulation,
} from './simulate/index.js';

/** The name of the first managed cluster, as the docs and local-up call it. */
export const REMOTE_CLUSTER = 'cell-remote';

/** The Nodes a managed cluster's kubelets register. */
export type RemoteNodes =
  /** `count` Nodes of one machine profile, with these device resources, registered at once. */
  | { profile: string; devices?: readonly string[]; count: number }
  /** `perProfile` Nodes of each machine profile a Cell bound to the cluster names (on the hub). */
  | { perProfile: number };

export interface RemoteClusterPlan {
  /** The ManagedCluster's name. */
  name: string;
  /** OCM's intervals there (the harness's short defaults when unset: ocm-managed.ts). */
  ocm?: Pick<
    OcmManagedClusterOptions,
    'leaseDurationSeconds' | 'statusSyncIntervalSeconds' | 'clusterHealthCheckPeriodSeconds'
  >;
  nodes: RemoteNodes;
}

export interface RemoteWorldOptions {
  /** The managed clusters; the stack joins the first (remoteStackOptions), the world the rest. */
  clusters: readonly RemoteClusterPlan[];
  /** The hub's private sealing key (KUBECELL_SEALING_KEY_FILE of the hook server). */
  sealingKeyFile: string;
  /** Where each cluster's cell agent gets its projected ConfigMaps, token and log. */
  agentDir: (cluster: string) => { dir: string; logDir: string };
  /** Environment the cell agents get besides their container's (a shorter pass interval). */
  agentDefaults?: Readonly<Record<string, string>>;
  /** Told when a cluster's cell agent process starts or stops. */
  onAgentProcess?: (cluster: string, process: ManagedProcess | undefined) => void;
  /** The simulated k3k's poll interval; default the simulation's. */
  k3kIntervalMs?: number;
  /** Lines of each cluster's start (OCM), simulation and cell agent runner. */
  log?: (cluster: string, source: RemoteLogSource, line: string) => void;
}

export type RemoteLogSource = 'ocm' | 'simulation' | 'agent runner';

/** One managed cluster of the world. */
export interface RemoteCluster {
  managed: OcmManagedCluster;
  /** The simulation there (its client is the managed cluster's). */
  simulation: Simulation;
  /** The delivered cell agent; not started. */
  agent: CellAgentRunner;
}

/** The world; its own fields are the first managed cluster's (the stack's). */
export interface RemoteWorld extends RemoteCluster {
  stack: KubeCellStack;
  /** Every managed cluster, the stack's own first. */
  clusters: RemoteCluster[];
  /** The hub's private sealing key the hook server was started with. */
  sealingKeyFile: string;
  /** Stops the agents, the simulations and the clusters the world joined; not the stack. */
  stop(): Promise<void>;
}

function managedClusterOptions(
  plan: RemoteClusterPlan,
  options: RemoteWorldOptions,
): OcmManagedClusterOptions {
  const log = options.log;
  return {
    name: plan.name,
    ...plan.ocm,
    // The k3k Cluster of each VirtualCluster's work must have its CRD there before it applies.
    extraCrdFiles: k3kCrdFiles(),
    ...(log ? { log: (line: string) => log(plan.name, 'ocm', line) } : {}),
  };
}

/** The stack options a remote world needs (a caller's own hook server environment is merged). */
export function remoteStackOptions(
  options: RemoteWorldOptions,
): Pick<KubeCellStackOptions, 'ocmHub' | 'ocmManagedCluster' | 'hookServerEnv'> {
  const [first] = options.clusters;
  if (!first) throw new Error('a remote world has at least one managed cluster');
  return {
    ocmHub: 'real',
    ocmManagedCluster: managedClusterOptions(first, options),
    hookServerEnv: { KUBECELL_SEALING_KEY_FILE: options.sealingKeyFile },
  };
}

/** The simulation's client: the managed cluster's, with the hub's Cells bound to it. */
function simulationClient(managed: OcmManagedCluster, hubCells: KubeClient): KubeClient {
  return new CellViewClient(managed.cluster.kubeconfigPath, {
    cellsFrom: hubCells,
    keep: (cell) => boundCluster(cell) === managed.name,
  });
}

async function startRemoteCluster(
  managed: OcmManagedCluster,
  plan: RemoteClusterPlan,
  hubCells: KubeClient,
  options: RemoteWorldOptions,
): Promise<RemoteCluster & { client: KubeClient }> {
  const log = options.log;
  const client = simulationClient(managed, hubCells);
  const simulation = await startSimulation(client, {
    ocm: false,
    kubevirt: false,
    clusterAPI: false,
    profileNodes: 'perProfile' in plan.nodes ? { perProfile: plan.nodes.perProfile } : false,
    ...(options.k3kIntervalMs === undefined ? {} : { k3k: { intervalMs: options.k3kIntervalMs } }),
    ...(log ? { log: (line: string) => log(plan.name, 'simulation', line) } : {}),
  });
  if ('count' in plan.nodes) {
    const { profile, devices = [], count } = plan.nodes;
    for (const registration of profileNodeRegistrations(profile, devices, { perProfile: count })) {
      await registerNode(simulation.client, registration);
    }
  }
  const { dir, logDir } = options.agentDir(plan.name);
  mkdirSync(logDir, { recursive: true });
  const agent = new CellAgentRunner({
    managed: managed.cluster,
    client,
    dir,
    logDir,
    ...(options.agentDefaults ? { defaults: options.agentDefaults } : {}),
    ...(log ? { log: (line: string) => log(plan.name, 'agent runner', line) } : {}),
    onProcess: (process) => options.onAgentProcess?.(plan.name, process),
  });
  return { managed, simulation, agent, client };
}

/** On a stack started with remoteStackOptions(options): the managed clusters and what runs there. */
export async function startRemoteWorld(
  stack: KubeCellStack,
  options: RemoteWorldOptions,
): Promise<RemoteWorld> {
  const first = stack.ocm?.managedCluster;
  const hub = stack.ocm?.hub;
  if (!first || !hub) throw new Error('the stack runs no OCM hub with a managed cluster');
  const hubCells = new KubeClient(stack.cluster.kubeconfigPath);
  const started: (RemoteCluster & { client: KubeClient })[] = [];
  const joined: OcmManagedCluster[] = [];
  const stop = async (): Promise<void> => {
    for (const cluster of started) {
      await cluster.agent.stop();
      await cluster.simulation.stop();
      cluster.client.close();
    }
    for (const managed of joined) await managed.stop();
    hubCells.close();
  };
  try {
    for (const [index, plan] of options.clusters.entries()) {
      const managed =
        index === 0
          ? first
          : await startOcmManagedCluster(hub, managedClusterOptions(plan, options));
      if (index > 0) joined.push(managed);
      started.push(await startRemoteCluster(managed, plan, hubCells, options));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const clusters = started.map(({ managed, simulation, agent }) => ({
    managed,
    simulation,
    agent,
  }));
  return { ...clusters[0]!, stack, clusters, sealingKeyFile: options.sealingKeyFile, stop };
}

/** The default place of a cluster's cell agent: `<dir>/<cluster>/` for its files and its log. */
export function agentDirIn(dir: string): RemoteWorldOptions['agentDir'] {
  return (cluster) => ({ dir: path.join(dir, cluster), logDir: path.join(dir, cluster) });
}
