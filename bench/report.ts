/** bench/results.json and bench/results.md: the machine, every figure, and the targets. */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import type { ApiserverResult } from './apiserver.js';
import type { ScalingGrowth, ScalingResult } from './cell-scaling.js';
import type { HttpCaseResult } from './http.js';
import type { IdleResults } from './idle-results.js';
import type { FlagSetResult, MetacontrollerResult, WaveResult } from './metacontroller.js';
import type { Stats } from './stats.js';
import type { MeasuredCodes } from './part-code.js';
import type { CallFigures, PlanSelectionResult } from './plan-selection.js';
import type { RemoteResult } from './remote.js';
import { auditMarkdown } from './report-audit.js';
import { codeMarkdown, metText, type CodeMarks } from './report-code.js';
import { idleMarkdown, idleTargets } from './report-idle.js';
import { remoteMarkdown, remoteTargets } from './report-remote.js';

export const PARTS = ['http', 'scaling', 'apiserver', 'metacontroller', 'idle', 'remote'] as const;
export type Part = (typeof PARTS)[number];
/** Where each part's figures are in Results. */
export const RESULT_KEYS = {
  http: 'http',
  scaling: 'cellScaling',
  apiserver: 'apiserver',
  metacontroller: 'metacontroller',
  idle: 'idle',
  remote: 'remote',
} as const satisfies Record<Part, keyof Results>;

/** Further figures a part measures beside its main ones (kept with it by `--only`). */
export const PART_EXTRA_KEYS: Partial<Record<Part, readonly (keyof Results)[]>> = {
  scaling: ['planSelection'],
};

/** A part whose figures were kept from an earlier run (`--only` ran other parts). */
export interface KeptPart {
  part: Part;
  date: string;
  gitCommit?: string;
  /** Uncommitted changes in that run's tree (absent in entries kept before this was recorded). */
  gitDirty?: boolean;
  /** 1-minute load average at the start and end of that run. */
  loadAverage: [number, number];
}

export interface Machine {
  date: string;
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  node: string;
  platform: string;
  /** 1-minute load averages when the run started and ended (other work on the machine). */
  loadAverageStart: number[];
  loadAverageEnd?: number[];
  gitCommit?: string;
  gitDirty?: boolean;
}

export function machine(): Machine {
  let gitCommit: string | undefined;
  let gitDirty: boolean | undefined;
  try {
    gitCommit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    gitDirty = execFileSync('git', ['status', '--porcelain'], { encoding: 'utf8' }).trim() !== '';
  } catch {
    // not a git checkout
  }
  return {
    date: new Date().toISOString(),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverageStart: os.loadavg().map(round2),
    ...(gitCommit === undefined ? {} : { gitCommit, gitDirty }),
  };
}

export interface Target {
  name: string;
  limit: string;
  measured: string;
  met: boolean | 'not measured' | 'no limit';
  /** The part whose figures it judges (its code decides whether it may be shown as met). */
  part?: Part;
}

