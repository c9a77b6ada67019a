// The long-running half of `npm run local-up`: started detached by up.ts, it runs the local
// KubeCell instance until `npm run local-down` (SIGTERM) or until one of its servers dies.
//
//   1. KubeCell as the cluster tests run it (test/cluster/kubecell-stack.ts): etcd,
//      kube-apiserver, kube-controller-manager on free 127.0.0.1 ports; the upstream CRDs,
//      KubeCell's CRDs, kubecell-system and the host namespaces; the RBAC of manifests/; the hook
//      server (hooks/main.ts); Metacontroller as metacontroller/metacontroller; the controllers
//      of metacontroller/, hooks pointed at that hook server
//   2. with --simulate, the SIMULATED outside world of test/simulate/ (startSimulation: the OCM
//      agent and hub, kubelets, the provider baseline, k3k, KubeVirt and Cluster API, with
//      permissive stand-in CRDs for the Cluster API template kinds the samples name), in this
//      process, so that applied samples become Ready
//   3. state.json with ready: true (and simulated: true with --simulate), which up.ts waits for
//
// On SIGTERM/SIGINT/SIGHUP it stops the simulation, then the hook server, then the control
// plane, and removes the state file and its kubeconfig copy. When one of the servers dies, or
// starting fails, it stops everything as well but leaves the state file with `error` set, for
// local-down and the next local-up to report; the control plane's directory (its logs) is then
// kept in tmp/.
// Its output goes to supervisor.log (see state.ts).
import { chmodSync, copyFileSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { ensureBinaries } from '../../test/cluster/binaries.js';
import { startKubeCellStack, type KubeCellStack } from '../../test/cluster/kubecell-stack.js';
import { describeExit, logTail, type ManagedProcess } from '../../test/cluster/processes.js';
import { verifyUpstreamInputs } from '../../test/cluster/upstream-inputs.js';
import { startSimulation, type Simulation } from '../../test/simulate/index.js';
import {
  SIMULATED_LINES,
  SIMULATED_NODES_PER_PROFILE,
  USAGE,
  parseUpArguments,
} from './options.js';
import {
  localKubeconfigFile,
  localLogDir,
  localTmpDir,
  readState,
  removeState,
  repoRoot,
  supervisorLogFile,
  writeState,
  type LocalState,
  type RecordedProcess,
} from './state.js';

const hookServerEntry = path.join(repoRoot, 'hooks', 'main.ts');
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
const simulate = parsedArguments.simulate;

const started = performance.now();

function log(line: string): void {
  process.stdout.write(`[local ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

const state: LocalState = {
  ready: false,
  supervisorPid: process.pid,
  startedAt: new Date().toISOString(),
  simulated: simulate,
  processes: {},
};
let stack: KubeCellStack | undefined;
let simulation: Simulation | undefined;
let phase: 'starting' | 'running' | 'stopping' = 'starting';

/** Writes the state file, unless we are already stopping (which removes it). */
function save(): void {
  if (phase !== 'stopping') writeState(state);
}

function record(managed: ManagedProcess, command: string): RecordedProcess {
  return { pid: managed.pid, command, logFile: managed.logFile };
}

function removeOwnFiles(options: { keepState: boolean }): void {
  rmSync(localKubeconfigFile, { force: true });
  if (!options.keepState && readState()?.supervisorPid === process.pid) removeState();
}

async function stopSimulation(): Promise<void> {
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
      ? 'simulation stopped (test/simulate/: OCM, kubelets, k3k, KubeVirt, Cluster API)'
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
    log('hook server, Metacontroller and control plane stopped');
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
      'the controllers of metacontroller/',
  );
  stack = await startKubeCellStack({
    controlPlane: { binaries },
    // tsx keeps its compile cache in the temporary directory; the caller's survives restarts.
    hookServerEnv: callersTmpdir === undefined ? {} : { TMPDIR: callersTmpdir },
    log: controlPlaneLog,
  });
  const cluster = stack.cluster;
  takeOverSignals();
  const { processes } = cluster;
  state.dir = cluster.dir;
  state.apiserverUrl = cluster.apiserverUrl;
  state.kubectl = cluster.binaries.kubectl;
  state.metacontrollerVersion = cluster.versions.metacontroller.version;
  state.metacontrollerObjects = stack.controllers;
  state.hookServerUrl = stack.hookServerUrl;
  state.processes = {
    etcd: record(processes.etcd, cluster.binaries.etcd),
    'kube-apiserver': record(processes.kubeApiserver, cluster.binaries.kubeApiserver),
    'kube-controller-manager': record(
      processes.kubeControllerManager,
      cluster.binaries.kubeControllerManager,
    ),
    metacontroller: record(stack.metacontroller.process, cluster.binaries.metacontroller),
    'hook-server': record(stack.hookServer, hookServerEntry),
  };
  save();

  // A copy at a stable path; the certificates are embedded, so it stands on its own.
  copyFileSync(cluster.kubeconfigPath, localKubeconfigFile);
  chmodSync(localKubeconfigFile, 0o600);

  if (simulate) {
    for (const line of SIMULATED_LINES) log(line);
    log('starting the simulation (test/simulate/ startSimulation)');
    const simulationLog = repeatSuppressing((line) => log(`[SIMULATED] ${line}`));
    const running = await startSimulation(cluster.kubeconfigPath, {
      profileNodes: { perProfile: SIMULATED_NODES_PER_PROFILE },
      clusterAPIStandInCrds: true,
      log: simulationLog,
    });
    simulation = running;
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
  save();
  phase = 'running';
  watchForUnexpectedExits([...Object.values(processes), stack.hookServer]);
  log(
    `ready in ${state.startupSeconds.toFixed(1)} s; kubeconfig ${localKubeconfigFile}` +
      (simulate
        ? '; the outside world (OCM, kubelets, k3k, KubeVirt, Cluster API) is SIMULATED'
        : '; nothing plays OCM, kubelets, k3k, KubeVirt or Cluster API (--simulate does)'),
  );
}

/**
 * A log that writes a line repeated back to back once, then how often it came: a simulated
 * actor that fails on every poll (once a second) would otherwise fill the log.
 */
function repeatSuppressing(write: (line: string) => void): (line: string) => void {
  let last: string | undefined;
  let repeats = 0;
  let lastWritten = 0;
  return (line: string) => {
    if (line === last) {
      repeats += 1;
      // A reminder now and then that it still happens.
      if (Date.now() - lastWritten < 60_000) return;
      write(`${line} (repeated ${repeats} times)`);
      repeats = 0;
      lastWritten = Date.now();
      return;
    }
    if (repeats > 0) write(`(the simulation's line before repeated ${repeats} more times)`);
    last = line;
    repeats = 0;
    lastWritten = Date.now();
    write(line);
  };
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
