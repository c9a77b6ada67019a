// The long-running half of `npm run local-up`: started detached by up.ts, it runs the local
// KubeCell instance until `npm run local-down` (SIGTERM) or until one of its servers dies.
//
//   1. the control plane of the cluster tests (etcd, kube-apiserver, kube-controller-manager,
//      and Metacontroller if it could be built), on free 127.0.0.1 ports
//   2. the upstream CRDs, KubeCell's CRDs, kubecell-system and the host namespaces
//   3. the hook server (hooks/main.ts) on a free port, until /readyz answers
//   4. the Metacontroller objects of metacontroller/, hooks rewritten to that hook server
//   5. state.json with ready: true, which up.ts waits for
//
// On SIGTERM/SIGINT/SIGHUP it stops the hook server, then the control plane, and removes the
// state file and its kubeconfig copy. When one of the servers dies, or starting fails, it
// stops everything as well but leaves the state file with `error` set, for local-down and the
// next local-up to report; the control plane's directory (its logs) is then kept in tmp/.
// Its output goes to supervisor.log (see state.ts).
import { chmodSync, copyFileSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { ensureBinaries } from '../../test/cluster/binaries.js';
import { startControlPlane, type ControlPlane } from '../../test/cluster/control-plane.js';
import { crdNamesIn } from '../../test/cluster/crds.js';
import { installKubeCellApi } from '../../test/cluster/kubecell.js';
import { metacontrollerCrdsFile } from '../../test/cluster/paths.js';
import { freeLoopbackPorts } from '../../test/cluster/ports.js';
import {
  describeExit,
  logTail,
  startManagedProcess,
  type ManagedProcess,
} from '../../test/cluster/processes.js';
import { waitForHttpOk } from '../../test/cluster/readiness.js';
import {
  readMetacontrollerObjects,
  rewriteHookUrls,
  toYamlStream,
} from './metacontroller-objects.js';
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
const metacontrollerDir = path.join(repoRoot, 'metacontroller');
const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

const started = performance.now();

function log(line: string): void {
  process.stdout.write(`[local ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

const state: LocalState = {
  ready: false,
  supervisorPid: process.pid,
  startedAt: new Date().toISOString(),
  processes: {},
};
let cluster: ControlPlane | undefined;
let hookServer: ManagedProcess | undefined;
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

async function stopEverything(keepLogs: boolean): Promise<void> {
  if (hookServer) {
    await hookServer.stop();
    log('hook server stopped');
  }
  if (cluster) {
    await cluster.stop({ keepLogs });
    log('control plane stopped');
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
  if (phase === 'running' || cluster !== undefined) {
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

async function applyMetacontrollerObjects(
  controlPlane: ControlPlane,
  hookServerUrl: string,
): Promise<void> {
  const crdNames = crdNamesIn(metacontrollerCrdsFile);
  const crds = await controlPlane.kubectl([
    'get',
    ...crdNames.map((name) => `customresourcedefinition/${name}`),
    '-o',
    'name',
  ]);
  if (crds.code !== 0) {
    state.metacontrollerObjectsSkipped = `Metacontroller's CRDs are not installed: ${crds.stderr.trim()}`;
    log(`NOT applying metacontroller/: ${state.metacontrollerObjectsSkipped}`);
    return;
  }
  const { objects, rewritten, foreign } = rewriteHookUrls(
    readMetacontrollerObjects(metacontrollerDir),
    hookServerUrl,
  );
  for (const line of rewritten) log(`hook rewritten: ${line}`);
  for (const line of foreign) log(`hook left alone (not KubeCell's hook server): ${line}`);
  const applied = await controlPlane.kubectl(
    ['apply', '--server-side', '--field-manager=kubecell-local', '-f', '-'],
    { input: toYamlStream(objects) },
  );
  if (applied.code !== 0) {
    throw new Error(
      `applying metacontroller/ failed (${applied.code ?? applied.signal}):\n${applied.stderr}${applied.stdout}`,
    );
  }
  state.metacontrollerObjects = applied.stdout
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split(' ')[0] ?? line);
  log(`applied ${state.metacontrollerObjects.join(', ')}`);
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

  const controlPlaneLog = (line: string): void => log(`[control-plane] ${line}`);
  const binaries = await ensureBinaries({ log: controlPlaneLog });
  // startControlPlane() creates its directory in os.tmpdir(). Pointed at the local directory, a
  // directory left behind by an instance that was killed is found and removed here, by the
  // next start, instead of piling up in /tmp. Only one instance runs per local directory.
  rmSync(localTmpDir, { recursive: true, force: true });
  mkdirSync(localTmpDir, { recursive: true });
  const callersTmpdir = process.env.TMPDIR;
  process.env.TMPDIR = localTmpDir;
  cluster = await startControlPlane({
    binaries,
    metacontroller: { applyStrategy: 'server-side-apply' },
    log: controlPlaneLog,
  });
  takeOverSignals();
  const { processes } = cluster;
  state.dir = cluster.dir;
  state.apiserverUrl = cluster.apiserverUrl;
  state.kubectl = cluster.binaries.kubectl;
  state.metacontrollerRunning = processes.metacontroller !== undefined;
  state.processes = {
    etcd: record(processes.etcd, cluster.binaries.etcd),
    'kube-apiserver': record(processes.kubeApiserver, cluster.binaries.kubeApiserver),
    'kube-controller-manager': record(
      processes.kubeControllerManager,
      cluster.binaries.kubeControllerManager,
    ),
    ...(processes.metacontroller && cluster.binaries.metacontroller
      ? { metacontroller: record(processes.metacontroller, cluster.binaries.metacontroller) }
      : {}),
  };
  save();

  const [hookPort] = (await freeLoopbackPorts(1)) as [number];
  const hookServerUrl = `http://127.0.0.1:${hookPort}`;
  rmSync(path.join(localLogDir, 'hook-server.log'), { force: true });
  const hookEnv: NodeJS.ProcessEnv = {
    ...process.env,
    KUBECELL_PORT: String(hookPort),
    // Should the hook server ever talk to the API, it must be this cluster's.
    KUBECONFIG: cluster.kubeconfigPath,
  };
  // The admission webhook needs certificates the local instance does not have (and its fixed
  // port could collide); it stays off even if the caller's environment configures it.
  delete hookEnv.KUBECELL_TLS_CERT_FILE;
  delete hookEnv.KUBECELL_TLS_KEY_FILE;
  // tsx keeps its compile cache in the temporary directory; the caller's survives restarts.
  if (callersTmpdir === undefined) delete hookEnv.TMPDIR;
  else hookEnv.TMPDIR = callersTmpdir;
  hookServer = startManagedProcess({
    name: 'hook-server',
    command: process.execPath,
    args: ['--import', 'tsx', hookServerEntry],
    cwd: repoRoot,
    env: hookEnv,
    logDir: localLogDir,
  });
  state.processes['hook-server'] = record(hookServer, hookServerEntry);
  state.hookServerUrl = hookServerUrl;
  save();
  const runningHookServer = hookServer;
  // The hook server needs nothing from the API, so it starts while the CRDs are installed.
  log('installing the upstream CRDs, KubeCell CRDs, kubecell-system and the host namespaces');
  await Promise.all([
    installKubeCellApi(cluster).then(() => log('CRDs and namespaces installed')),
    waitForHttpOk(
      'hook server /readyz',
      `${hookServerUrl}/readyz`,
      {},
      { timeoutMs: 60_000, process: runningHookServer },
    ).then(() => log(`hook server ready on ${hookServerUrl} (log ${runningHookServer.logFile})`)),
  ]);

  await applyMetacontrollerObjects(cluster, hookServerUrl);

  // A copy at a stable path; the certificates are embedded, so it stands on its own.
  copyFileSync(cluster.kubeconfigPath, localKubeconfigFile);
  chmodSync(localKubeconfigFile, 0o600);
  state.kubeconfig = localKubeconfigFile;
  state.startupSeconds = (performance.now() - started) / 1000;
  state.ready = true;
  if (phase !== 'starting') return; // A signal arrived meanwhile; shutdown() is under way.
  save();
  phase = 'running';
  watchForUnexpectedExits([...Object.values(processes), hookServer]);
  log(`ready in ${state.startupSeconds.toFixed(1)} s; kubeconfig ${localKubeconfigFile}`);
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