export interface Results {
  machine: Machine;
  settings: Record<string, unknown>;
  http?: HttpCaseResult[];
  cellScaling?: ScalingResult;
  /** A plan choosing among 1, 10 and 50 Cells (issue 29), measured with the scaling part. */
  planSelection?: PlanSelectionResult;
  apiserver?: ApiserverResult;
  metacontroller?: MetacontrollerResult;
  /** The idle cost (issue 14), by label: `before` and, once measured, `after` the design change. */
  idle?: IdleResults;
  /** Remote Cells through OCM (issue 18): apply → Ready beside a local Cell, and the idle cost. */
  remote?: RemoteResult;
  /** Parts kept from earlier runs, with the run each came from. */
  kept?: KeptPart[];
  /** The code each part measured (absent in runs before it was recorded: bench/part-code.ts). */
  measuredCode?: MeasuredCodes;
  targets: Target[];
  notes: string[];
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

const ms = (value: number | undefined) =>
  value === undefined || Number.isNaN(value)
    ? '–'
    : value < 10
      ? value.toFixed(2)
      : value.toFixed(1);
const ratio = (value: number | undefined) =>
  value === undefined || Number.isNaN(value) ? '–' : `${value.toFixed(2)}×`;
const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

export function targets(results: Omit<Results, 'targets'>): Target[] {
  const list: Target[] = [];
  list.push(...httpTargets(results.http));
  const cell1000 = results.cellScaling?.sizes.find((s) => s.nodes === 1000);
  list.push({
    part: 'scaling',
    name: 'Cell sync, 1,000 Nodes × 20 pods, vs JSON.parse + JSON.stringify of the same body',
    limit: '≤ 1.5×',
    measured: cell1000 ? ratio(cell1000.ratio) : 'not run',
    met: cell1000 ? cell1000.ratio <= 1.5 : 'not measured',
  });
  const growth = results.cellScaling?.growth;
  const exponents = (pick: (g: ScalingGrowth) => number) =>
    growth?.map((g) => `${g.from}→${g.to}: ${pick(g).toFixed(2)}`).join(', ') ?? '';
  list.push({
    part: 'scaling',
    name: 'Cell sync grows linearly (or better) across 10, 100, 1,000, 5,000 Nodes: the hook’s own work (checks + sync)',
    limit: 'growth exponent ≤ 1.1 between sizes',
    measured: growth?.length ? exponents((g) => g.handlerExponent) : 'not run',
    met: results.cellScaling ? results.cellScaling.linear : 'not measured',
  });
  list.push({
    part: 'scaling',
    name: 'The same, whole call (JSON.parse included): grows no faster than the floor',
    limit: 'time factor ≤ 1.1 × the floor’s',
    measured: growth?.length
      ? `${exponents((g) => g.hookExponent)} (floor ${exponents((g) => g.floorExponent)})`
      : 'not run',
    met: results.cellScaling ? results.cellScaling.noFasterThanFloor : 'not measured',
  });
  const fifty = results.planSelection?.sizes.find((s) => s.cells === 50);
  list.push({
    part: 'scaling',
    name: 'A plan with spec.cellSelector matching 50 Cells of 50 Nodes: its sync request',
    limit: '< 64 KB',
    measured: fifty ? kb(fifty.bodyBytes) : 'not run',
    met: fifty ? fifty.bodyBytes < 64 * KB : 'not measured',
  });
  list.push({ ...metacontrollerTarget(results.metacontroller), part: 'metacontroller' });
  list.push(...idleTargets(results.idle).map((t): Target => ({ ...t, part: 'idle' })));
  list.push(...remoteTargets(results.remote).map((t): Target => ({ ...t, part: 'remote' })));
  return list;
}

/** KB as 1,000 bytes: the stricter reading of issue 14's limits. */
export const KB = 1000;
export const kb = (bytes: number | undefined) =>
  bytes === undefined || Number.isNaN(bytes)
    ? '–'
    : bytes >= 10 * KB * KB
      ? `${(bytes / KB / KB).toFixed(0)} MB`
      : `${(bytes / KB).toFixed(bytes < 10 * KB ? 2 : 1)} KB`;

const seconds = (ms: number | undefined) =>
  ms === undefined || Number.isNaN(ms)
    ? '–'
    : ms < 10_000
      ? (ms / 1000).toFixed(2)
      : (ms / 1000).toFixed(1);
const spread = (stat: Stats) =>
  `${seconds(stat.medianMs)} / ${seconds(stat.p90Ms)} / ${seconds(stat.maxMs)}`;

/** The wave of `size` VirtualClusters of a flag set. */
function waveOf(set: FlagSetResult | undefined, size: number): WaveResult | undefined {
  return set?.waves.find((wave) => wave.virtualClusters === size);
}

/** time(set) ÷ time(default) for one figure of the same wave size, measured in the same run. */
export function metacontrollerRatio(
  result: MetacontrollerResult,
  setName: string,
  size: number,
  pick: (wave: WaveResult) => number,
): number | undefined {
  const base = waveOf(
    result.flagSets.find((set) => set.name === 'default'),
    size,
  );
  const other = waveOf(
    result.flagSets.find((set) => set.name === setName),
    size,
  );
  return base && other ? pick(other) / pick(base) : undefined;
}

function metacontrollerTarget(result: MetacontrollerResult | undefined): Target {
  const name = 'apply → Ready through Metacontroller, 50 VirtualClusters at once';
  if (!result?.measured) {
    return {
      name,
      limit: '—',
      measured: result ? `not measured: ${result.reason ?? 'unknown'}` : 'not run',
      met: 'not measured',
    };
  }
  const size = Math.max(
    ...result.flagSets.flatMap((set) => set.waves.map((w) => w.virtualClusters)),
  );
  const parts = result.flagSets.map((set) => {
    const wave = waveOf(set, size);
    const factor =
      set.name === 'default'
        ? ''
        : ` (${ratio(metacontrollerRatio(result, set.name, size, (w) => w.allReadyMs))})`;
    return `${set.name}: all ${size} Ready in ${seconds(wave?.allReadyMs)} s${factor}`;
  });
  const goals = METACONTROLLER_GOALS.map((goal) => ({
    goal,
    allReadyMs: waveOf(
      result.flagSets.find((set) => set.name === goal.flagSet),
      GOAL_VIRTUALCLUSTERS,
    )?.allReadyMs,
  }));
  const judged = goals.filter((g) => g.allReadyMs !== undefined);
  return {
    name: name.replace('50', String(size)),
    limit: METACONTROLLER_GOALS.map(
      (goal) => `${goal.flagSet}: ≤ ${goal.seconds} s for ${GOAL_VIRTUALCLUSTERS}`,
    ).join('; '),
    measured: parts.join('; '),
    met:
      judged.length === 0
        ? 'not measured'
        : judged.every((g) => (g.allReadyMs as number) <= g.goal.seconds * 1000),
  };
}

/** Issue 25, item 2: 50 VirtualClusters at once, all Ready, with these flag sets. */
const GOAL_VIRTUALCLUSTERS = 50;
const METACONTROLLER_GOALS = [
  { flagSet: 'default', seconds: 90 },
  { flagSet: 'qps', seconds: 10 },
] as const;

/** Issue 25, item 1: every hook at most 1.2× the floor, at concurrency 1 and 64. */
export const HTTP_RATIO_LIMIT = 1.2;

function httpTargets(cases: HttpCaseResult[] | undefined): Target[] {
  if (cases === undefined || cases.length === 0) {
    return [
      {
        part: 'http',
        name: 'Every hook, time per request vs the floor, at concurrency 1 and 64',
        limit: `≤ ${HTTP_RATIO_LIMIT}×`,
        measured: 'not run',
        met: 'not measured',
      },
    ];
  }
  return cases.map((c) => ({
    part: 'http',
    name: `${c.hook} (${Math.round(c.bodyBytes / 1000)} kB), time per request vs the floor`,
    limit: `≤ ${HTTP_RATIO_LIMIT}× at every concurrency`,
    measured: c.runs.map((r) => `${ratio(r.ratio)} at ${r.connections}`).join(', '),
    met: c.runs.every((r) => r.ratio <= HTTP_RATIO_LIMIT),
  }));
}

function hookCallsText(calls: Record<string, number>): string {
  return Object.entries(calls)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, count]) => `${key} ${count}`)
    .join(', ');
}

