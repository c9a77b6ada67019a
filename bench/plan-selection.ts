/**
 * A VirtualClusterPlan choosing among Cells (spec.cellSelector, D48) against the number of Cells
 * it matches: the size of its sync request as Metacontroller sends it (the placement index of
 * those Cells, D50, bench/bodies-plan.ts `selectorPlanSyncBody`, the benchmark's 50-Node Cell)
 * and the time of one call, against the floor (JSON.parse + JSON.stringify of the same body), in
 * this process; and the same for the kubecell-placement-index decorator's sync, which receives
 * every Cell whole and writes the index (`placementIndexSyncBody`). The hook path is the
 * server's minus the socket: JSON.parse, the request and schema checks, the sync, the response
 * check, JSON.stringify.
 */
import { performance } from 'node:perf_hooks';
import { registerControllers } from '../hooks/controllers/register.js';
import { checkResponse } from '../hooks/metacontroller/response-shape.js';
import { HookRegistry, type ResolvedHook } from '../hooks/server/registry.js';
import { placementIndexSyncBody, selectorPlanSyncBody } from './bodies-plan.js';
import { stats } from './stats.js';

/** The plan's sync at one number of Cells; its own figures are the plan call's. */
export interface PlanSelectionSize extends CallFigures {
  cells: number;
  nodesPerCell: number;
  reps: number;
  /** The plan's decision and chosen Cell, so a figure is known to be of a real choice. */
  decision: string;
  candidates: number;
  /**
   * The same plan not evaluated yet (no status): the sync reads the index and evaluates every
   * Cell (absent before D50).
   */
  firstEvaluation?: CallFigures;
  /** The kubecell-placement-index decorator's sync over the same Cells (absent before D50). */
  indexSync?: CallFigures;
}

export interface CallFigures {
  bodyBytes: number;
  floorMs: number;
  hookMs: number;
  /** hook / floor for the same body. */
  ratio: number;
  responseBytes: number;
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

function syncHook(now: Date, controller: 'plan' | 'placement-index'): ResolvedHook {
  const registry = registerControllers(new HookRegistry(), { env: {}, clock: () => now });
  const lookup = registry.lookup(controller, 'sync');
  if (!lookup.found) throw new Error(lookup.message);
  return lookup.hook;
}

/**
 * Medians of `reps` calls of `hook` on `text`, alternating with the floor, and the answer of the
 * warm-up call (the same for every call: the hooks are pure).
 */
async function measure(
  hook: ResolvedHook,
  text: string,
  reps: number,
): Promise<{ figures: CallFigures; answer: string }> {
  runFloor(text);
  const warm = await runHook(hook, text);
  const floor: number[] = [];
  const hookMs: number[] = [];
  for (let rep = 0; rep < reps; rep++) {
    floor.push(runFloor(text));
    hookMs.push((await runHook(hook, text)).ms);
  }
  const figures = {
    bodyBytes: Buffer.byteLength(text),
    floorMs: stats(floor).medianMs,
    hookMs: stats(hookMs).medianMs,
    ratio: stats(hookMs).medianMs / stats(floor).medianMs,
    responseBytes: Buffer.byteLength(warm.out),
  };
  return { figures, answer: warm.out };
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
  const planHook = syncHook(now, 'plan');
  const indexHook = syncHook(now, 'placement-index');
  const sizes: PlanSelectionSize[] = [];
  for (const cells of options.cells) {
    const text = JSON.stringify(selectorPlanSyncBody(now, cells, options.nodesPerCell));
    const indexText = JSON.stringify(placementIndexSyncBody(now, cells, options.nodesPerCell));
    options.log(
      `plan selection: ${cells} Cell(s) of ${options.nodesPerCell} Nodes, plan request ${(Buffer.byteLength(text) / 1e3).toFixed(0)} kB, index request ${(Buffer.byteLength(indexText) / 1e3).toFixed(0)} kB`,
    );
    const plan = await measure(planHook, text, options.reps);
    const { status } = JSON.parse(plan.answer) as {
      status: { decision: string; placement?: { candidates: number } };
    };
    const firstEvaluation = await measure(
      planHook,
      JSON.stringify(selectorPlanSyncBody(now, cells, options.nodesPerCell, false)),
      options.reps,
    );
    sizes.push({
      cells,
      nodesPerCell: options.nodesPerCell,
      reps: options.reps,
      ...plan.figures,
      decision: status.decision,
      candidates: status.placement?.candidates ?? 0,
      firstEvaluation: firstEvaluation.figures,
      indexSync: (await measure(indexHook, indexText, options.reps)).figures,
    });
  }
  return { sizes };
}
