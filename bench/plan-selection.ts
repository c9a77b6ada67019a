/**
 * A VirtualClusterPlan choosing among Cells (spec.cellSelector, D48) against the number of Cells
 * it matches: the size of its sync request as Metacontroller sends it (every matching Cell whole,
 * bench/bodies-plan.ts `selectorPlanSyncBody`, the benchmark's 50-Node Cell) and the time of one
 * call, against the floor (JSON.parse + JSON.stringify of the same body), in this process. The
 * hook path is the server's minus the socket: JSON.parse, the request and schema checks, the
 * sync (every Cell evaluated, one chosen), the response check, JSON.stringify.
 */
import { performance } from 'node:perf_hooks';
import { registerControllers } from '../hooks/controllers/register.js';
import { checkResponse } from '../hooks/metacontroller/response-shape.js';
import { HookRegistry, type ResolvedHook } from '../hooks/server/registry.js';
import { selectorPlanSyncBody } from './bodies-plan.js';
import { stats } from './stats.js';

export interface PlanSelectionSize {
  cells: number;
  nodesPerCell: number;
  bodyBytes: number;
  reps: number;
  floorMs: number;
  hookMs: number;
  /** hook / floor for the same body. */
  ratio: number;
  responseBytes: number;
  /** The plan's decision and chosen Cell, so a figure is known to be of a real choice. */
  decision: string;
  candidates: number;
}

export interface PlanSelectionResult {
  sizes: PlanSelectionSize[];
}

export interface PlanSelectionOptions {
  cells: number[];
  nodesPerCell: number;
  reps: number;
  log: (line: string) => void;
}

function planSyncHook(now: Date): ResolvedHook {
  const registry = registerControllers(new HookRegistry(), { env: {}, clock: () => now });
  const lookup = registry.lookup('plan', 'sync');
  if (!lookup.found) throw new Error(lookup.message);
  return lookup.hook;
}

async function runHook(hook: ResolvedHook, text: string): Promise<{ ms: number; out: string }> {
  const t0 = performance.now();
  const prepared = hook.prepare(JSON.parse(text));
  if (!prepared.ok) throw new Error(prepared.problems.join('; '));
  const response = await prepared.value();
  const problems = checkResponse(hook.responseKind, response);
  if (problems.length > 0) throw new Error(problems.join('; '));
  const out = JSON.stringify(response);
  return { ms: performance.now() - t0, out };
}

function runFloor(text: string): number {
  const t0 = performance.now();
  JSON.stringify(JSON.parse(text));
  return performance.now() - t0;
}

export async function runPlanSelection(
  options: PlanSelectionOptions,
): Promise<PlanSelectionResult> {
  const now = new Date();
  const hook = planSyncHook(now);
  const sizes: PlanSelectionSize[] = [];
  for (const cells of options.cells) {
    const text = JSON.stringify(selectorPlanSyncBody(now, cells, options.nodesPerCell));
    options.log(
      `plan selection: ${cells} Cell(s) of ${options.nodesPerCell} Nodes, request ${(Buffer.byteLength(text) / 1e3).toFixed(0)} kB`,
    );
    runFloor(text);
    const warm = await runHook(hook, text);
    const floor: number[] = [];
    const hookMs: number[] = [];
    for (let rep = 0; rep < options.reps; rep++) {
      // Alternate, so that both see the same machine load on average.
      floor.push(runFloor(text));
      hookMs.push((await runHook(hook, text)).ms);
    }
    const status = (
      JSON.parse(warm.out) as {
        status: { decision: string; placement?: { candidates: number } };
      }
    ).status;
    sizes.push({
      cells,
      nodesPerCell: options.nodesPerCell,
      bodyBytes: Buffer.byteLength(text),
      reps: options.reps,
      floorMs: stats(floor).medianMs,
      hookMs: stats(hookMs).medianMs,
      ratio: stats(hookMs).medianMs / stats(floor).medianMs,
      responseBytes: Buffer.byteLength(warm.out),
      decision: status.decision,
      candidates: status.placement?.candidates ?? 0,
    });
  }
  return { sizes };
}
