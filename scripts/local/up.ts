// `npm run local-up`: a local KubeCell to try by hand, without a cluster.
//
// Starts supervisor.ts detached (it keeps running after this command returns), shows its
// progress, and once it reports ready prints the KUBECONFIG to export, what runs and what does
// not. Everything on stdout is either the `export KUBECONFIG=...` line or a `#` comment, so
//
//   eval "$(npm run --silent local-up)"            (or: ... local-up -- --simulate)
//
// works as well. Progress goes to stderr. `npm run local-down` stops it.
//
// `--simulate`: the supervisor also runs harness/simulate/ (the simulated OCM, kubelets, k3k,
// KubeVirt and Cluster API the cluster tests use), so that applied samples become Ready.
// `--remote` (with --simulate): also the real OCM hub and a managed cluster cell-remote joined to
// it, with a sample Cell delivered there by ManifestWork (supervisor.ts, remote.ts).
//
// Environment: KUBECELL_UPSTREAM_DIR (the upstream inputs, default ../shared; checked by sha256
// before the supervisor starts), KUBECELL_LOCAL_DIR (state directory, default .cache/local),
// KUBECELL_LOCAL_UP_TIMEOUT_SECONDS (default 900: a first run builds Kubernetes from source).
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readSync, fstatSync } from 'node:fs';
import { isAlive, signalGroup } from '../../harness/cluster/processes.js';
import {
  UpstreamInputsError,
  verifyUpstreamInputs,
} from '../../harness/cluster/upstream-inputs.js';
import { sleep } from '../../harness/poll.js';
import { USAGE, parseUpArguments } from './options.js';
import { summary } from './summary.js';
import {
  liveProcesses,
  localDir,
  readState,
  removeState,
  repoRoot,
  stateFile,
  supervisorAlive,
  supervisorLogFile,
  supervisorScript,
  waitUntilGone,
  type LocalState,
} from './state.js';

const timeoutSeconds = Number(process.env.KUBECELL_LOCAL_UP_TIMEOUT_SECONDS ?? '900');

/** Without news from the supervisor for this long, say that it is still working. */
const HEARTBEAT_MS = 60_000;

