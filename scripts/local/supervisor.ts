// The long-running half of `npm run local-up`: started detached by up.ts, it runs the local
// KubeCell instance until `npm run local-down` (SIGTERM) or until one of its servers dies.
//
//   1. KubeCell as the cluster tests run it (harness/cluster/kubecell-stack.ts): etcd,
//      kube-apiserver, kube-controller-manager on free 127.0.0.1 ports; the upstream CRDs,
//      KubeCell's CRDs, kubecell-system and the host namespaces; the RBAC of manifests/; the hook
//      server (hooks/main.ts); Metacontroller as metacontroller/metacontroller; the controllers
//      of metacontroller/, hooks pointed at that hook server
//   2. with --simulate, the SIMULATED outside world of harness/simulate/ (startSimulation: the OCM
//      agent and hub, kubelets, the provider baseline, k3k, KubeVirt and Cluster API, with a
//      permissive stand-in CRD for KubevirtMachine, the one Cluster API kind of the samples
//      without a pinned upstream CRD), in this process, so that applied samples become Ready
//   3. with --remote (remote.ts), the real OCM hub on that control plane and a second control
//      plane joined to it as ManagedCluster cell-remote by OCM's real agents (started with the
//      stack); harness/simulate/ there (Nodes, provider baseline, k3k) and the cell agent the hub
//      delivers, run as a process; the hub's simulation leaves cell-remote's Cells alone
//   4. state.json with ready: true (and simulated: true with --simulate), which up.ts waits for
//
// On SIGTERM/SIGINT/SIGHUP it stops the cell agent and the simulations, then OCM, the managed
// cluster, the hook server and the control plane, and removes the state file, its kubeconfig
// copy and remote/ (--remote). When one of the servers dies, or starting fails, it stops everything as well but leaves the state file with `error` set, for
// local-down and the next local-up to report; the control plane's directory (its logs) is then
// kept in tmp/.
// Its output goes to supervisor.log (see state.ts).
import { chmodSync, copyFileSync, mkdirSync, rmSync } from 'node:fs';
import type { KubeCellStack } from '../../harness/cluster/kubecell-stack.js';
import { describeExit, logTail, type ManagedProcess } from '../../harness/cluster/processes.js';
import { verifyUpstreamInputs } from '../../harness/cluster/upstream-inputs.js';
import type { Simulation } from '../../harness/simulate/index.js';
import {
  REMOTE_CLUSTER_NAME,
  REMOTE_LINES,
  SIMULATED_LINES,
  USAGE,
  parseUpArguments,
} from './options.js';
import type { RemoteWorld } from '../../harness/remote-world.js';
import { ocmProcesses, startLocalRemote } from './remote.js';
import { remoteFiles } from './remote-files.js';
import { recordProcesses, startHubSimulation, startLocalStack } from './stack-start.js';
import {
  localDir,
  localKubeconfigFile,
  localLogDir,
  readState,
  removeState,
  repoRoot,
  supervisorLogFile,
  writeState,
  type LocalState,
} from './state.js';

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
/** How long stopping the simulation may take (a poll in flight finishes first). */
const SIMULATION_STOP_TIMEOUT_MS = 15_000;

const parsedArguments = parseUpArguments(process.argv.slice(2));
if (parsedArguments === 'help' || 'error' in parsedArguments) {
  process.stderr.write(
    `${parsedArguments === 'help' ? '' : `supervisor: ${parsedArguments.error}\n`}${USAGE}\n`,
  );
  process.exit(parsedArguments === 'help' ? 0 : 2);
}
const { simulate, remote } = parsedArguments;

const started = performance.now();

