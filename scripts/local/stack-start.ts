// What the supervisor starts, without its lifecycle (supervisor.ts keeps the state, the signals
// and the order of stopping): the KubeCell stack (with --remote: the real OCM hub and
// cell-remote), the hub's simulation, and the record of every server process for state.json.
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { ensureBinaries } from '../../harness/cluster/binaries.js';
import { startKubeCellStack, type KubeCellStack } from '../../harness/cluster/kubecell-stack.js';
import type { ManagedProcess } from '../../harness/cluster/processes.js';
import { startSimulation, type Simulation } from '../../harness/simulate/index.js';
import { CELL_AGENT_PROCESS } from '../../harness/cell-agent/runner.js';
import { repeatSuppressing } from './log-lines.js';
import {
  REMOTE_CLUSTER_NAME,
  SIMULATED_LEASE_DURATION_SECONDS,
  SIMULATED_NODES_PER_PROFILE,
} from './options.js';
import { remoteStackOptions, type RemoteWorld } from '../../harness/remote-world.js';
import { hubSimulationClient, localRemoteOptions, ocmProcesses } from './remote.js';
import { writeRemoteFiles } from './remote-files.js';
import { localDir, localTmpDir, repoRoot, type RecordedProcess } from './state.js';

const hookServerEntry = path.join(repoRoot, 'hooks', 'main.ts');

type Log = (line: string) => void;

/** Builds (or finds) the binaries and starts the stack, with --remote the OCM hub and cell-remote. */
export async function startLocalStack(remote: boolean, log: Log): Promise<KubeCellStack> {
  const controlPlaneLog = (line: string): void => log(`[control-plane] ${line}`);
  const binaries = await ensureBinaries({ log: controlPlaneLog });
  // startControlPlane() creates its directory in os.tmpdir(). Pointed at the local directory, a
  // directory left behind by an instance that was killed is found and removed here, by the
  // next start, instead of piling up in /tmp. Only one instance runs per local directory.
  rmSync(localTmpDir, { recursive: true, force: true });
  mkdirSync(localTmpDir, { recursive: true });
  const callersTmpdir = process.env.TMPDIR;
  process.env.TMPDIR = localTmpDir;
  log(
    "starting the control plane, KubeCell's API and RBAC, the hook server, Metacontroller and " +
      'the controllers of metacontroller/' +
      (remote ? `, the real OCM hub and the managed cluster ${REMOTE_CLUSTER_NAME}` : ''),
  );
  const remoteOptions = remote
    ? remoteStackOptions(localRemoteOptions(writeRemoteFiles(localDir), log))
    : undefined;
  return startKubeCellStack({
    controlPlane: { binaries },
    ...remoteOptions,
    hookServerEnv: {
      // tsx keeps its compile cache in the temporary directory; the caller's survives restarts.
      ...(callersTmpdir === undefined ? {} : { TMPDIR: callersTmpdir }),
      ...remoteOptions?.hookServerEnv,
    },
    log: controlPlaneLog,
  });
}

/**
 * The hub's simulation. With --remote it leaves the Cells bound to cell-remote to that
 * cluster's simulation, and the real OCM hub's registration controller judges the leases.
 */
export async function startHubSimulation(
  kubeconfig: string,
  remote: boolean,
  log: Log,
): Promise<Simulation> {
  const client = remote ? hubSimulationClient(kubeconfig) : undefined;
  const simulation = await startSimulation(client ?? kubeconfig, {
    profileNodes: { perProfile: SIMULATED_NODES_PER_PROFILE },
    clusterAPIStandInCrds: true,
    ocm: {
      leaseDurationSeconds: SIMULATED_LEASE_DURATION_SECONDS,
      renewIntervalMs: SIMULATED_LEASE_DURATION_SECONDS * 1000,
      // With --remote, OCM's real registration controller judges every lease.
      ...(remote ? { hub: false } : {}),
    },
    log: repeatSuppressing((line) => log(`[SIMULATED] ${line}`)),
  });
  if (!client) return simulation;
  // startSimulation() closes only a client it made itself.
  return {
    ...simulation,
    async stop() {
      await simulation.stop();
      client.close();
    },
  };
}

function record(managed: ManagedProcess, command: string): RecordedProcess {
  return { pid: managed.pid, command, logFile: managed.logFile };
}

/** Every server process, by name: the stack's, and with --remote OCM's, cell-remote's, the agent. */
export function recordProcesses(
  stack: KubeCellStack,
  remoteWorld: RemoteWorld | undefined,
): Record<string, RecordedProcess> {
  const { processes, binaries } = stack.cluster;
  const remoteProcesses = Object.entries(ocmProcesses(stack)).map(
    ([name, entry]) => [name, record(entry.process, entry.command)] as const,
  );
  const agent = remoteWorld?.agent.process;
  return {
    etcd: record(processes.etcd, binaries.etcd),
    'kube-apiserver': record(processes.kubeApiserver, binaries.kubeApiserver),
    'kube-controller-manager': record(
      processes.kubeControllerManager,
      binaries.kubeControllerManager,
    ),
    metacontroller: record(stack.metacontroller.process, binaries.metacontroller),
    'hook-server': record(stack.hookServer, hookServerEntry),
    ...Object.fromEntries(remoteProcesses),
    ...(agent ? { [CELL_AGENT_PROCESS]: record(agent, process.execPath) } : {}),
  };
}
