// Child processes for the cluster tests: short commands whose output we need (go, openssl,
// kubectl) and long-running servers (etcd, kube-apiserver, ...) that must never outlive the
// test run.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import type { PollOptions } from '../poll.js';

export interface CommandResult {
  stdout: string;
  stderr: string;
  /** Exit code; null when the process was killed by a signal (see `signal`). */
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunCommandOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Written to the child's stdin, which is then closed. */
  input?: string;
  /** Kill the command (SIGKILL) after this long; the result then carries the signal. */
  timeoutMs?: number;
  /** Stream the child's output to ours while also capturing it (for long builds). */
  echo?: boolean;
}

/** Runs a command to completion and captures its output. Never throws on a non-zero exit. */
export function runCommand(
  file: string,
  args: readonly string[],
  options: RunCommandOptions = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => {
      stdout.push(chunk);
      if (options.echo) process.stdout.write(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr.push(chunk);
      if (options.echo) process.stderr.write(chunk);
    });
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', (error) => {
      if (timer) clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
        code,
        signal,
      });
    });
    child.stdin.on('error', () => {
      // The child may exit before reading its stdin (EPIPE); its exit status tells the story.
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Like runCommand, but throws (with the command's output) unless it exits 0. */
export async function runCommandOrThrow(
  file: string,
  args: readonly string[],
  options: RunCommandOptions = {},
): Promise<CommandResult> {
  const result = await runCommand(file, args, options);
  if (result.code !== 0) {
    throw new Error(
      `command failed (${result.code ?? result.signal}): ${file} ${args.join(' ')}\n${result.stderr || result.stdout}`,
    );
  }
  return result;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  /** Combined stdout and stderr of the process. */
  readonly logFile: string;
  /** Resolves when the process has exited, for whatever reason. */
  readonly exited: Promise<ProcessExit>;
  /** Set once the process has exited. */
  exitStatus(): ProcessExit | undefined;
  /** SIGTERM to the whole process group, SIGKILL after `graceMs`; resolves once it is gone. */
  stop(graceMs?: number): Promise<void>;
}

export interface StartProcessOptions {
  name: string;
  command: string;
  args: readonly string[];
  logDir: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

// Process groups of every server we started and that has not exited yet. A detached child
// leads its own process group, so killing -pid also reaches anything it spawned.
const liveProcessGroups = new Set<number>();

function killProcessGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone (ESRCH) — nothing left to stop.
  }
}

let exitCleanupInstalled = false;

// Servers are started detached (their own process group) so that stop() can take down the
// whole group, which means they would survive the test runner. These handlers make sure an
// interrupted or crashing run does not leave etcd and kube-apiserver behind.
function installExitCleanup(): void {
  if (exitCleanupInstalled) return;
  exitCleanupInstalled = true;
  process.on('exit', () => {
    for (const pid of liveProcessGroups) killProcessGroup(pid, 'SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      for (const pid of liveProcessGroups) killProcessGroup(pid, 'SIGKILL');
      liveProcessGroups.clear();
      process.removeListener(signal, onSignal);
      // Restore the default behaviour (terminate) unless someone else handles the signal.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

/** Starts a long-running server whose output goes to `<logDir>/<name>.log`. */
export function startManagedProcess(options: StartProcessOptions): ManagedProcess {
  installExitCleanup();
  const logFile = path.join(options.logDir, `${options.name}.log`);
  const logFd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(options.command, options.args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      detached: true,
      stdio: ['ignore', logFd, logFd],
    });
  } finally {
    // The child has its own copy of the descriptor.
    closeSync(logFd);
  }
  if (child.pid === undefined) {
    throw new Error(`could not start ${options.name} (${options.command}); see ${logFile}`);
  }
  const pid = child.pid;
  liveProcessGroups.add(pid);
  let exitStatus: ProcessExit | undefined;
  const exited = new Promise<ProcessExit>((resolve) => {
    child.on('exit', (code, signal) => {
      exitStatus = { code, signal };
      liveProcessGroups.delete(pid);
      // Reap anything the server left behind in its group.
      killProcessGroup(pid, 'SIGKILL');
      resolve(exitStatus);
    });
    child.on('error', () => {
      exitStatus ??= { code: null, signal: null };
      liveProcessGroups.delete(pid);
      resolve(exitStatus);
    });
  });
  // Do not keep the test runner alive just because a server is still running.
  child.unref();

  return {
    name: options.name,
    pid,
    logFile,
    exited,
    exitStatus: () => exitStatus,
    async stop(graceMs = 10_000): Promise<void> {
      if (exitStatus) return;
      // While stopping, the child must keep the event loop alive or its exit may go unseen.
      child.ref();
      killProcessGroup(pid, 'SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), graceMs);
      });
      const outcome = await Promise.race([exited, timedOut]);
      if (timer) clearTimeout(timer);
      if (outcome === 'timeout') {
        killProcessGroup(pid, 'SIGKILL');
        await exited;
      }
    },
  };
}

/** The last lines of a log file, for error messages. */
export function logTail(logFile: string, lines = 30): string {
  if (!existsSync(logFile)) return '(no log file)';
  const content = readFileSync(logFile, 'utf8').trimEnd().split('\n');
  return content.slice(-lines).join('\n');
}

export function describeExit(exit: ProcessExit): string {
  return exit.signal ? `killed by ${exit.signal}` : `exited with code ${exit.code}`;
}

/**
 * Poll options (harness/poll.ts) for a wait that depends on running servers: it stops at once
 * when one of them exits, and a timeout shows the end of their logs.
 */
export function whileRunning(
  ...processes: readonly ManagedProcess[]
): Required<Pick<PollOptions, 'abort' | 'context'>> {
  return {
    abort: () => {
      for (const process of processes) {
        const exit = process.exitStatus();
        if (exit) {
          return `${process.name} ${describeExit(exit)}; log ${process.logFile}:\n${logTail(process.logFile)}`;
        }
      }
      return undefined;
    },
    context: () =>
      processes
        .map(
          (process) =>
            `--- ${process.name} log ${process.logFile} (end):\n${logTail(process.logFile)}`,
        )
        .join('\n'),
  };
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