function log(line: string): void {
  process.stdout.write(`[local ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

const state: LocalState = {
  ready: false,
  supervisorPid: process.pid,
  startedAt: new Date().toISOString(),
  simulated: simulate,
  ...(remote ? { remote: { managedCluster: REMOTE_CLUSTER_NAME } } : {}),
  processes: {},
};
let stack: KubeCellStack | undefined;
let simulation: Simulation | undefined;
let remoteWorld: RemoteWorld | undefined;
let phase: 'starting' | 'running' | 'stopping' = 'starting';

/** Writes the state file, unless we are already stopping (which removes it). */
function save(): void {
  if (phase !== 'stopping') writeState(state);
}

function removeOwnFiles(options: { keepState: boolean }): void {
  rmSync(localKubeconfigFile, { force: true });
  // The managed cluster's kubeconfig and the hub's sealing key (and the sample beside them).
  if (remote) rmSync(remoteFiles(localDir).dir, { recursive: true, force: true });
  if (!options.keepState && readState()?.supervisorPid === process.pid) removeState();
}

async function stopSimulation(): Promise<void> {
  const world = remoteWorld;
  remoteWorld = undefined;
  if (world) {
    await world.stop();
    log(`${REMOTE_CLUSTER_NAME}: cell agent and simulation stopped`);
  }
  const running = simulation;
  if (!running) return;
  simulation = undefined;
  let timer: NodeJS.Timeout | undefined;
  const stopped = await Promise.race([
    running.stop().then(() => true),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), SIMULATION_STOP_TIMEOUT_MS);
    }),
  ]);
  clearTimeout(timer);
  log(
    stopped
      ? 'simulation stopped (harness/simulate/: OCM, kubelets, k3k, KubeVirt, Cluster API)'
      : `simulation did not stop within ${SIMULATION_STOP_TIMEOUT_MS / 1000} s; going on`,
  );
}

async function stopEverything(keepLogs: boolean): Promise<void> {
  // The simulation first: it writes through the apiserver, which stops next.
  await stopSimulation().catch((error: unknown) => {
    log(
      `stopping the simulation failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
  if (stack) {
    await stack.stop({ keepLogs });
    log(
      `${remote ? `OCM, ${REMOTE_CLUSTER_NAME}, ` : ''}hook server, Metacontroller and control plane stopped`,
    );
  }
}

async function shutdown(reason: string, exitCode: number): Promise<void> {
  if (phase === 'stopping') return;
  phase = 'stopping';
  log(`stopping (${reason})`);
  const failed = exitCode !== 0;
  if (failed) {
    // Kept for local-down (and the next local-up) to report why the instance is gone.
    state.ready = false;
    state.error = `it stopped itself: ${reason}; see ${supervisorLogFile}`;
    writeState(state);
  }
  try {
    await stopEverything(failed);
  } finally {
    removeOwnFiles({ keepState: failed });
    log(`stopped after ${((performance.now() - started) / 1000).toFixed(1)} s`);
    process.exit(exitCode);
  }
}

function onSignal(signal: NodeJS.Signals): void {
  if (phase === 'stopping') return;
  if (phase === 'running' || stack !== undefined) {
    void shutdown(`received ${signal}`, 0);
    return;
  }
  // Still inside startControlPlane() (building binaries or starting components), which cannot
  // be cancelled. Exit now: processes.ts's exit handler kills every server started so far, and
  // the signal to our own process group (we lead it when started by up.ts) ends a running
  // `go build`.
  phase = 'stopping';
  log(`received ${signal} while starting; aborting`);
  removeOwnFiles({ keepState: false });
  try {
    process.kill(-process.pid, 'SIGTERM');
  } catch {
    // Not a process-group leader (started by hand): nothing else to reach.
  }
  process.exit(1);
}

/**
 * processes.ts installs signal handlers that SIGKILL every server at once (right for a test run
 * that is interrupted). Once the control plane runs, the supervisor stops it itself, in order
 * and gracefully, so those handlers are removed; its exit handler stays as a last resort.
 */
function takeOverSignals(): void {
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (listener !== onSignal) process.removeListener(signal, listener);
    }
  }
}

function watchForUnexpectedExits(managed: readonly ManagedProcess[]): void {
  for (const server of managed) {
    void server.exited.then((exit) => {
      if (phase !== 'running') return;
      log(
        `${server.name} ${describeExit(exit)} unexpectedly; its log ${server.logFile} ends:\n` +
          logTail(server.logFile, 20),
      );
      void shutdown(`${server.name} died`, 1);
    });
  }
}

