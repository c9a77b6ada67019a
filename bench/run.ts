/**
 * `npm run bench`: the KubeCell benchmark. Writes bench/results.json and bench/results.md.
 *
 *   npm run bench                         everything (well over an hour on 2 cores: the http part
 *                                         alone, with every hook, 15 to 30 minutes)
 *   npm run bench -- --only=http,scaling  some parts: http, scaling, apiserver, metacontroller, idle,
 *                                         remote
 *   npm run bench -- --quick              shorter runs and sizes, to try the harness
 *   npm run bench -- --only=idle          the idle cost in the steady state, issue 24's table: the
 *                                         five points of IDLE_DEFAULT_CASES (bench/idle-cases.ts),
 *                                         about 35 minutes on 2 cores
 *   npm run bench -- --only=idle --idle-cases=10:1:50x10 --idle-window=60
 *                                         one point: lease 10 s, 1 pod/s churn, 50 Nodes × 10 VCs
 *   npm run bench -- --only=idle --idle-points=50x10,1000x10 --idle-lease=60,10 --idle-churn=0,1
 *                                         every point at every lease period and churn rate
 *
 * With --only, the parts not run are kept from the previous bench/results.json (each with the
 * date, commit and load of the run that measured it), so results.md always shows every part.
 * Each part records the commit and the fingerprint of the code it measured (bench/part-code.ts);
 * results.md marks a part measured on other code than the tree's STALE, and
 * `npm run bench:report` writes it again from results.json against the present tree.
 *
 * Parts (method and discussion in docs/performance.md):
 *   http            hooks over HTTP with autocannon, against the real hook server and the floor
 *   scaling         Cell sync time and memory for 10 to 5,000 Nodes, against the floor
 *   apiserver       server-side apply and deletion of VirtualCluster children on a real apiserver
 *   metacontroller  apply → Ready of 1 and 50 VirtualClusters through the real Metacontroller,
 *                   with its default flags and with raised ones (about 15 minutes)
 *   idle            the cost of a quiet cluster through the real Metacontroller in the steady
 *                   state (Metacontroller restarted once every VirtualCluster is Ready, so each
 *                   relates what it keeps once resolved, not what its 20-minute customize cache
 *                   held): one Cell with N Nodes and M VirtualClusters per point, a lease period
 *                   and optional pod churn per point; VirtualCluster syncs, bytes per sync
 *                   request, Cell syncs and status writes, the stored Cell's size (bench/idle.ts)
 *
 * Options of the idle part (each also from the environment variable in brackets):
 *   --idle-cases=60:0:50x10,10:0:1000x10,60:1:500x10
 *                                 the points, each <lease seconds>:<churn pods per second>:
 *                                 <nodes>x<virtualclusters>; default the five of issue 24's table:
 *                                 60:0:50x10,60:1:500x10,60:0:1000x10,10:0:1000x10,60:0:50x100
 *                                 [KUBECELL_BENCH_IDLE_CASES]
 *   --idle-points=500x100,50x10   instead of --idle-cases: Nodes × VirtualClusters, each run at
 *                                 every --idle-lease and --idle-churn (default 50x10,1000x10,
 *                                 50x100 when only those are given) [KUBECELL_BENCH_IDLE_POINTS]
 *   --idle-nodes=50,500           with --idle-vcs: every combination [KUBECELL_BENCH_IDLE_NODES]
 *   --idle-vcs=10,100             (a list alone combines with 500 Nodes or 100 VirtualClusters)
 *                                 [KUBECELL_BENCH_IDLE_VCS]
 *   --idle-lease=60,10            lease periods (s): the ManagedCluster's leaseDurationSeconds and
 *                                 the renewal interval, as OCM's agent renews; default 60,10
 *                                 [KUBECELL_BENCH_IDLE_LEASE]
 *   --idle-churn=0,1              pods created and deleted per second on the Cell's Nodes during
 *                                 convergence and the window (20 kept alive); default 0
 *                                 [KUBECELL_BENCH_IDLE_CHURN]
 *   --idle-window=120             seconds measured once converged [KUBECELL_BENCH_IDLE_WINDOW]
 *   --idle-quiet=60               seconds with the lease renewal paused, 0 for none; skipped at a
 *                                 lease period too short to stay fresh meanwhile (10 s)
 *                                 [KUBECELL_BENCH_IDLE_QUIET]
 *   --idle-settle-max=300         longest wait for the sync rate to settle
 *                                 [KUBECELL_BENCH_IDLE_SETTLE_MAX]
 *   --idle-ready-timeout=1800     longest wait for every VirtualCluster to be Ready; the point is
 *                                 then measured anyway, marked as such
 *                                 [KUBECELL_BENCH_IDLE_READY_TIMEOUT]
 *   --idle-label="issue 24"       the key of the run in results.json (default "issue 24"; the
 *                                 runs under other labels, `before` and `after` of issue 14, are
 *                                 kept from the previous results.json as history)
 *                                 [KUBECELL_BENCH_IDLE_LABEL]
 *
 *   remote          Cells on other clusters through the real OCM hub and agents (issue 18), in one
 *                   run: apply → Ready of one VirtualCluster on a local Cell and on a remote Cell,
 *                   then the idle cost of 2 Cells on 2 managed clusters (bench/remote.ts; about
 *                   9 minutes on 2 cores)
 *
 * Options of the metacontroller part (each overrides what --quick picks):
 *   --metacontroller-sets=default,raised   the flag sets (bench/metacontroller.ts FLAG_SETS); all
 *                                          by default, default and raised with --quick
 *   --metacontroller-sizes=1,50            the wave sizes; 1,50 by default, 1,10 with --quick
 *
 * Options of the remote part:
 *   --remote-nodes=50     Nodes on each managed cluster
 *   --remote-vcs=20       VirtualClusters on each Cell (the one measured alone included)
 *   --remote-window=300   seconds measured once converged (300: one heartbeat of each cell
 *                         agent's report and of each Cell falls inside)
 */