function metacontrollerMarkdown(result: MetacontrollerResult): string[] {
  const lines: string[] = ['## Apply → Ready through Metacontroller', ''];
  if (!result.measured) {
    lines.push(`Not measured: ${result.reason ?? 'unknown reason'}.`, '');
    return lines;
  }
  lines.push(
    `Metacontroller ${result.metacontrollerVersion} (server-side apply) and KubeCell's controllers on the real control plane, one fresh stack per flag set; the outside world simulated (harness/simulate): one Cell with ${result.setup.profileNodes} Nodes, k3k serving each Cluster at its next poll (every ${result.setup.k3kIntervalMs} ms). N host namespaces first, then N VirtualClusters applied one after another. Times in seconds: median / p90 / max over the VirtualClusters of the wave.`,
    '',
    '| Flag set | Flags | Metacontroller ran with (its log) | Its requests while idle (API discovery, per s) | Load average (1 min) start / end |',
    '| --- | --- | --- | --- | --- |',
  );
  for (const set of result.flagSets) {
    const effective = set.effective
      ? `workers ${set.effective.workers ?? '?'}, client-go-qps ${set.effective.clientGoQps ?? '?'}, client-go-burst ${set.effective.clientGoBurst ?? '?'}`
      : '–';
    lines.push(
      `| ${set.name} (${set.description}) | \`${set.args.join(' ')}\` | ${effective} | ${set.discoveryRequestsPerSecond ?? '–'} | ${set.loadAverageStart[0]} / ${set.loadAverageEnd[0]} |`,
    );
  }
  lines.push(
    '',
    '| Flag set | VirtualClusters | Apply → children (k3k Cluster exists) | k3k served → VirtualCluster Ready | Apply → Ready | Applying all (first create sent → last answered) | All Ready (first create sent → last Ready) |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const set of result.flagSets) {
    for (const wave of set.waves) {
      lines.push(
        `| ${set.name} | ${wave.virtualClusters} | ${spread(wave.toChildren)} | ${spread(wave.servedToReady)} | ${spread(wave.toReady)} | ${seconds(wave.applyWallMs)} | **${seconds(wave.allReadyMs)}** |`,
      );
    }
  }
  const others = result.flagSets.filter((set) => set.name !== 'default');
  if (others.length > 0) {
    lines.push(
      '',
      'Effect of the flags: time with the flag set ÷ time with the defaults, same run (below 1 = faster).',
      '',
      '| VirtualClusters | Flag set | Apply → children (median) | Served → Ready (median) | Apply → Ready (median) | Apply → Ready (p90) | All Ready |',
      '| --- | --- | --- | --- | --- | --- | --- |',
    );
    const sizes = [
      ...new Set(result.flagSets.flatMap((set) => set.waves.map((w) => w.virtualClusters))),
    ];
    for (const size of sizes) {
      for (const set of others) {
        const r = (pick: (wave: WaveResult) => number) =>
          ratio(metacontrollerRatio(result, set.name, size, pick));
        lines.push(
          `| ${size} | ${set.name} | ${r((w) => w.toChildren.medianMs)} | ${r((w) => w.servedToReady.medianMs)} | ${r((w) => w.toReady.medianMs)} | ${r((w) => w.toReady.p90Ms)} | **${r((w) => w.allReadyMs)}** |`,
        );
      }
    }
  }
  lines.push(
    '',
    'What the wave cost, from the first apply until every VirtualCluster was Ready: hook calls answered (the hook server’s `kubecell_hook_requests_total`), Metacontroller’s requests to the apiserver (client-go’s `rest_client_requests_total`, by method and code; in brackets their number and rate over the wave), the rate limiter (client-go’s token bucket): the requests beyond Metacontroller’s API discovery (its rate while Metacontroller had nothing to do, measured for 10 s after the stack started, × the wave’s duration; discovery has a rate limiter of its own) against the most the bucket lets through, burst + QPS × the wave’s duration — equal means the limiter set the pace for the whole wave —, its client-side throttling waits over 1 s (the only ones it logs), its VirtualCluster work queue (keys added; mean wait in the queue and mean time a worker spent on a key, in seconds), and CPU seconds.',
    '',
    '| Flag set | VirtualClusters | Host namespaces’ baseline before (s) | Hook calls | VirtualCluster syncs per VirtualCluster | Metacontroller API requests | Rate limiter: requests beyond discovery / cap | Throttled > 1 s (longest) | VirtualCluster queue: adds, wait / work (s) | CPU s: Metacontroller / hook server / apiserver + etcd | Load average (1 min) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const set of result.flagSets) {
    for (const wave of set.waves) {
      const vcSyncs = wave.hookCalls['virtualcluster/sync'] ?? 0;
      const failures = Object.keys(wave.hookFailures).length
        ? `; not 200: ${hookCallsText(wave.hookFailures)}`
        : '';
      const api = Object.entries(wave.apiRequests)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, count]) => `${key} ${count}`)
        .join(', ');
      const requests = Object.values(wave.apiRequests).reduce((a, b) => a + b, 0);
      const rate = (requests / (wave.allReadyMs / 1000)).toFixed(1);
      const beyondDiscovery = Math.round(
        requests - (set.discoveryRequestsPerSecond ?? 0) * (wave.allReadyMs / 1000),
      );
      const limiter =
        wave.rateLimiterCap === undefined || set.discoveryRequestsPerSecond === undefined
          ? '–'
          : `${beyondDiscovery} / ${wave.rateLimiterCap}`;
      const cpu = (name: string) => ((wave.cpuMs[name] ?? NaN) / 1000).toFixed(1);
      const apiserverCpu = (
        ((wave.cpuMs.kubeApiserver ?? NaN) + (wave.cpuMs.etcd ?? NaN)) /
        1000
      ).toFixed(1);
      const queue = wave.queue
        ? `${wave.queue.adds}, ${wave.queue.meanWaitSeconds} / ${wave.queue.meanWorkSeconds}`
        : '–';
      lines.push(
        `| ${set.name} | ${wave.virtualClusters} | ${seconds(wave.hostNamespacesMs)} | ${hookCallsText(wave.hookCalls)}${failures} | ${(vcSyncs / wave.virtualClusters).toFixed(1)} | ${api} (${requests}, ${rate}/s) | ${limiter} | ${wave.throttledOver1s.count} (${wave.throttledOver1s.maxSeconds} s) | ${queue} | ${cpu('metacontroller')} / ${cpu('hookServer')} / ${apiserverCpu} | ${wave.loadAverage[0]} → ${wave.loadAverage[1]} |`,
      );
    }
  }
  lines.push('', ...auditMarkdown(result));
  return lines;
}