async function startSimulations(running: KubeCellStack): Promise<void> {
  for (const line of SIMULATED_LINES) log(line);
  log('starting the simulation (harness/simulate/ startSimulation)');
  simulation = await startHubSimulation(running.cluster.kubeconfigPath, remote, log);
  if (!remote || phase !== 'starting') return;
  for (const line of REMOTE_LINES) log(line);
  const files = remoteFiles(localDir);
  remoteWorld = await startLocalRemote(running, files, log, () => {
    state.processes = recordProcesses(running, remoteWorld);
    save();
  });
  const managed = remoteWorld.managed.cluster;
  state.remote = {
    managedCluster: REMOTE_CLUSTER_NAME,
    kubeconfig: files.managedKubeconfig,
    apiserverUrl: managed.apiserverUrl,
    sampleFile: files.sampleFile,
    sealingKeyFile: files.sealingKeyFile,
  };
}

async function main(): Promise<void> {
  mkdirSync(localLogDir, { recursive: true });
  for (const signal of SIGNALS) process.on(signal, onSignal);
  // The servers are unref'd child processes; this keeps the supervisor alive beside them.
  setInterval(() => undefined, 1 << 30);
  save();
  log(`supervisor pid ${process.pid}; repository ${repoRoot}`);
  // The pinned upstream inputs (CRDs, Metacontroller's archive) before anything is built or
  // started; up.ts checked them too, this covers a supervisor started by hand.
  const upstream = verifyUpstreamInputs();
  log(`upstream inputs: all ${upstream.inputs.length} match their sha256 in ${upstream.dir}`);

  const running = await startLocalStack(remote, log);
  stack = running;
  const cluster = running.cluster;
  takeOverSignals();
  state.dir = cluster.dir;
  state.apiserverUrl = cluster.apiserverUrl;
  state.kubectl = cluster.binaries.kubectl;
  state.metacontrollerVersion = cluster.versions.metacontroller.version;
  state.metacontrollerObjects = running.controllers;
  state.hookServerUrl = running.hookServerUrl;
  state.processes = recordProcesses(running, remoteWorld);
  save();

  // A copy at a stable path; the certificates are embedded, so it stands on its own.
  copyFileSync(cluster.kubeconfigPath, localKubeconfigFile);
  chmodSync(localKubeconfigFile, 0o600);

  if (simulate) {
    await startSimulations(running);
    // A signal that arrived meanwhile has stopped the stack; stop what just started, too.
    if (phase !== 'starting') {
      await stopSimulation();
      return;
    }
    log('simulation running');
  }
  state.kubeconfig = localKubeconfigFile;
  state.startupSeconds = (performance.now() - started) / 1000;
  state.ready = true;
  if (phase !== 'starting') return; // A signal arrived meanwhile; shutdown() is under way.
  state.processes = recordProcesses(running, remoteWorld);
  save();
  phase = 'running';
  const remoteServers = Object.values(ocmProcesses(running)).map((entry) => entry.process);
  watchForUnexpectedExits([
    ...Object.values(cluster.processes),
    running.hookServer,
    ...remoteServers,
  ]);
  log(
    `ready in ${state.startupSeconds.toFixed(1)} s; kubeconfig ${localKubeconfigFile}` +
      (simulate
        ? '; the outside world (OCM, kubelets, k3k, KubeVirt, Cluster API) is SIMULATED'
        : '; nothing plays OCM, kubelets, k3k, KubeVirt or Cluster API (--simulate does)') +
      (state.remote ? `; ${REMOTE_CLUSTER_NAME}'s kubeconfig ${state.remote.kubeconfig}` : ''),
  );
}

main().catch(async (error: unknown) => {
  if (phase === 'stopping') return; // Stopped on request while starting; not a failure.
  const message = error instanceof Error ? error.message : String(error);
  log(`starting failed: ${message}`);
  state.error = message;
  save();
  // The error stays in the state file for up.ts to report (it removes the file).
  phase = 'stopping';
  try {
    await stopEverything(true);
  } finally {
    removeOwnFiles({ keepState: true });
    process.exit(1);
  }
});
