/** Servers the benchmark starts as separate processes, and their CPU time. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { poll } from '../harness/poll.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface Server {
  name: string;
  base: string;
  process: ChildProcess;
  /** User + system CPU time of the process so far, in milliseconds (Linux /proc). */
  cpuMs(): number | undefined;
  stop(): Promise<void>;
}

/** Linux reports CPU time in clock ticks; 100 per second on every mainstream kernel. */
const CLOCK_TICKS_PER_SECOND = 100;

export function cpuMsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start at ") ".
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

function waitForOk(url: string, child: ChildProcess, stderr: () => string): Promise<void> {
  return poll(
    `${url} to answer`,
    async () => {
      const res = await fetch(url);
      return res.ok ? { value: undefined } : { notYet: `HTTP ${res.status}` };
    },
    {
      timeoutMs: 60_000,
      intervalMs: 100,
      abort: () =>
        child.exitCode === null
          ? undefined
          : `the process exited with ${child.exitCode}: ${stderr()}`,
      context: stderr,
    },
  );
}

/**
 * Starts `node --import tsx <script> ...args` from the repository root with stdout discarded
 * (the hook server logs one JSON line per call there, as in production) and waits until
 * `readyPath` answers 2xx.
 */
export async function startServer(options: {
  name: string;
  script: string;
  args?: string[];
  env?: Record<string, string>;
  port: number;
  readyPath: string;
}): Promise<Server> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', options.script, ...(options.args ?? [])],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const base = `http://127.0.0.1:${options.port}`;
  try {
    await waitForOk(`${base}${options.readyPath}`, child, () => stderr);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    name: options.name,
    base,
    process: child,
    cpuMs: () => cpuMsOf(child.pid),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
