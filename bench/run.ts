/**
 * `npm run bench`: the KubeCell benchmark. Writes bench/results.json and bench/results.md.
 *
 *   npm run bench                         everything (about 5 minutes on 2 cores)
 *   npm run bench -- --only=http,scaling  some parts: http, scaling, apiserver
 *   npm run bench -- --quick              shorter runs and sizes, to try the harness
 *
 * Parts (method and discussion in docs/performance.md):
 *   http       hooks over HTTP with autocannon, against the real hook server and the floor
 *   scaling    Cell sync time and memory for 10 to 5,000 Nodes, against the floor
 *   apiserver  server-side apply and deletion of VirtualCluster children on a real apiserver
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as prettier from 'prettier';
import { runApiserverBenchmark } from './apiserver.js';
import { runCellScaling } from './cell-scaling.js';
import { runHttpBenchmark } from './http.js';
import { REPO_ROOT } from './processes.js';
import { machine, markdown, targets, type Results } from './report.js';

const PARTS = ['http', 'scaling', 'apiserver'] as const;
type Part = (typeof PARTS)[number];

function parseArgs(argv: string[]): { parts: Set<Part>; quick: boolean } {
  let parts = new Set<Part>(PARTS);
  let quick = false;
  for (const arg of argv) {
    if (arg === '--quick') quick = true;
    else if (arg.startsWith('--only=')) {
      const wanted = arg.slice('--only='.length).split(',');
      for (const part of wanted) {
        if (!(PARTS as readonly string[]).includes(part))
          throw new Error(`unknown part ${part}; parts are ${PARTS.join(', ')}`);
      }
      parts = new Set(wanted as Part[]);
    } else throw new Error(`unknown argument ${arg}; see bench/run.ts`);
  }
  return { parts, quick };
}

/** Written as the repository's Prettier settings format it, so that `npm run lint` stays clean. */
async function writeFormatted(file: string, text: string): Promise<void> {
  const options = (await prettier.resolveConfig(file)) ?? {};
  writeFileSync(file, await prettier.format(text, { ...options, filepath: file }));
}

function log(line: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

async function main(): Promise<void> {
  const { parts, quick } = parseArgs(process.argv.slice(2));
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
  };
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

  results.machine.loadAverageEnd = os.loadavg().map((value) => Math.round(value * 100) / 100);
  const busy = Math.max(
    results.machine.loadAverageStart[0] ?? 0,
    results.machine.loadAverageEnd[0] ?? 0,
  );
  if (busy > results.machine.cores * 0.5) {
    results.notes.push(
      `The machine was busy: 1-minute load average ${results.machine.loadAverageStart[0]} at the start and ${results.machine.loadAverageEnd[0]} at the end on ${results.machine.cores} cores (other work was running). Absolute figures are pessimistic; hook and floor were measured alternately under the same conditions, so the ratios are the figures to compare.`,
    );
  }
  if (results.http) {
    results.notes.push(
      'Autocannon runs in the benchmark process on the same machine as the server: at concurrency 64 client and server share the cores, which adds the same client cost to hook and floor and pulls the time-per-request ratios toward 1. The CPU-per-request ratio counts the server process alone and is not affected.',
    );
  }
  const complete: Results = { ...results, targets: targets(results) };
  await writeFormatted(path.join(REPO_ROOT, 'bench', 'results.json'), JSON.stringify(complete));
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
