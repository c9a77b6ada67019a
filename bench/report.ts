/** bench/results.json and bench/results.md: the machine, every figure, and the targets. */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import type { ApiserverResult } from './apiserver.js';
import type { ScalingGrowth, ScalingResult } from './cell-scaling.js';
import type { HttpCaseResult } from './http.js';

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
  met: boolean | 'not measured';
}

export interface Results {
  machine: Machine;
  settings: Record<string, unknown>;
  http?: HttpCaseResult[];
  cellScaling?: ScalingResult;
  apiserver?: ApiserverResult;
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
  const vc = results.http
    ?.find((c) => c.hook === 'virtualcluster/sync')
    ?.runs.find((r) => r.connections === 64);
  list.push({
    name: 'virtualcluster/sync at concurrency 64, time per request vs the floor',
    limit: '≤ 1.5×',
    measured: vc ? ratio(vc.ratio) : 'not run',
    met: vc ? vc.ratio <= 1.5 : 'not measured',
  });
  const cell1000 = results.cellScaling?.sizes.find((s) => s.nodes === 1000);
  list.push({
    name: 'Cell sync, 1,000 Nodes × 20 pods, vs JSON.parse + JSON.stringify of the same body',
    limit: '≤ 1.5×',
    measured: cell1000 ? ratio(cell1000.ratio) : 'not run',
    met: cell1000 ? cell1000.ratio <= 1.5 : 'not measured',
  });
  const growth = results.cellScaling?.growth;
  const exponents = (pick: (g: ScalingGrowth) => number) =>
    growth?.map((g) => `${g.from}→${g.to}: ${pick(g).toFixed(2)}`).join(', ') ?? '';
  list.push({
    name: 'Cell sync grows linearly (or better) across 10, 100, 1,000, 5,000 Nodes: the hook’s own work (checks + sync)',
    limit: 'growth exponent ≤ 1.1 between sizes',
    measured: growth?.length ? exponents((g) => g.handlerExponent) : 'not run',
    met: results.cellScaling ? results.cellScaling.linear : 'not measured',
  });
  list.push({
    name: 'The same, whole call (JSON.parse included): grows no faster than the floor',
    limit: 'time factor ≤ 1.1 × the floor’s',
    measured: growth?.length
      ? `${exponents((g) => g.hookExponent)} (floor ${exponents((g) => g.floorExponent)})`
      : 'not run',
    met: results.cellScaling ? results.cellScaling.noFasterThanFloor : 'not measured',
  });
  list.push({
    name: 'apply → children through Metacontroller',
    limit: '—',
    measured: 'not measured: Metacontroller cannot be built here (Go module proxy 403)',
    met: 'not measured',
  });
  return list;
}

export function markdown(results: Results): string {
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
  lines.push('');

  lines.push('## Targets', '', '| Target | Limit | Measured | Met |', '| --- | --- | --- | --- |');
  for (const t of results.targets) {
    lines.push(
      `| ${t.name} | ${t.limit} | ${t.measured} | ${t.met === true ? 'yes' : t.met === false ? '**no**' : t.met} |`,
    );
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

  if (results.apiserver) {
    const a = results.apiserver;
    lines.push('## End to end with the real control plane', '');
    lines.push(`**Not measured:** ${a.notMeasured}`, '');
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

  if (results.notes.length > 0) {
    lines.push('## Notes', '');
    for (const note of results.notes) lines.push(`- ${note}`);
    lines.push('');
  }
  return lines.join('\n');
}