import os from 'node:os';
import { runApiserverBenchmark } from './apiserver.js';
import { runCellScaling } from './cell-scaling.js';
import { runPlanSelection } from './plan-selection.js';
import { runHttpBenchmark } from './http.js';
import { runIdleBenchmark } from './idle.js';
import { fingerprintText } from './code-fingerprint.js';
import { IDLE_FLAGS, idleArgsFromEnvironment, idleCasesOf, type IdleArgs } from './idle-cases.js';
import type { IdleResults } from './idle-results.js';
import { FLAG_SETS, runMetacontrollerBenchmark, type FlagSet } from './metacontroller.js';
import { endMeasuredCode, startMeasuredCode, type MeasuredCodes } from './part-code.js';
import { runRemoteBenchmark } from './remote.js';
import { REPO_ROOT } from './processes.js';
import {
  machine,
  targets,
  RESULT_KEYS,
  type KeptPart,
  type Part,
  type Results,
  PART_EXTRA_KEYS,
  PARTS,
} from './report.js';
import { readResults, RESULTS_JSON, writeFormatted, writeResultsMarkdown } from './results-file.js';

const REMOTE_FLAGS = ['--remote-nodes', '--remote-vcs', '--remote-window'] as const;
type RemoteArgs = Partial<Record<(typeof REMOTE_FLAGS)[number], string>>;
const METACONTROLLER_FLAGS = ['--metacontroller-sets', '--metacontroller-sizes'] as const;
type MetacontrollerArgs = Partial<Record<(typeof METACONTROLLER_FLAGS)[number], string>>;

