// What the tests of `npm run local-up` / `npm run local-down` (scripts/local/) share:
// local.test.ts (`--simulate`) and local-remote.test.ts (`--simulate --remote`) run the scripts
// as a user would, each in a state directory of its own (KUBECELL_LOCAL_DIR), so that neither a
// developer's running instance nor the shared test cluster is touched.
//
//   localInstance()  mocha hooks: build the binaries, run local-up once; afterwards local-down
//                    and a SIGKILL for anything recorded that still runs. The LocalInstance it
//                    returns runs kubectl, waits for Ready objects (waitUntilReady), and checks
//                    that local-down leaves no process of the instance (expectDownStopsAll)
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { LocalState } from '../../harness/local-state.js';
import { ensureBinaries, type BuiltBinaries } from '../../harness/cluster/binaries.js';
import { repoRoot } from '../../harness/cluster/paths.js';
import {
  isAlive,
  runCommand,
  signalGroup,
  type CommandResult,
} from '../../harness/cluster/processes.js';
import { CLUSTER_SETUP_TIMEOUT_MS } from './shared-cluster.js';

/** Runs `npx tsx <script> <args>` from the repository root with KUBECELL_LOCAL_DIR set. */
export function runScript(
  script: string,
  localDir: string,
  timeoutMs: number,
  args: readonly string[] = [],
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['tsx', script, ...args], {
      cwd: repoRoot,
      env: { ...process.env, KUBECELL_LOCAL_DIR: localDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
        code,
        signal,
      });
    });
  });
}

