// `local-up --simulate --remote`: the second cluster beside the hub, built with the harness's
// remote world (harness/remote-world.ts).
//
//   localRemoteOptions()   the world local-up runs: the managed cluster cell-remote (the work
//                          agent's status sync every REMOTE_STATUS_SYNC_INTERVAL_SECONDS), the
//                          kubelets of the Cells bound to it, the hub's sealing key and the cell
//                          agent's files in the state directory (remote-files.ts), its log lines
//   startLocalRemote()     on the started stack: that world, the managed cluster's kubeconfig
//                          copied to the state directory, and the cell agent run as a kubelet
//                          runs its Deployment (harness/cell-agent/runner.ts)
//   hubSimulationClient()  the hub's simulation, minus the Cells bound to cell-remote
//   ocmProcesses()         the processes of the real OCM hub and of cell-remote, for state.json
import { chmodSync, copyFileSync } from 'node:fs';
import type { KubeCellStack } from '../../harness/cluster/kubecell-stack.js';
import type { ManagedProcess } from '../../harness/cluster/processes.js';
import {
  startRemoteWorld,
  type RemoteWorld,
  type RemoteWorldOptions,
} from '../../harness/remote-world.js';
import { CellViewClient, boundCluster } from '../../harness/simulate/cell-view.js';
import type { KubeClient } from '../../harness/simulate/index.js';
import { repeatSuppressing } from './log-lines.js';
import {
  REMOTE_AGENT_INTERVAL_SECONDS,
  REMOTE_CLUSTER_NAME,
  REMOTE_STATUS_SYNC_INTERVAL_SECONDS,
  SIMULATED_NODES_PER_PROFILE,
} from './options.js';
import type { RemoteFiles } from './remote-files.js';
import { localLogDir } from './state.js';

type Log = (line: string) => void;

/** The lines of cell-remote: its start, its simulation and the cell agent's kubelet. */
function remoteLog(log: Log): NonNullable<RemoteWorldOptions['log']> {
  const simulation = repeatSuppressing(log);
  const agent = repeatSuppressing(log);
  return (cluster, source, line) => {
    if (source === 'simulation') simulation(`[${cluster}] [SIMULATED] ${line}`);
    else if (source === 'agent runner') agent(`[${cluster}] [kubelet for the cell agent] ${line}`);
    else log(`[${cluster}] ${line}`);
  };
}

/** The remote world of local-up (its stack options are remoteStackOptions of these). */
export function localRemoteOptions(
  files: RemoteFiles,
  log: Log,
  onAgentProcess?: (process: ManagedProcess | undefined) => void,
): RemoteWorldOptions {
  return {
    clusters: [
      {
        name: REMOTE_CLUSTER_NAME,
        ocm: { statusSyncIntervalSeconds: REMOTE_STATUS_SYNC_INTERVAL_SECONDS },
        nodes: { perProfile: SIMULATED_NODES_PER_PROFILE },
      },
    ],
    sealingKeyFile: files.sealingKeyFile,
    agentDir: () => ({ dir: files.agentDir, logDir: localLogDir }),
    agentDefaults: { KUBECELL_AGENT_INTERVAL_SECONDS: String(REMOTE_AGENT_INTERVAL_SECONDS) },
    ...(onAgentProcess
      ? {
          onAgentProcess: (_cluster: string, process: ManagedProcess | undefined) =>
            onAgentProcess(process),
        }
      : {}),
    log: remoteLog(log),
  };
}

/** The hub simulation's client: every Cell but those bound to cell-remote. */
export function hubSimulationClient(hubKubeconfig: string): KubeClient {
  return new CellViewClient(hubKubeconfig, {
    keep: (cell) => boundCluster(cell) !== REMOTE_CLUSTER_NAME,
  });
}

/** cell-remote's world on the started stack, its kubeconfig in the state directory, the agent running. */
export async function startLocalRemote(
  stack: KubeCellStack,
  files: RemoteFiles,
  log: Log,
  onAgentProcess: (process: ManagedProcess | undefined) => void,
): Promise<RemoteWorld> {
  const managed = stack.ocm?.managedCluster;
  if (!managed) throw new Error('the stack runs no OCM hub with a managed cluster');
  copyFileSync(managed.cluster.kubeconfigPath, files.managedKubeconfig);
  chmodSync(files.managedKubeconfig, 0o600);
  const world = await startRemoteWorld(stack, localRemoteOptions(files, log, onAgentProcess));
  world.agent.start();
  return world;
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