function parseArgs(argv: string[]): {
  parts: Set<Part>;
  quick: boolean;
  idle: IdleArgs;
  remote: RemoteArgs;
  metacontroller: MetacontrollerArgs;
} {
  let parts = new Set<Part>(PARTS);
  const remote: RemoteArgs = {};
  const metacontroller: MetacontrollerArgs = {};
  let quick = false;
  const idle = idleArgsFromEnvironment(process.env);
  for (const arg of argv) {
    const [flag = '', value] = arg.split(/=(.*)/s, 2);
    if (arg === '--quick') quick = true;
    else if ((REMOTE_FLAGS as readonly string[]).includes(flag) && value !== undefined) {
      remote[flag as keyof RemoteArgs] = value;
    } else if ((METACONTROLLER_FLAGS as readonly string[]).includes(flag) && value !== undefined) {
      metacontroller[flag as keyof MetacontrollerArgs] = value;
    } else if (IDLE_FLAGS[flag] !== undefined && value !== undefined) {
      idle[IDLE_FLAGS[flag].key] = value;
    } else if (arg.startsWith('--only=')) {
      const wanted = arg.slice('--only='.length).split(',');
      for (const part of wanted) {
        if (!(PARTS as readonly string[]).includes(part))
          throw new Error(`unknown part ${part}; parts are ${PARTS.join(', ')}`);
      }
      parts = new Set(wanted as Part[]);
    } else throw new Error(`unknown argument ${arg}; see bench/run.ts`);
  }
  return { parts, quick, idle, remote, metacontroller };
}

