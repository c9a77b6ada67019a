/**
 * `npm run bench`: the KubeCell benchmark. Writes bench/results.json and bench/results.md.
 *
 *   npm run bench                         everything (about 50 minutes on 2 cores)
 *   npm run bench -- --only=http,scaling  some parts: http, scaling, apiserver, metacontroller, idle,
 *                                         remote
 *   npm run bench -- --quick              shorter runs and sizes, to try the harness
 *   npm run bench -- --only=idle          the idle cost (issue 14), at the three points
 *   npm run bench -- --only=idle --idle-nodes=50,500 --idle-vcs=10,100
 *                                         the idle cost at every combination of these sizes
 *
 * With --only, the parts not run are kept from the previous bench/results.json (each with the
 * date, commit and load of the run that measured it), so results.md always shows every part.
 *
 * Parts (method and discussion in docs/performance.md):
 *   http            hooks over HTTP with autocannon, against the real hook server and the floor
 *   scaling         Cell sync time and memory for 10 to 5,000 Nodes, against the floor
 *   apiserver       server-side apply and deletion of VirtualCluster children on a real apiserver
 *   metacontroller  apply → Ready of 1 and 50 VirtualClusters through the real Metacontroller,
 *                   with its default flags and with raised ones (about 15 minutes)
 *   idle            the cost of a quiet cluster through the real Metacontroller: one Cell with N
 *                   Nodes and M VirtualClusters, its lease renewed every 10 s; hook calls and
 *                   request bytes per controller per minute, the stored Cell's size
 *                   (bench/idle.ts; by default 50×100, 500×10 and 500×100: 20 minutes on 2 cores)
 *
 * Options of the idle part (each also from the environment variable in brackets):
 *   --idle-points=500x100,50x10   Nodes × VirtualClusters per point [KUBECELL_BENCH_IDLE_POINTS]
 *   --idle-nodes=50,500           with --idle-vcs: every combination [KUBECELL_BENCH_IDLE_NODES]
 *   --idle-vcs=10,100             (a list alone combines with 500 Nodes or 100 VirtualClusters)
 *                                 [KUBECELL_BENCH_IDLE_VCS]
 *   --idle-window=180             seconds measured once converged [KUBECELL_BENCH_IDLE_WINDOW]
 *   --idle-quiet=60               seconds with the lease renewal paused, 0 for none
 *                                 [KUBECELL_BENCH_IDLE_QUIET]
 *   --idle-settle-max=300         longest wait for the sync rate to settle
 *                                 [KUBECELL_BENCH_IDLE_SETTLE_MAX]
 *   --idle-ready-timeout=1800     longest wait for every VirtualCluster to be Ready; the point is
 *                                 then measured anyway, marked as such
 *                                 [KUBECELL_BENCH_IDLE_READY_TIMEOUT]
 *   --idle-label=after            the label the figures are kept under in results.json
 *                                 (`before` / `after` the design change of issue 14; default
 *                                 after: `before` holds the baseline measured at 3c0563c; the
 *                                 other labels are kept from the previous results.json)
 *                                 [KUBECELL_BENCH_IDLE_LABEL]
 *
 *   remote          Cells on other clusters through the real OCM hub and agents (issue 18), in one
 *                   run: apply → Ready of one VirtualCluster on a local Cell and on a remote Cell,
 *                   then the idle cost of 2 Cells on 2 managed clusters (bench/remote.ts; about
 *                   9 minutes on 2 cores)
 *
 * Options of the remote part:
 *   --remote-nodes=50     Nodes on each managed cluster
 *   --remote-vcs=20       VirtualClusters on each Cell (the one measured alone included)
 *   --remote-window=300   seconds measured once converged (300: one heartbeat of each cell
 *                         agent's report and of each Cell falls inside)
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as prettier from 'prettier';
import { runApiserverBenchmark } from './apiserver.js';
import { runCellScaling } from './cell-scaling.js';
import { runHttpBenchmark } from './http.js';
import {
  parsePoints,
  pointsOf,
  QUIET_DRAIN_MAX_SECONDS,
  runIdleBenchmark,
  type IdlePoint,
  type IdleResults,
} from './idle.js';
import { FLAG_SETS, runMetacontrollerBenchmark } from './metacontroller.js';
import { runRemoteBenchmark } from './remote.js';
import { REPO_ROOT } from './processes.js';
import {
  machine,
  markdown,
  targets,
  RESULT_KEYS,
  type KeptPart,
  type Part,
  type Results,
  PARTS,
} from './report.js';

interface IdleArgs {
  points?: string;
  nodes?: string;
  vcs?: string;
  window?: string;
  quiet?: string;
  settleMax?: string;
  readyTimeout?: string;
  label?: string;
}

const IDLE_FLAGS: Record<string, keyof IdleArgs> = {
  '--idle-points': 'points',
  '--idle-nodes': 'nodes',
  '--idle-vcs': 'vcs',
  '--idle-window': 'window',
  '--idle-quiet': 'quiet',
  '--idle-settle-max': 'settleMax',
  '--idle-ready-timeout': 'readyTimeout',
  '--idle-label': 'label',
};

const REMOTE_FLAGS = ['--remote-nodes', '--remote-vcs', '--remote-window'] as const;
type RemoteArgs = Partial<Record<(typeof REMOTE_FLAGS)[number], string>>;

function parseArgs(argv: string[]): {
  parts: Set<Part>;
  quick: boolean;
  idle: IdleArgs;
  remote: RemoteArgs;
} {
  let parts = new Set<Part>(PARTS);
  const remote: RemoteArgs = {};
  let quick = false;
  const env = process.env;
  const idle: IdleArgs = {
    ...(env.KUBECELL_BENCH_IDLE_POINTS ? { points: env.KUBECELL_BENCH_IDLE_POINTS } : {}),
    ...(env.KUBECELL_BENCH_IDLE_NODES ? { nodes: env.KUBECELL_BENCH_IDLE_NODES } : {}),
    ...(env.KUBECELL_BENCH_IDLE_VCS ? { vcs: env.KUBECELL_BENCH_IDLE_VCS } : {}),
    ...(env.KUBECELL_BENCH_IDLE_WINDOW ? { window: env.KUBECELL_BENCH_IDLE_WINDOW } : {}),
    ...(env.KUBECELL_BENCH_IDLE_QUIET ? { quiet: env.KUBECELL_BENCH_IDLE_QUIET } : {}),
    ...(env.KUBECELL_BENCH_IDLE_SETTLE_MAX
      ? { settleMax: env.KUBECELL_BENCH_IDLE_SETTLE_MAX }
      : {}),
    ...(env.KUBECELL_BENCH_IDLE_READY_TIMEOUT
      ? { readyTimeout: env.KUBECELL_BENCH_IDLE_READY_TIMEOUT }
      : {}),
    ...(env.KUBECELL_BENCH_IDLE_LABEL ? { label: env.KUBECELL_BENCH_IDLE_LABEL } : {}),
  };
  for (const arg of argv) {
    const [flag = '', value] = arg.split(/=(.*)/s, 2);
    if (arg === '--quick') quick = true;
    else if ((REMOTE_FLAGS as readonly string[]).includes(flag) && value !== undefined) {
      remote[flag as keyof RemoteArgs] = value;
    } else if (flag in IDLE_FLAGS && value !== undefined) {
      idle[IDLE_FLAGS[flag] as keyof IdleArgs] = value;
    } else if (arg.startsWith('--only=')) {
      const wanted = arg.slice('--only='.length).split(',');
      for (const part of wanted) {
        if (!(PARTS as readonly string[]).includes(part))
          throw new Error(`unknown part ${part}; parts are ${PARTS.join(', ')}`);
      }
      parts = new Set(wanted as Part[]);
    } else throw new Error(`unknown argument ${arg}; see bench/run.ts`);
  }
  return { parts, quick, idle, remote };
}

function numbers(text: string, what: string): number[] {
  const values = text.split(',').map((part) => Number(part.trim()));
  if (values.some((value) => !Number.isSafeInteger(value) || value <= 0))
    throw new Error(`${what}: expected positive whole numbers separated by commas, got ${text}`);
  return values;
}

function seconds(text: string | undefined, fallback: number, what: string): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`${what}: expected seconds, got ${text}`);
  return value;
}

/**
 * The comparison points (issue 14): 500 Nodes with 100 VirtualClusters, and each
 * dimension alone reduced tenfold. The cheaper points first, so that a run stopped early still
 * has some.
 */