/** results.md, with each part marked CURRENT or STALE against the tree (`marks`). */
export function markdown(results: Results, marks: CodeMarks): string {
  const m = results.machine;
  const lines: string[] = [];
  lines.push('# KubeCell benchmark results', '');
  lines.push(
    'Written by `npm run bench` (bench/run.ts). Method and discussion: [docs/performance.md](../docs/performance.md).',
    '',
  );
  lines.push('| Machine | |', '| --- | --- |');
  lines.push(`| Date | ${m.date} |`);
  lines.push(`| CPU | ${m.cpuModel}, ${m.cores} cores |`);
  lines.push(`| Memory | ${m.memoryGiB} GiB |`);
  lines.push(`| Node.js | ${m.node} |`);
  lines.push(`| OS | ${m.platform} |`);
  lines.push(
    `| Load average (1 min) at start / end | ${m.loadAverageStart[0]} / ${m.loadAverageEnd?.[0] ?? '–'} |`,
  );
  if (m.gitCommit)
    lines.push(`| Commit | ${m.gitCommit}${m.gitDirty ? ' (with uncommitted changes)' : ''} |`);
  const ran = Array.isArray(results.settings.parts) ? (results.settings.parts as string[]) : [];
  if (ran.length > 0) lines.push(`| Parts measured in this run | ${ran.join(', ')} |`);
  for (const kept of results.kept ?? []) {
    lines.push(
      `| Part ${kept.part} kept from the run of | ${kept.date}${kept.gitCommit ? `, commit ${kept.gitCommit}` : ''}, load average ${kept.loadAverage[0]} / ${kept.loadAverage[1]} |`,
    );
  }
  lines.push('', ...codeMarkdown(marks));

  lines.push('## Targets', '', '| Target | Limit | Measured | Met |', '| --- | --- | --- | --- |');
  for (const t of results.targets) {
    lines.push(`| ${t.name} | ${t.limit} | ${t.measured} | ${metText(t, marks)} |`);
  }
  lines.push('');

  if (results.http) {
    lines.push('## Hooks over HTTP (autocannon)', '');
    lines.push(
      "Time per request = wall time / completed requests. The floor is a plain Node.js server that parses and re-serialises the same body. CPU = the server process's user + system time per request.",
      '',
    );
    lines.push(
      '| Hook | Body | Concurrency | Hook req/s | Hook p50 / p99 (ms) | Floor req/s | Floor p50 / p99 (ms) | Time/request vs floor | CPU/request vs floor | Non-2xx |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const c of results.http) {
      for (const r of c.runs) {
        lines.push(
          `| \`${c.hook}\` | ${(c.bodyBytes / 1e3).toFixed(0)} kB | ${r.connections} | ${r.hook.requestsPerSecond.toFixed(0)} | ${ms(r.hook.latencyP50Ms)} / ${ms(r.hook.latencyP99Ms)} | ${r.floor.requestsPerSecond.toFixed(0)} | ${ms(r.floor.latencyP50Ms)} / ${ms(r.floor.latencyP99Ms)} | **${ratio(r.ratio)}** | ${ratio(r.cpuRatio)} | ${r.hook.non2xx + r.hook.errors} |`,
        );
      }
    }
    lines.push('');
  }

  if (results.cellScaling) {
    const s = results.cellScaling;
    lines.push('## Cell sync against the number of Nodes (20 pods per Node)', '');
    lines.push(
      'In one process per size: hook = JSON.parse + request and schema checks + sync + response check + JSON.stringify of the answer; floor = JSON.parse + JSON.stringify of the same body. Medians.',
      '',
    );
    lines.push(
      '| Nodes | Pods | Body (MB) | Floor (ms) | Hook (ms) | Hook vs floor | of which parse / handler / serialise (ms) | Per Node: hook / handler (ms) | Heap growth hook / floor (MB) | Retained heap hook / floor (MB) | RSS growth hook / floor (MB) |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const z of s.sizes) {
      lines.push(
        `| ${z.nodes.toLocaleString('en')} | ${z.pods.toLocaleString('en')} | ${mb(z.bodyBytes)} | ${ms(z.floorMs)} | ${ms(z.hookMs)} | **${ratio(z.ratio)}** | ${ms(z.parseMs)} / ${ms(z.handlerMs)} / ${ms(z.serializeMs)} | ${z.hookMsPerNode.toFixed(3)} / ${(z.handlerMs / z.nodes).toFixed(3)} | ${mb(z.memory.hook.heapGrowthBytes)} / ${mb(z.memory.floor.heapGrowthBytes)} | ${mb(z.memory.hook.retainedHeapBytes)} / ${mb(z.memory.floor.retainedHeapBytes)} | ${mb(z.memory.hook.rssGrowthBytes)} / ${mb(z.memory.floor.rssGrowthBytes)} |`,
      );
    }
    lines.push(
      '',
      'Growth between sizes: time factor (exponent; 1 = linear, below 1 = better than linear).',
      '',
      '| Sizes | Nodes × | Handler (checks + sync) × | Whole hook call × | Floor × |',
      '| --- | --- | --- | --- | --- |',
    );
    for (const g of s.growth) {
      const factor = (f: number, e: number) => `${f.toFixed(2)} (${e.toFixed(2)})`;
      lines.push(
        `| ${g.from} → ${g.to} | ${g.nodesFactor.toFixed(0)} | ${factor(g.handlerTimeFactor, g.handlerExponent)} | ${factor(g.hookTimeFactor, g.hookExponent)} | ${factor(g.floorTimeFactor, g.floorExponent)} |`,
      );
    }
    lines.push('');
  }

  if (results.planSelection) {
    lines.push(
      '## A plan choosing among Cells (spec.cellSelector) against the number of Cells',
      '',
    );
    lines.push(
      'The plan’s sync request as Metacontroller sends it: the placement index of the matching Cells (D50; each the benchmark’s Cell, 50 Nodes × 20 pods, with its own committed figures), the class, the Namespace. In this process, medians: hook = JSON.parse + request and schema checks + sync (index read, every Cell evaluated, one chosen) + response check + JSON.stringify; floor = JSON.parse + JSON.stringify of the same body.',
      '',
      '| Cells | Request | Floor (ms) | Hook (ms) | Hook vs floor | Response | Decision (candidates) |',
      '| --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const z of results.planSelection.sizes) {
      lines.push(
        `| ${z.cells} | ${kb(z.bodyBytes)} | ${ms(z.floorMs)} | ${ms(z.hookMs)} | **${ratio(z.ratio)}** | ${kb(z.responseBytes)} | ${z.decision} (${z.candidates}) |`,
      );
    }
    lines.push('');
    lines.push(
      ...callTable(
        'The same plan before its first evaluation (no status yet, so the sync reads the index and evaluates every Cell; the index read is remembered by its content between calls, as between plans reading the same index).',
        results.planSelection.sizes.map((z) => [z.cells, z.firstEvaluation]),
      ),
      ...callTable(
        'The kubecell-placement-index decorator’s sync over the same Cells, once per Cell change for the whole installation: its source ConfigMap, every Cell whole, and the index it attached; the response is the index.',
        results.planSelection.sizes.map((z) => [z.cells, z.indexSync]),
      ),
    );
  }

  if (results.apiserver) {
    const a = results.apiserver;
    lines.push('## The apiserver accepting the children (without Metacontroller)', '');
    if (!a.measured) {
      lines.push(`Apiserver figures not measured either: ${a.reason ?? 'unknown reason'}.`, '');
    } else {
      lines.push(
        `kube-apiserver ${a.kubernetesVersion ?? ''} on loopback (etcd, kube-controller-manager; started in ${a.startupSeconds?.toFixed(1) ?? '?'} s). Each VirtualCluster's children are applied one after another (server-side apply, field manager \`metacontroller\`); the VirtualClusters run concurrently.`,
        '',
        '| VirtualClusters | Wave | Requests | Wall (ms) | Per request p50 / p99 (ms) |',
        '| --- | --- | --- | --- | --- |',
      );
      for (const sc of a.scenarios) {
        const row = (
          wave: string,
          w: { wallMs: number; requests: number; latency: { p50Ms: number; p99Ms: number } },
        ) =>
          lines.push(
            `| ${sc.virtualClusters} | ${wave} | ${w.requests} | ${ms(w.wallMs)} | ${ms(w.latency.p50Ms)} / ${ms(w.latency.p99Ms)} |`,
          );
        row('create: Cluster, ResourceQuota, LimitRange, Service', sc.create);
        row('resync: the same four + kubeconfig Secret', sc.resync);
        row('delete accepted (UID precondition)', sc.deleteAccepted);
        lines.push(
          `| ${sc.virtualClusters} | delete: until every child is gone | | ${ms(sc.deleteGoneMs)} | |`,
        );
      }
      lines.push('');
    }
  }

  if (results.metacontroller) lines.push(...metacontrollerMarkdown(results.metacontroller));
  if (results.idle) lines.push(...idleMarkdown(results.idle));
  if (results.remote) lines.push(...remoteMarkdown(results.remote));

  if (results.notes.length > 0) {
    lines.push('## Notes', '');
    for (const note of results.notes) lines.push(`- ${note}`);
    lines.push('');
  }
  return lines.join('\n');
}

/** A table of one call's figures per number of Cells; nothing when no row was measured. */
function callTable(caption: string, rows: [number, CallFigures | undefined][]): string[] {
  const measured = rows.filter((row): row is [number, CallFigures] => row[1] !== undefined);
  if (measured.length === 0) return [];
  return [
    caption,
    '',
    '| Cells | Request | Floor (ms) | Hook (ms) | Hook vs floor | Response |',
    '| --- | --- | --- | --- | --- | --- |',
    ...measured.map(
      ([cells, f]) =>
        `| ${cells} | ${kb(f.bodyBytes)} | ${ms(f.floorMs)} | ${ms(f.hookMs)} | **${ratio(f.ratio)}** | ${kb(f.responseBytes)} |`,
    ),
    '',
  ];
}
