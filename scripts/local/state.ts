// What `npm run local-up`, its supervisor and `npm run local-down` share: where the local
// instance keeps its state, and reading and writing the state file (its shape is
// harness/local-state.ts, which the tests that run local-up read too).
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
import { isAlive } from '../../harness/cluster/processes.js';
import type { LocalState, RecordedProcess } from '../../harness/local-state.js';
import { poll, PollTimeout } from '../../harness/poll.js';

export { repoRoot };
export type { LocalState, RecordedProcess, RemoteState } from '../../harness/local-state.js';

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