function progress(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Follows a growing log file from the start. */
class LogFollower {
  private offset = 0;
  private partial = '';
  constructor(private readonly file: string) {}

  /** Writes everything new to stderr; returns whether there was anything. */
  flush(final = false): boolean {
    if (!existsSync(this.file)) return false;
    const fd = openSync(this.file, 'r');
    let text = '';
    try {
      const size = fstatSync(fd).size;
      if (size > this.offset) {
        const buffer = Buffer.alloc(size - this.offset);
        const read = readSync(fd, buffer, 0, buffer.length, this.offset);
        this.offset += read;
        text = buffer.subarray(0, read).toString('utf8');
      }
    } finally {
      closeSync(fd);
    }
    const lines = (this.partial + text).split('\n');
    this.partial = final ? '' : (lines.pop() ?? '');
    const complete = lines.filter((line, index) => line !== '' || index < lines.length - 1);
    for (const line of complete) progress(`  ${line}`);
    return complete.length > 0;
  }
}

function refuseSecondInstance(existing: LocalState): number {
  progress(
    `KubeCell local is already ${existing.ready ? 'running' : 'starting'} ` +
      `${existing.simulated ? 'WITH the simulation (--simulate) ' : 'without the simulation '}` +
      `${existing.remote ? `and the managed cluster ${existing.remote.managedCluster} (--remote) ` : ''}` +
      `(supervisor pid ${existing.supervisorPid}, state ${stateFile}).`,
  );
  if (existing.ready && existing.kubeconfig) {
    progress(`Use it:   export KUBECONFIG=${existing.kubeconfig}`);
  }
  progress('Or stop it first:   npm run local-down');
  return 1;
}

/** Removes what a supervisor that is gone left behind (it was killed, or its start failed). */
async function cleanUpStale(stale: LocalState): Promise<void> {
  for (const [name, recorded] of liveProcesses(stale)) {
    progress(`killing ${name} (pid ${recorded.pid}) left behind by an earlier run`);
    signalGroup(recorded.pid, 'SIGKILL');
  }
  await waitUntilGone(() => liveProcesses(stale).length === 0, 10_000);
  removeState();
  progress(
    `removed the state of an earlier run that is no longer running (${stateFile})` +
      (stale.error === undefined ? '' : `; it had ended: ${firstLines(stale.error, 1)[0] ?? ''}`),
  );
}

function firstLines(text: string, count: number): string[] {
  const lines = text.trim().split('\n');
  return lines.length <= count ? lines : [...lines.slice(0, count), '...'];
}

async function main(): Promise<number> {
  const parsed = parseUpArguments(process.argv.slice(2));
  if (parsed === 'help') {
    progress(USAGE);
    return 0;
  }
  if ('error' in parsed) {
    progress(`local-up: ${parsed.error}\n${USAGE}`);
    return 2;
  }
  mkdirSync(localDir, { recursive: true });
  const existing = readState();
  if (existing) {
    if (supervisorAlive(existing)) return refuseSecondInstance(existing);
    await cleanUpStale(existing);
  }
  // Before anything starts: without the pinned upstream inputs the supervisor could build and
  // start nothing; this says within a second which files are missing and how to get each.
  try {
    verifyUpstreamInputs();
  } catch (error) {
    if (!(error instanceof UpstreamInputsError)) throw error;
    progress(`local-up: ${error.message}`);
    return 1;
  }

  const logFd = openSync(supervisorLogFile, 'w');
  const supervisorArgs = [
    '--import',
    'tsx',
    supervisorScript,
    ...(parsed.simulate ? ['--simulate'] : []),
    ...(parsed.remote ? ['--remote'] : []),
  ];
  const supervisor = spawn(process.execPath, supervisorArgs, {
    cwd: repoRoot,
    detached: true,
    stdio: ['ignore', logFd, logFd],
    env: { ...process.env, KUBECELL_LOCAL_DIR: localDir },
  });
  closeSync(logFd);
  const supervisorPid = supervisor.pid;
  if (supervisorPid === undefined) {
    progress(`could not start the supervisor (${process.execPath} ${supervisorScript})`);
    return 1;
  }
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  supervisor.on('exit', (code, signal) => {
    exit = { code, signal };
  });
  supervisor.unref();

  // Interrupting local-up while it starts stops what it started.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      progress(`\ninterrupted; stopping the supervisor (pid ${supervisorPid})`);
      signalGroup(supervisorPid, 'SIGTERM');
      progress('if anything is left, `npm run local-down` cleans it up');
      process.exit(130);
    });
  }

  progress(
    `starting KubeCell local${parsed.simulate ? ' with the SIMULATED outside world (--simulate)' : ''}` +
      `${parsed.remote ? ', the real OCM hub and the managed cluster cell-remote (--remote)' : ''} ` +
      `(supervisor pid ${supervisorPid}, log ${supervisorLogFile})`,
  );
  const follower = new LogFollower(supervisorLogFile);
  const began = Date.now();
  let lastNews = Date.now();
  for (;;) {
    if (follower.flush()) lastNews = Date.now();
    const state = readState();
    if (state?.supervisorPid === supervisorPid && state.ready) {
      follower.flush(true);
      process.stdout.write(`${summary(state).join('\n')}\n`);
      return 0;
    }
    if (state?.supervisorPid === supervisorPid && state.error !== undefined) {
      // The supervisor stops what it started before it exits; let it finish and show that too.
      await waitUntilGone(() => exit !== undefined || !isAlive(supervisorPid), 60_000);
      follower.flush(true);
      removeState();
      progress(`\nKubeCell local did not start: ${firstLines(state.error, 1)[0] ?? ''}`);
      progress(`(the whole supervisor log is ${supervisorLogFile})`);
      return 1;
    }
    if (exit !== undefined || !isAlive(supervisorPid)) {
      follower.flush(true);
      if (readState()?.supervisorPid === supervisorPid) removeState();
      const how =
        exit === undefined
          ? 'exited'
          : exit.signal
            ? `was killed by ${exit.signal}`
            : `exited with code ${exit.code}`;
      progress(`\nthe supervisor ${how} before KubeCell local was ready; see ${supervisorLogFile}`);
      return 1;
    }
    const elapsedMs = Date.now() - began;
    if (elapsedMs > timeoutSeconds * 1000) {
      follower.flush(true);
      progress(
        `\nKubeCell local was not ready after ${timeoutSeconds} s; stopping it ` +
          '(KUBECELL_LOCAL_UP_TIMEOUT_SECONDS sets a longer wait)',
      );
      signalGroup(supervisorPid, 'SIGTERM');
      await waitUntilGone(() => !isAlive(supervisorPid), 30_000);
      follower.flush(true);
      return 1;
    }
    if (Date.now() - lastNews > HEARTBEAT_MS) {
      progress(
        `  ... still starting (${Math.round(elapsedMs / 1000)} s; a first run builds the binaries, about 10 to 30 minutes on 2 cores)`,
      );
      lastNews = Date.now();
    }
    await sleep(300);
  }
}

process.exitCode = await main();
