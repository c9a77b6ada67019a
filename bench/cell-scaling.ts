/**
 * Cell sync cost against the number of Nodes (20 pods per Node): time and memory per size,
 * each compared with the floor (JSON.parse + JSON.stringify of the same body) measured in the
 * same process. Each size runs in fresh processes (bench/cell-scaling-child.ts): one generates
 * the body into a file, one times floor and hook alternately, and one each measures the memory
 * of a single floor and hook call.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './processes.js';

const run = promisify(execFile);

export interface ScalingSize {
  nodes: number;
  pods: number;
  bodyBytes: number;
  reps: number;
  floorMs: number;
  hookMs: number;
  /** hook / floor for the same body. */
  ratio: number;
  parseMs: number;
  handlerMs: number;
  serializeMs: number;
  responseBytes: number;
  nodesReported: number;
  hookMsPerNode: number;
  floorMsPerNode: number;
  /** One call in a fresh process; growth measured right after the call, before a forced GC. */
  memory: {
    hook: CallMemory;
    floor: CallMemory;
  };
  floorSamplesMs: number[];
  hookSamplesMs: number[];
}

export interface CallMemory {
  heapGrowthBytes: number;
  retainedHeapBytes: number;
  rssGrowthBytes: number;
}

/**
 * Between two sizes. An exponent is log(time factor) / log(Nodes factor): 1 is linear, below 1
 * better than linear.
 */
export interface ScalingGrowth {
  from: number;
  to: number;
  nodesFactor: number;
  /** The hook's own work: request checks, sync, response check (no JSON.parse). */
  handlerTimeFactor: number;
  handlerExponent: number;
  /** The whole call, JSON.parse of the body included. */
  hookTimeFactor: number;
  hookExponent: number;
  floorTimeFactor: number;
  floorExponent: number;
}

export interface ScalingResult {
  sizes: ScalingSize[];
  growth: ScalingGrowth[];
  /** The handler's time grows no faster than the Nodes between consecutive sizes (10% slack). */
  linear: boolean;
  /** The whole call grows no faster than the floor between consecutive sizes (10% slack). */
  noFasterThanFloor: boolean;
}

export interface ScalingOptions {
  sizes: number[];
  /** Repetitions per size; default by size. */
  reps?: (nodes: number) => number;
  log: (line: string) => void;
}

function defaultReps(nodes: number): number {
  if (nodes <= 10) return 200;
  if (nodes <= 100) return 40;
  if (nodes <= 1000) return 9;
  return 5;
}

async function child(args: string[]): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    [
      '--import',
      'tsx',
      '--expose-gc',
      '--max-old-space-size=8192',
      'bench/cell-scaling-child.ts',
      ...args,
    ],
    { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}

export async function runCellScaling(options: ScalingOptions): Promise<ScalingResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kubecell-bench-'));
  const now = new Date().toISOString();
  const sizes: ScalingSize[] = [];
  try {
    for (const nodes of options.sizes) {
      const file = path.join(dir, `cell-${nodes}.json`);
      options.log(`scaling: ${nodes} Nodes: generating the body`);
      await child(['generate', String(nodes), file, now]);
      const reps = (options.reps ?? defaultReps)(nodes);
      options.log(
        `scaling: ${nodes} Nodes (${(statSync(file).size / 1e6).toFixed(1)} MB): timing, ${reps} reps`,
      );
      const time = JSON.parse(await child(['time', file, String(reps), now])) as Omit<
        ScalingSize,
        'nodes' | 'pods' | 'ratio' | 'hookMsPerNode' | 'floorMsPerNode' | 'memory'
      >;
      options.log(`scaling: ${nodes} Nodes: memory`);
      const memory = async (which: 'hook' | 'floor'): Promise<CallMemory> => {
        const { heapGrowthBytes, retainedHeapBytes, rssGrowthBytes } = JSON.parse(
          await child(['memory', file, which, now]),
        ) as CallMemory;
        return { heapGrowthBytes, retainedHeapBytes, rssGrowthBytes };
      };
      const floorMemory = await memory('floor');
      const hookMemory = await memory('hook');
      rmSync(file, { force: true });
      sizes.push({
        nodes,
        pods: nodes * 20,
        ...time,
        ratio: time.hookMs / time.floorMs,
        hookMsPerNode: time.hookMs / nodes,
        floorMsPerNode: time.floorMs / nodes,
        memory: { hook: hookMemory, floor: floorMemory },
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const growth: ScalingGrowth[] = [];
  for (let i = 1; i < sizes.length; i++) {
    const a = sizes[i - 1] as ScalingSize;
    const b = sizes[i] as ScalingSize;
    const nodesFactor = b.nodes / a.nodes;
    const exponent = (factor: number) => Math.log(factor) / Math.log(nodesFactor);
    const handlerTimeFactor = b.handlerMs / a.handlerMs;
    const hookTimeFactor = b.hookMs / a.hookMs;
    const floorTimeFactor = b.floorMs / a.floorMs;
    growth.push({
      from: a.nodes,
      to: b.nodes,
      nodesFactor,
      handlerTimeFactor,
      handlerExponent: exponent(handlerTimeFactor),
      hookTimeFactor,
      hookExponent: exponent(hookTimeFactor),
      floorTimeFactor,
      floorExponent: exponent(floorTimeFactor),
    });
  }
  return {
    sizes,
    growth,
    linear: growth.every((step) => step.handlerExponent <= 1.1),
    noFasterThanFloor: growth.every((step) => step.hookTimeFactor <= step.floorTimeFactor * 1.1),
  };
}
