// `local-up --simulate --remote`: the second cluster beside the hub.
//
//   remoteStackOptions()  what the KubeCell stack (harness/cluster/kubecell-stack.ts) starts on top
//                         of today's hub: the real OCM hub (`ocmHub: 'real'`), a managed control
//                         plane joined as cell-remote by OCM's real agents (with k3k's CRDs, which
//                         the VirtualClusters' works carry; the work agent's status sync every
//                         REMOTE_STATUS_SYNC_INTERVAL_SECONDS), and the hook server's sealing key
//   hubSimulationClient() the hub's simulation, minus the Cells bound to cell-remote (cell-view.ts)
//   startRemoteWorld()    on cell-remote: harness/simulate/ (kubelets of the Cells bound to it,
//                         the provider baseline, k3k; no OCM: the real agents are there) and the
//                         KubeCell cell agent the hub delivers, run as a process
//                         (cell-agent-runner.ts)
import { chmodSync, copyFileSync } from 'node:fs';
import type { KubeCellStack, KubeCellStackOptions } from '../../harness/cluster/kubecell-stack.js';
import { k3kCrdFiles } from '../../harness/cluster/crds.js';
import type { OcmManagedCluster } from '../../harness/cluster/ocm.js';
import type { ManagedProcess } from '../../harness/cluster/processes.js';
import { KubeClient, startSimulation, type Simulation } from '../../harness/simulate/index.js';
import { CellAgentRunner } from './cell-agent-runner.js';
import { CellViewClient, boundCluster } from './cell-view.js';
import { repeatSuppressing } from './log-lines.js';
import {
  REMOTE_AGENT_INTERVAL_SECONDS,
  REMOTE_CLUSTER_NAME,
  REMOTE_STATUS_SYNC_INTERVAL_SECONDS,
  SIMULATED_NODES_PER_PROFILE,
} from './options.js';
import type { RemoteFiles } from './remote-files.js';

/** The stack options --remote adds (the caller's hook server environment is merged). */
export function remoteStackOptions(
  files: RemoteFiles,
  log: (line: string) => void,
): Pick<KubeCellStackOptions, 'ocmHub' | 'ocmManagedCluster' | 'hookServerEnv'> {
  return {
    ocmHub: 'real',
    ocmManagedCluster: {
      name: REMOTE_CLUSTER_NAME,
      statusSyncIntervalSeconds: REMOTE_STATUS_SYNC_INTERVAL_SECONDS,
      // The k3k Cluster of each VirtualCluster's work must have its CRD there before it applies.
      extraCrdFiles: k3kCrdFiles(),
      log: (line) => log(`[${REMOTE_CLUSTER_NAME}] ${line}`),
    },
    hookServerEnv: { KUBECELL_SEALING_KEY_FILE: files.sealingKeyFile },
  };
}

/** The hub simulation's client: every Cell but those bound to cell-remote. */
export function hubSimulationClient(hubKubeconfig: string): KubeClient {
  return new CellViewClient(hubKubeconfig, {
    keep: (cell) => boundCluster(cell) !== REMOTE_CLUSTER_NAME,
  });
}

export interface RemoteWorld {
  managed: OcmManagedCluster;
  simulation: Simulation;
  agent: CellAgentRunner;
  /** Stops the agent and the simulation (the stack stops the clusters and OCM). */
  stop(): Promise<void>;
}

export interface RemoteWorldOptions {
  files: RemoteFiles;
  logDir: string;
  log: (line: string) => void;
  /** Told whenever the cell agent process starts or stops. */
  onAgentProcess(process: ManagedProcess | undefined): void;
}

export async function startRemoteWorld(
  stack: KubeCellStack,
  options: RemoteWorldOptions,
): Promise<RemoteWorld> {
  const managed = stack.ocm?.managedCluster;
  const hub = stack.ocm?.hub;
  if (!managed || !hub) throw new Error('the stack runs no OCM hub with a managed cluster');
  copyFileSync(managed.cluster.kubeconfigPath, options.files.managedKubeconfig);
  chmodSync(options.files.managedKubeconfig, 0o600);

  const hubCells = new KubeClient(stack.cluster.kubeconfigPath);
  const managedClient = new CellViewClient(managed.cluster.kubeconfigPath, {
    cellsFrom: hubCells,
    keep: (cell) => boundCluster(cell) === REMOTE_CLUSTER_NAME,
  });
  const log = (line: string): void => options.log(`[${REMOTE_CLUSTER_NAME}] ${line}`);
  const simulation = await startSimulation(managedClient, {
    ocm: false,
    kubevirt: false,
    clusterAPI: false,
    profileNodes: { perProfile: SIMULATED_NODES_PER_PROFILE },
    log: repeatSuppressing((line) => log(`[SIMULATED] ${line}`)),
  });
  const agent = new CellAgentRunner({
    managed: managed.cluster,
    client: managedClient,
    dir: options.files.agentDir,
    logDir: options.logDir,
    defaults: { KUBECELL_AGENT_INTERVAL_SECONDS: String(REMOTE_AGENT_INTERVAL_SECONDS) },
    log: repeatSuppressing((line) => log(`[kubelet for the cell agent] ${line}`)),
    onProcess: options.onAgentProcess,
  });
  agent.start();
  return {
    managed,
    simulation,
    agent,
    async stop() {
      await agent.stop();
      await simulation.stop();
      managedClient.close();
      hubCells.close();
    },
  };
}

/** The processes of the real OCM hub and of cell-remote, by name, with their executables. */
export function ocmProcesses(
  stack: KubeCellStack,
): Record<string, { process: ManagedProcess; command: string }> {
  const hub = stack.ocm?.hub;
  const managed = stack.ocm?.managedCluster;
  if (!hub) return {};
  const { binaries } = stack.cluster;
  const own = managed?.cluster.processes;
  const agents = managed?.agents();
  const name = (process: string): string => `${managed?.name ?? REMOTE_CLUSTER_NAME} ${process}`;
  const entries: [string, ManagedProcess | undefined, string][] = [
    ['ocm-registration-controller', hub.registrationController, hub.binaries.registration],
    ['ocm-work-manager', hub.workManager, hub.binaries.work],
    [name('etcd'), own?.etcd, binaries.etcd],
    [name('kube-apiserver'), own?.kubeApiserver, binaries.kubeApiserver],
    [name('kube-controller-manager'), own?.kubeControllerManager, binaries.kubeControllerManager],
    [name('ocm-registration-agent'), agents?.registration, hub.binaries.registration],
    [name('ocm-work-agent'), agents?.work, hub.binaries.work],
  ];
  return Object.fromEntries(
    entries.flatMap(([key, process, command]) => (process ? [[key, { process, command }]] : [])),
  );
}