const IDLE_DEFAULT_POINTS: IdlePoint[] = [
  { nodes: 50, virtualClusters: 100 },
  { nodes: 500, virtualClusters: 10 },
  { nodes: 500, virtualClusters: 100 },
];

function idlePoints(args: IdleArgs, quick: boolean): IdlePoint[] {
  if (args.points !== undefined) return parsePoints(args.points);
  if (args.nodes !== undefined || args.vcs !== undefined) {
    return pointsOf(
      numbers(args.nodes ?? '500', 'idle Nodes'),
      numbers(args.vcs ?? '100', 'idle VirtualClusters'),
    );
  }
  return quick ? [{ nodes: 20, virtualClusters: 3 }] : IDLE_DEFAULT_POINTS;
}

/** Written as the repository's Prettier settings format it, so that `npm run lint` stays clean. */
async function writeFormatted(file: string, text: string): Promise<void> {
  const options = (await prettier.resolveConfig(file)) ?? {};
  writeFileSync(file, await prettier.format(text, { ...options, filepath: file }));
}

function log(line: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

const RESULTS_JSON = path.join(REPO_ROOT, 'bench', 'results.json');

/**
 * With --only: the parts this run did not measure are taken from the previous results.json,
 * with the run they came from (a part kept there already keeps its own origin).
 */
function keepEarlierParts(results: Omit<Results, 'targets'>, ran: Set<Part>): void {
  if (ran.size === PARTS.length || !existsSync(RESULTS_JSON)) return;
  let previous: Results;
  try {
    previous = JSON.parse(readFileSync(RESULTS_JSON, 'utf8')) as Results;
  } catch {
    return;
  }
  const kept: KeptPart[] = [];
  for (const part of PARTS) {
    if (ran.has(part)) continue;
    const key = RESULT_KEYS[part];
    if (previous[key] === undefined) continue;
    (results as Record<string, unknown>)[key] = previous[key];
    // Runs before the metacontroller part existed said here that Metacontroller was not measured.
    if (part === 'apiserver' && results.apiserver) delete results.apiserver.notMeasured;
    const settings = previous.settings[part];
    if (settings !== undefined) results.settings[part] = settings;
    const origin = previous.kept?.find((entry) => entry.part === part);
    kept.push(
      origin ?? {
        part,
        date: previous.machine.date,
        ...(previous.machine.gitCommit === undefined
          ? {}
          : { gitCommit: previous.machine.gitCommit }),
        loadAverage: [
          previous.machine.loadAverageStart[0] ?? NaN,
          previous.machine.loadAverageEnd?.[0] ?? NaN,
        ],
      },
    );
  }
  if (kept.length > 0) results.kept = kept;
}

/** The idle figures of the previous results.json (every label), to keep the other labels. */
function previousIdle(): IdleResults {
  if (!existsSync(RESULTS_JSON)) return {};
  try {
    return (JSON.parse(readFileSync(RESULTS_JSON, 'utf8')) as Results).idle ?? {};
  } catch {
    return {};
  }
}

async function main(): Promise<void> {
  const { parts, quick, idle: idleArgs, remote: remoteArgs } = parseArgs(process.argv.slice(2));
  const settings = {
    parts: [...parts],
    quick,
    http: {
      durationSeconds: quick ? 3 : 10,
      warmupSeconds: quick ? 1 : 3,
      connections: [1, 64],
      cellNodes: 10,
      logLevel: 'info',
    },
    scaling: { sizes: quick ? [10, 100, 1000] : [10, 100, 1000, 5000], podsPerNode: 20 },
    apiserver: { single: quick ? 1 : 5, many: 50, manyRepetitions: quick ? 1 : 3 },
    metacontroller: {
      sizes: quick ? [1, 10] : [1, 50],
      flagSets: quick
        ? FLAG_SETS.filter((set) => set.name === 'default' || set.name === 'raised')
        : FLAG_SETS,
      profileNodes: 4,
      k3kIntervalMs: 100,
    },
    idle: {
      points: idlePoints(idleArgs, quick),
      windowSeconds: seconds(idleArgs.window, quick ? 60 : 180, 'idle window'),
      quietSeconds: seconds(idleArgs.quiet, quick ? 30 : 60, 'idle quiet window'),
      settleMaxSeconds: seconds(idleArgs.settleMax, quick ? 120 : 300, 'idle settle max'),
      readyTimeoutSeconds: seconds(idleArgs.readyTimeout, 30 * 60, 'idle ready timeout'),
      sliceSeconds: 30,
      leaseRenewSeconds: 10,
      leaseDurationSeconds: 60,
      k3kIntervalMs: 500,
      // The figures before issue 14's design change are kept under `before` (measured at commit
      // 3c0563c); the code now has the change, so a run is `after` unless told otherwise.
      label: idleArgs.label ?? 'after',
    },
    remote: {
      clusters: 2,
      nodesPerCluster:
        numbers(remoteArgs['--remote-nodes'] ?? (quick ? '10' : '50'), 'remote Nodes')[0] ?? 50,
      virtualClustersPerCluster:
        numbers(remoteArgs['--remote-vcs'] ?? (quick ? '3' : '20'), 'remote VirtualClusters')[0] ??
        20,
      localNodes: 4,
      windowSeconds: seconds(remoteArgs['--remote-window'], quick ? 60 : 300, 'remote window'),
      sliceSeconds: 30,
      settleMaxSeconds: quick ? 120 : 240,
      readyTimeoutSeconds: 600,
      k3kIntervalMs: 200,
      // OCM's own defaults (pkg/work/spoke/options.go: status sync 10 s; the registration
      // agent's cluster health check 1 min; a ManagedCluster's lease 60 s), as a platform runs it.
      ocm: {
        leaseDurationSeconds: 60,
        statusSyncIntervalSeconds: 10,
        clusterHealthCheckPeriodSeconds: 60,
      },
    },
  };
  if (
    settings.idle.quietSeconds + QUIET_DRAIN_MAX_SECONDS + 20 >=
    5 * settings.idle.leaseDurationSeconds
  )
    throw new Error(
      `--idle-quiet=${settings.idle.quietSeconds}: the lease would go stale (KubeCell allows 5 lease durations, ${5 * settings.idle.leaseDurationSeconds} s)`,
    );
  const results: Omit<Results, 'targets'> = { machine: machine(), settings, notes: [] };
  log(
    `machine: ${results.machine.cpuModel}, ${results.machine.cores} cores, Node ${results.machine.node}, load ${results.machine.loadAverageStart.join(' ')}`,
  );

  if (parts.has('scaling')) {
    results.cellScaling = await runCellScaling({
      sizes: settings.scaling.sizes,
      log,
      ...(quick ? { reps: (n: number) => (n <= 100 ? 20 : 3) } : {}),
    });
  }
  if (parts.has('http')) {
    results.http = await runHttpBenchmark({ ...settings.http, log });
  }
  if (parts.has('apiserver')) {
    results.apiserver = await runApiserverBenchmark({ log, ...settings.apiserver });
  }
  if (parts.has('metacontroller')) {
    results.metacontroller = await runMetacontrollerBenchmark({
      log,
      ...settings.metacontroller,
    });
  }

  if (parts.has('idle')) {
    const run = await runIdleBenchmark({ ...settings.idle, log });
    results.idle = { ...previousIdle(), [run.label]: run };
  }
  if (parts.has('remote')) {
    results.remote = await runRemoteBenchmark({ ...settings.remote, log });
  }

  results.machine.loadAverageEnd = os.loadavg().map((value) => Math.round(value * 100) / 100);
  const busy = Math.max(
    results.machine.loadAverageStart[0] ?? 0,
    results.machine.loadAverageEnd[0] ?? 0,
  );
  if (busy > results.machine.cores * 0.5) {
    results.notes.push(
      `The machine was busy: 1-minute load average ${results.machine.loadAverageStart[0]} at the start and ${results.machine.loadAverageEnd[0]} at the end on ${results.machine.cores} cores (other work was running) during this run's parts (${[...parts].join(', ')}). Absolute figures are pessimistic; the ratios are the figures to compare: hook and floor were measured alternately under the same conditions, and each Metacontroller flag set against the defaults in the same run (the load during each wave is in its table).`,
    );
  }
  keepEarlierParts(results, parts);
  if (results.http) {
    results.notes.push(
      'Autocannon runs in the benchmark process on the same machine as the server: at concurrency 64 client and server share the cores, which adds the same client cost to hook and floor and pulls the time-per-request ratios toward 1. The CPU-per-request ratio counts the server process alone and is not affected.',
    );
  }
  const complete: Results = { ...results, targets: targets(results) };
  await writeFormatted(RESULTS_JSON, JSON.stringify(complete));
  await writeFormatted(path.join(REPO_ROOT, 'bench', 'results.md'), markdown(complete));
  for (const target of complete.targets)
    log(
      `target: ${target.name}: ${target.measured} (limit ${target.limit}) → ${String(target.met)}`,
    );
  log('wrote bench/results.json and bench/results.md');
}

main().catch((err: unknown) => {
  process.stderr.write(
    `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