export function output(result: CommandResult): string {
  return `exit ${result.code ?? result.signal}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

/** metadata.name of every object of `kind` in the YAML files, sorted. */
export function namesOfKind(kind: string, files: readonly string[]): string[] {
  return files
    .flatMap((file) =>
      parseAllDocuments(readFileSync(file, 'utf8')).map(
        (document) => document.toJS() as { kind?: string; metadata?: { name?: string } } | null,
      ),
    )
    .filter((object) => object?.kind === kind)
    .map((object) => object?.metadata?.name ?? '')
    .sort();
}

export interface StatusObject {
  metadata: { name: string; namespace?: string; uid?: string };
  status?: { phase?: string; conditions?: { type: string; status: string; reason?: string }[] };
}

function isReady(object: StatusObject): boolean {
  return (
    object.status?.conditions?.some(
      (condition) => condition.type === 'Ready' && condition.status === 'True',
    ) ?? false
  );
}

function describeStatus(object: StatusObject): string {
  const ready = object.status?.conditions?.find((condition) => condition.type === 'Ready');
  return `${object.metadata.name}: phase ${object.status?.phase ?? '-'}, Ready ${ready?.status ?? '-'} ${ready?.reason ?? ''}`;
}

/** One process local-up started (the supervisor records them in state.json). */
interface SeenProcess {
  name: string;
  pid: number;
  command: string | undefined;
}

function readStateFile(file: string): LocalState | undefined {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as LocalState) : undefined;
}

/** One local instance, started by localInstance()'s before hook. */
export class LocalInstance {
  binaries!: BuiltBinaries;
  localDir!: string;
  stateFile!: string;
  /** The hub's kubeconfig where local-up writes it (`<KUBECELL_LOCAL_DIR>/kubeconfig`). */
  kubeconfig!: string;
  up!: CommandResult;
  /** state.json as local-up left it when it returned. */
  state!: LocalState;
  /** Every server process state.json named while the test read it (see recordProcesses). */
  readonly seen: SeenProcess[] = [];

  /** Reads state.json again and adds the processes it names now (e.g. a later cell agent). */
  recordProcesses(): LocalState | undefined {
    const state = readStateFile(this.stateFile);
    for (const [name, recorded] of Object.entries(state?.processes ?? {})) {
      if (!this.seen.some((known) => known.name === name && known.pid === recorded.pid)) {
        this.seen.push({ name, pid: recorded.pid, command: recorded.command });
      }
    }
    return state;
  }

  /** kubectl on the hub, or on the cluster of `kubeconfig`. */
  kubectl(args: readonly string[], kubeconfig?: string): Promise<CommandResult> {
    return runCommand(
      this.binaries.kubectl,
      [`--kubeconfig=${kubeconfig ?? this.kubeconfig}`, ...args],
      { timeoutMs: 120_000 },
    );
  }

  /** Later tests only make sense on a running instance; says why not instead of a TypeError. */
  requireUp(): void {
    if (this.up.code !== 0 || this.state?.ready !== true) {
      throw new Error(`local-up did not start the instance:\n${output(this.up)}`);
    }
  }

  /** local-up with `args` exits 2 with `message` and its usage on stderr, nothing on stdout. */
  async expectRefused(args: readonly string[], message: string): Promise<void> {
    const wrong = await runScript('scripts/local/up.ts', this.localDir, 60_000, args);
    expect(wrong.code, output(wrong)).to.equal(2);
    expect(wrong.stderr).to.include(message);
    expect(wrong.stderr).to.include('usage: npm run local-up [-- --simulate [--remote]]');
    expect(wrong.stdout.trim()).to.equal('');
  }

  /**
   * Lists each resource in all namespaces every second until every named object is Ready, or
   * `timeoutMs` passed; `since` (performance.now()) is where readyAfter counts from. `onPoll`
   * runs after every round.
   */
  async waitUntilReady(
    wanted: readonly { resource: string; label: string; names: readonly string[] }[],
    since: number,
    timeoutMs: number,
    onPoll: () => void = () => undefined,
  ): Promise<ReadyWait[]> {
    const waits: ReadyWait[] = wanted.map((entry) => ({ ...entry, last: [] }));
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      for (const wait of waits) {
        if (wait.readyAfter !== undefined) continue;
        const listed = await this.kubectl(['get', wait.resource, '--all-namespaces', '-o', 'json']);
        expect(listed.code, output(listed)).to.equal(0);
        wait.last = (JSON.parse(listed.stdout) as { items: StatusObject[] }).items;
        const ready = wait.last.filter(isReady).map((object) => object.metadata.name);
        if (wait.names.every((name) => ready.includes(name))) {
          wait.readyAfter = (performance.now() - since) / 1000;
        }
      }
      onPoll();
      if (waits.every((wait) => wait.readyAfter !== undefined)) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    return waits;
  }

  /**
   * Runs local-down and checks what it must leave: exit 0 without SIGKILL, neither the
   * supervisor nor any process seen in state.json alive, state.json, the kubeconfig and the
   * control plane's directory gone. Returns local-down's result.
   */
  async expectDownStopsAll(): Promise<CommandResult> {
    const { state } = this;
    const down = await runScript('scripts/local/down.ts', this.localDir, 90_000);
    expect(down.code, output(down)).to.equal(0);
    expect(down.stdout).to.include('no process of it is left');
    expect(down.stdout, 'nothing should have needed SIGKILL').to.not.include('had to kill');
    expect(isAlive(state.supervisorPid), `supervisor ${state.supervisorPid}`).to.equal(false);
    for (const recorded of this.seen) {
      expect(isAlive(recorded.pid), `${recorded.name} (pid ${recorded.pid})`).to.equal(false);
    }
    expect(existsSync(this.stateFile), this.stateFile).to.equal(false);
    expect(existsSync(this.kubeconfig), this.kubeconfig).to.equal(false);
    if (state.dir !== undefined) expect(existsSync(state.dir), state.dir).to.equal(false);
    return down;
  }

  /** local-down with nothing running says so and succeeds. */
  async expectDownAgainNotRunning(): Promise<void> {
    const again = await runScript('scripts/local/down.ts', this.localDir, 60_000);
    expect(again.code, output(again)).to.equal(0);
    expect(again.stdout).to.include('not running');
  }

  /** The supervisor's log (`<KUBECELL_LOCAL_DIR>/supervisor.log`). */
  supervisorLog(): string {
    return readFileSync(path.join(this.localDir, 'supervisor.log'), 'utf8');
  }
}

/**
 * Registers the mocha hooks of one local instance: before, `local-up <upArgs>` in a new state
 * directory; after, whatever the tests did, local-down and a SIGKILL for anything recorded that
 * still runs, then the directory goes. The returned object is filled in by the before hook.
 */
export function localInstance(upArgs: readonly string[], dirPrefix: string): LocalInstance {
  const instance = new LocalInstance();

  before(async function () {
    // A cold build of the binaries happens here rather than inside local-up's own 15-minute wait.
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    instance.binaries = await ensureBinaries();
    instance.localDir = mkdtempSync(path.join(os.tmpdir(), dirPrefix));
    instance.stateFile = path.join(instance.localDir, 'state.json');
    instance.up = await runScript('scripts/local/up.ts', instance.localDir, 10 * 60_000, upArgs);
    const state = instance.recordProcesses();
    if (state) instance.state = state;
    instance.kubeconfig = path.join(instance.localDir, 'kubeconfig');
  });

  after(async function () {
    // Whatever the tests did, nothing may outlive them: local-down, then anything still recorded.
    this.timeout(120_000);
    if (instance.localDir === undefined) return;
    if (existsSync(instance.stateFile)) {
      await runScript('scripts/local/down.ts', instance.localDir, 60_000);
    }
    if (instance.state) {
      for (const recorded of [
        { pid: instance.state.supervisorPid, command: undefined },
        ...instance.seen,
      ]) {
        if (isAlive(recorded.pid, recorded.command)) signalGroup(recorded.pid, 'SIGKILL');
      }
    }
    rmSync(instance.localDir, { recursive: true, force: true });
  });

  return instance;
}

/** Objects of one resource to wait for, and what the wait saw. */
export interface ReadyWait {
  resource: string;
  /** How a failure names them: `sample <label> not all Ready`. */
  label: string;
  names: readonly string[];
  /** Seconds from `since` until all were Ready; undefined when they were not in time. */
  readyAfter?: number;
  /** The objects as last listed (all namespaces). */
  last: StatusObject[];
}

/** How long a wait took, for the printed timing line. */
export function took(wait: ReadyWait, timeoutMs: number): string {
  return wait.readyAfter === undefined
    ? `not within ${timeoutMs / 1000} s`
    : `${wait.readyAfter.toFixed(1)} s`;
}

/** Every wait ended Ready, and found exactly the objects it waited for. */
export function expectAllReady(waits: readonly ReadyWait[]): void {
  for (const wait of waits) {
    expect(
      wait.readyAfter,
      `sample ${wait.label} not all Ready:\n${wait.last.map(describeStatus).join('\n')}`,
    ).to.not.equal(undefined);
  }
  for (const wait of waits) {
    expect(wait.last.map((object) => object.metadata.name).sort()).to.deep.equal(wait.names);
  }
}
