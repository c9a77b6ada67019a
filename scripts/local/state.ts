// What `npm run local-up`, its supervisor and `npm run local-down` share: where the local
// instance keeps its state, the state file itself, and telling whether a recorded process still
// runs.
//
// Layout of the local directory (default `.cache/local/`, git-ignored; KUBECELL_LOCAL_DIR
// overrides it, e.g. for a test that must not meet a developer's running instance):
//
//   state.json        written by the supervisor; present while an instance starts or runs
//   supervisor.log    the supervisor's output (progress, control-plane lines, shutdown)
//   kubeconfig        cluster-admin kubeconfig of the running instance (removed on shutdown)
//   logs/             the hook server's log (and, with --remote, the cell agent's)
//   remote/           with --remote: the managed cluster's kubeconfig, the hub's sealing key, a
//                     sample Cell and VirtualCluster for it (remote-files.ts); removed on shutdown
//   tmp/              TMPDIR of the control plane: its directory (etcd data, certificates,
//                     component logs) lives here, so nothing of it lands in /tmp; emptied
//                     when the next instance starts
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../harness/cluster/paths.js';
import { poll, PollTimeout } from '../../harness/poll.js';

export { repoRoot };

export const localDir = path.resolve(
  process.env.KUBECELL_LOCAL_DIR?.trim() || path.join(repoRoot, '.cache', 'local'),
);
export const stateFile = path.join(localDir, 'state.json');
export const supervisorLogFile = path.join(localDir, 'supervisor.log');
export const localKubeconfigFile = path.join(localDir, 'kubeconfig');
export const localLogDir = path.join(localDir, 'logs');
export const localTmpDir = path.join(localDir, 'tmp');

/** The supervisor's entry point; also how its process is recognised (see isAlive). */
export const supervisorScript = path.join(repoRoot, 'scripts', 'local', 'supervisor.ts');

/** A process the local instance started; each leads its own process group. */
export interface RecordedProcess {
  pid: number;
  /** The executable it was started from, to tell it from a later process with the same pid. */
  command: string;
  logFile: string;
}

export interface LocalState {
  /** true once everything runs and the kubeconfig works. */
  ready: boolean;
  /** Set when starting failed; the supervisor has then stopped everything and exited. */
  error?: string;
  supervisorPid: number;
  startedAt: string;
  /** Seconds from the supervisor's start until ready (binaries included). */
  startupSeconds?: number;
  /** The control plane's temporary directory (data, certificates, component logs). */
  dir?: string;
  /** Cluster-admin kubeconfig (a copy under the local directory). */
  kubeconfig?: string;
  apiserverUrl?: string;
  /** http://127.0.0.1:<port> */
  hookServerUrl?: string;
  /** The kubectl built for this cluster's version. */
  kubectl?: string;
  /** The Metacontroller release running. */
  metacontrollerVersion?: string;
  /** Whether the simulated outside world (harness/simulate/) runs: `--simulate`. */
  simulated?: boolean;
  /** With `--remote`: the managed cluster joined to the real OCM hub. */
  remote?: RemoteState;
  /** `kind/name` of the Metacontroller objects applied from metacontroller/. */
  metacontrollerObjects?: string[];
  /** Every server process, by name (etcd, kube-apiserver, ..., hook-server). */
  processes: Record<string, RecordedProcess>;
}

export interface RemoteState {
  /** The ManagedCluster's name on the hub (cell-remote). */
  managedCluster: string;
  /** Cluster-admin kubeconfig of the managed cluster (a copy under remote/). */
  kubeconfig?: string;
  apiserverUrl?: string;
  /** The ready-to-apply sample: a Cell with delivery ManifestWork and a VirtualCluster on it. */
  sampleFile?: string;
  /** The hub's private sealing key (KUBECELL_SEALING_KEY_FILE of the hook server). */
  sealingKeyFile?: string;
}

export function readState(): LocalState | undefined {
  if (!existsSync(stateFile)) return undefined;
  try {
    return JSON.parse(readFileSync(stateFile, 'utf8')) as LocalState;
  } catch {
    // Half-written by a writer that died between write and rename cannot happen (see
    // writeState); anything else unreadable is treated as no state.
    return undefined;
  }
}

/** Atomic: readers see the old or the new file, never a partial one. */
export function writeState(state: LocalState): void {
  const temporary = `${stateFile}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(temporary, stateFile);
}

export function removeState(): void {
  rmSync(stateFile, { force: true });
}

/**
 * Whether `pid` is a live process, and (where /proc tells) one started from `command` rather
 * than an unrelated process that reused the pid. A zombie counts as gone: it runs nothing and
 * only waits for its parent to reap it.
 */
export function isAlive(pid: number, command?: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const procDir = `/proc/${pid}`;
  if (existsSync('/proc/self/stat')) {
    let stat: string;
    try {
      stat = readFileSync(`${procDir}/stat`, 'utf8');
    } catch {
      return false;
    }
    // "pid (comm) S ...": the state follows the last ')' (comm may contain anything).
    const processState = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (processState === 'Z' || processState === 'X') return false;
    if (command === undefined) return true;
    try {
      const argv = readFileSync(`${procDir}/cmdline`, 'utf8').split('\0');
      return argv.includes(command);
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The supervisor of `state`, if it still runs. */
export function supervisorAlive(state: LocalState): boolean {
  return isAlive(state.supervisorPid, supervisorScript);
}

/** Recorded processes that still run. */
export function liveProcesses(state: LocalState): [string, RecordedProcess][] {
  return Object.entries(state.processes).filter(([, recorded]) =>
    isAlive(recorded.pid, recorded.command),
  );
}

/** Sends `signal` to the process group led by `pid` (and to `pid` itself); ignores ESRCH. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, signal);
    } catch {
      // Already gone.
    }
  }
}

/** Waits until `isGone()` (at most `timeoutMs`); whether it came to pass. */
export async function waitUntilGone(
  isGone: () => boolean,
  timeoutMs: number,
  intervalMs = 200,
): Promise<boolean> {
  try {
    return await poll(
      'the processes to be gone',
      async () => (isGone() ? { value: true } : { notYet: 'still running' }),
      { timeoutMs, intervalMs },
    );
  } catch (error) {
    if (error instanceof PollTimeout) return false;
    throw error;
  }
}