/** The Metacontroller flag sets named (all known ones otherwise, or --quick's two). */
function flagSetsOf(names: string | undefined, quick: boolean): FlagSet[] {
  if (names === undefined)
    return quick
      ? FLAG_SETS.filter((set) => set.name === 'default' || set.name === 'raised')
      : FLAG_SETS;
  return names.split(',').map((name) => {
    const set = FLAG_SETS.find((known) => known.name === name.trim());
    if (!set)
      throw new Error(
        `unknown flag set ${name}; sets are ${FLAG_SETS.map((known) => known.name).join(', ')}`,
      );
    return set;
  });
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

function log(line: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

/**
 * Runs one part, recording the code it measured: the tree's fingerprint as it starts, and the
 * fingerprint at its end when someone changed hooks/, schemas/ or metacontroller/ meanwhile.
 */
async function measure<T>(part: Part, code: MeasuredCodes, run: () => Promise<T>): Promise<T> {
  const started = startMeasuredCode(REPO_ROOT);
  const fingerprint = started.fingerprint ? fingerprintText(started.fingerprint) : 'not known';
  log(`${part}: measuring commit ${started.gitCommit ?? '?'}, code ${fingerprint}`);
  const value = await run();
  code[part] = endMeasuredCode(REPO_ROOT, started);
  return value;
}

/**
 * With --only: the parts this run did not measure are taken from the previous results.json,
 * with the run they came from (a part kept there already keeps its own origin).
 */
function keepEarlierParts(results: Omit<Results, 'targets'>, ran: Set<Part>): void {
  const previous = ran.size === PARTS.length ? undefined : readResults();
  if (previous === undefined) return;
  const kept: KeptPart[] = [];
  for (const part of PARTS) {
    if (ran.has(part)) continue;
    const key = RESULT_KEYS[part];
    if (previous[key] === undefined) continue;
    (results as Record<string, unknown>)[key] = previous[key];
    for (const extra of PART_EXTRA_KEYS[part] ?? []) {
      if (previous[extra] !== undefined)
        (results as Record<string, unknown>)[extra] = previous[extra];
    }
    // Runs before the metacontroller part existed said here that Metacontroller was not measured.
    if (part === 'apiserver' && results.apiserver) delete results.apiserver.notMeasured;
    const settings = previous.settings[part];
    if (settings !== undefined) results.settings[part] = settings;
    const code = previous.measuredCode?.[part];
    if (code !== undefined) (results.measuredCode ??= {})[part] = code;
    const origin = previous.kept?.find((entry) => entry.part === part);
    kept.push(
      origin ?? {
        part,
        date: previous.machine.date,
        ...(previous.machine.gitCommit === undefined
          ? {}
          : { gitCommit: previous.machine.gitCommit, gitDirty: previous.machine.gitDirty }),
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
  return readResults()?.idle ?? {};
}

async function main(): Promise<void> {
  const {
    parts,
    quick,
    idle: idleArgs,
    remote: remoteArgs,
    metacontroller: metacontrollerArgs,
  } = parseArgs(process.argv.slice(2));
  const settings = {
    parts: [...parts],
    quick,
    http: {
      durationSeconds: quick ? 3 : 10,
      warmupSeconds: quick ? 1 : 3,
      connections: [1, 64],
      cellNodes: quick ? [10, 100] : [10, 100, 1000, 5000],
      maxBodyBytesInFlight: 2 * 1024 ** 3,
      logLevel: 'info',
    },
    scaling: {
      sizes: quick ? [10, 100, 1000] : [10, 100, 1000, 5000],
      podsPerNode: 20,
      planSelection: { cells: [1, 10, 50], nodesPerCell: 50, reps: quick ? 3 : 15 },
    },
    apiserver: { single: quick ? 1 : 5, many: 50, manyRepetitions: quick ? 1 : 3 },
    metacontroller: {
      sizes: numbers(
        metacontrollerArgs['--metacontroller-sizes'] ?? (quick ? '1,10' : '1,50'),
        'metacontroller wave sizes',
      ),
      flagSets: flagSetsOf(metacontrollerArgs['--metacontroller-sets'], quick),
      profileNodes: 4,
      k3kIntervalMs: 100,
    },
    idle: {
      cases: idleCasesOf(idleArgs, quick),
      windowSeconds: seconds(idleArgs.window, quick ? 60 : 120, 'idle window'),
      quietSeconds: seconds(idleArgs.quiet, quick ? 30 : 60, 'idle quiet window'),
      settleMaxSeconds: seconds(idleArgs.settleMax, quick ? 120 : 300, 'idle settle max'),
      readyTimeoutSeconds: seconds(idleArgs.readyTimeout, 30 * 60, 'idle ready timeout'),
      sliceSeconds: 30,
      k3kIntervalMs: 500,
      churnKeep: 20,
      // `before` (commit 3c0563c) and `after` (f1443ee) issue 14's design change are kept as
      // history; runs measured in the steady state of issue 24 go under their own label.
      label: idleArgs.label ?? 'issue 24',
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
      // OCM's own defaults for the registration agent's cluster health check (1 min) and a
      // ManagedCluster's lease (60 s), as a platform runs it; the work agent's status sync as
      // docs/remote-cells.md recommends (5 s: the Klusterlet's shortest; OCM's own default 10 s,
      // pkg/work/spoke/options.go, feeds a sealed kubeconfig back up to 19 s after it is written).
      ocm: {
        leaseDurationSeconds: 60,
        statusSyncIntervalSeconds: 5,
        clusterHealthCheckPeriodSeconds: 60,
      },
    },
  };
  const code: MeasuredCodes = {};
  const results: Omit<Results, 'targets'> = {
    machine: machine(),
    settings,
    notes: [],
    measuredCode: code,
  };
  log(
    `machine: ${results.machine.cpuModel}, ${results.machine.cores} cores, Node ${results.machine.node}, load ${results.machine.loadAverageStart.join(' ')}`,
  );

  if (parts.has('scaling')) {
    results.cellScaling = await measure('scaling', code, async () => {
      const scaling = await runCellScaling({
        sizes: settings.scaling.sizes,
        log,
        ...(quick ? { reps: (n: number) => (n <= 100 ? 20 : 3) } : {}),
      });
      // A plan choosing among Cells grows with the Cells it matches: measured with the part.
      results.planSelection = await runPlanSelection({ ...settings.scaling.planSelection, log });
      return scaling;
    });
  }
  if (parts.has('http')) {
    results.http = await measure('http', code, () => runHttpBenchmark({ ...settings.http, log }));
  }
  if (parts.has('apiserver')) {
    results.apiserver = await measure('apiserver', code, () =>
      runApiserverBenchmark({ log, ...settings.apiserver }),
    );
  }
  if (parts.has('metacontroller')) {
    results.metacontroller = await measure('metacontroller', code, () =>
      runMetacontrollerBenchmark({ log, ...settings.metacontroller }),
    );
  }

  if (parts.has('idle')) {
    const run = await measure('idle', code, () => runIdleBenchmark({ ...settings.idle, log }));
    results.idle = { ...previousIdle(), [run.label]: run };
  }
  if (parts.has('remote')) {
    results.remote = await measure('remote', code, () =>
      runRemoteBenchmark({ ...settings.remote, log }),
    );
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
  await writeResultsMarkdown(complete);
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
