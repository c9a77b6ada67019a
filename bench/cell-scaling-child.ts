/**
 * One measurement of the Cell scaling benchmark, in a process of its own so that sizes and
 * memory figures do not disturb one another. Run by bench/cell-scaling.ts:
 *
 *   node --import tsx --expose-gc bench/cell-scaling-child.ts generate <nodes> <file> <nowIso>
 *   node --import tsx --expose-gc bench/cell-scaling-child.ts time     <file> <reps> <nowIso>
 *   node --import tsx --expose-gc bench/cell-scaling-child.ts memory   <file> floor|hook <nowIso>
 *
 * `time` and `memory` print one JSON line on stdout.
 *
 * The hook path is what the server does with a body, minus the socket: JSON.parse, the request
 * check, the parent's schema check, the sync handler, the response check and JSON.stringify of
 * the answer (hooks/server/app.ts). The floor is JSON.parse + JSON.stringify of the same body.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { checkResponse } from '../hooks/metacontroller/response-shape.js';
import { registerControllers } from '../hooks/controllers/register.js';
import { HookRegistry, type ResolvedHook } from '../hooks/server/registry.js';
import { cellSyncBody } from './bodies.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const collect = gc;

function cellSyncHook(now: Date): ResolvedHook {
  const registry = registerControllers(new HookRegistry(), { env: {}, clock: () => now });
  const lookup = registry.lookup('cell', 'sync');
  if (!lookup.found) throw new Error(lookup.message);
  return lookup.hook;
}

interface HookRun {
  parseMs: number;
  handlerMs: number;
  serializeMs: number;
  totalMs: number;
  responseBytes: number;
  nodesReported: number;
}

async function runHook(
  hook: ResolvedHook,
  text: string,
): Promise<{ run: HookRun; keep: unknown[] }> {
  const t0 = performance.now();
  const body: unknown = JSON.parse(text);
  const t1 = performance.now();
  const prepared = hook.prepare(body);
  if (!prepared.ok) throw new Error(prepared.problems.join('; '));
  const response = await prepared.value();
  const problems = checkResponse(hook.responseKind, response);
  if (problems.length > 0) throw new Error(problems.join('; '));
  const t2 = performance.now();
  const out = JSON.stringify(response);
  const t3 = performance.now();
  const status = (response as { status?: { nodes?: unknown[] } }).status;
  return {
    run: {
      parseMs: t1 - t0,
      handlerMs: t2 - t1,
      serializeMs: t3 - t2,
      totalMs: t3 - t0,
      responseBytes: Buffer.byteLength(out),
      nodesReported: status?.nodes?.length ?? 0,
    },
    keep: [body, response, out],
  };
}

function runFloor(text: string): { ms: number; keep: unknown[] } {
  const t0 = performance.now();
  const parsed: unknown = JSON.parse(text);
  const out = JSON.stringify(parsed);
  return { ms: performance.now() - t0, keep: [parsed, out] };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

async function main(): Promise<void> {
  const [mode, ...args] = process.argv.slice(2);
  if (mode === 'generate') {
    const [nodes, file, nowIso] = args as [string, string, string];
    const text = JSON.stringify(
      cellSyncBody({ nodes: Number(nodes), podsPerNode: 20, hostNamespaces: 50 }, new Date(nowIso)),
    );
    writeFileSync(file, text);
    return;
  }
  if (mode === 'time') {
    const [file, repsText, nowIso] = args as [string, string, string];
    const text = readFileSync(file, 'utf8');
    const hook = cellSyncHook(new Date(nowIso));
    // Warm up both paths (JIT, inline caches) before measuring.
    runFloor(text);
    await runHook(hook, text);
    const floor: number[] = [];
    const hookRuns: HookRun[] = [];
    for (let rep = 0; rep < Number(repsText); rep++) {
      // Alternate, so that both see the same machine load on average.
      collect();
      floor.push(runFloor(text).ms);
      collect();
      hookRuns.push((await runHook(hook, text)).run);
    }
    const pick = (key: keyof HookRun) => median(hookRuns.map((run) => run[key]));
    process.stdout.write(
      `${JSON.stringify({
        bodyBytes: Buffer.byteLength(text),
        reps: hookRuns.length,
        floorMs: median(floor),
        hookMs: pick('totalMs'),
        parseMs: pick('parseMs'),
        handlerMs: pick('handlerMs'),
        serializeMs: pick('serializeMs'),
        responseBytes: hookRuns[0]?.responseBytes ?? 0,
        nodesReported: hookRuns[0]?.nodesReported ?? 0,
        floorSamplesMs: floor,
        hookSamplesMs: hookRuns.map((run) => run.totalMs),
      })}\n`,
    );
    return;
  }
  if (mode === 'memory') {
    const [file, which, nowIso] = args as [string, string, string];
    const text = readFileSync(file, 'utf8');
    const hook = cellSyncHook(new Date(nowIso));
    collect();
    const before = process.memoryUsage();
    const kept = which === 'hook' ? (await runHook(hook, text)).keep : runFloor(text).keep;
    // Right after the call, before any forced collection: what the call made the process hold,
    // garbage included (close to its peak: V8 rarely returns memory to the system mid-call).
    const during = process.memoryUsage();
    collect();
    const after = process.memoryUsage();
    process.stdout.write(
      `${JSON.stringify({
        which,
        heapGrowthBytes: during.heapUsed - before.heapUsed,
        // What stays reachable: the parsed request and the answer (hook), or the parsed body
        // and its serialisation (floor).
        retainedHeapBytes: after.heapUsed - before.heapUsed,
        rssGrowthBytes: during.rss - before.rss,
        keptObjects: kept.length,
      })}\n`,
    );
    return;
  }
  throw new Error(`unknown mode ${String(mode)}`);
}

await main();
