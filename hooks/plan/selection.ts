/**
 * A plan with `spec.cellSelector`: every Cell Metacontroller related through the selector
 * (customize.ts) is evaluated as a plan naming it would be (input.ts `planInput`), and one is
 * chosen by `spec.placementPolicy` (hooks/placement/select.ts, D48). `placement` says which
 * Cells were weighed and why.
 */
import { API_VERSION } from '../api/kinds.js';
import { evaluateFeasibility, type FeasibilityResult } from '../feasibility/evaluate.js';
import type { Cell, PlacementReport, VirtualClusterPlan } from '../generated/types/index.js';
import { childKey, listObjects, type ObjectMap } from '../metacontroller/protocol.js';
import { selectCell } from '../placement/select.js';
import type { PlanConfig } from './config.js';
import { planInput } from './input.js';

export interface SelectionResult extends FeasibilityResult {
  placement: PlacementReport;
}

const CELL = childKey(API_VERSION, 'Cell');

export function evaluateSelection(
  plan: VirtualClusterPlan,
  related: ObjectMap,
  config: PlanConfig,
  now: Date,
): SelectionResult {
  const { decision, checks, report } = selectCell({
    cells: (listObjects<Cell>(related, CELL) ?? []).filter(
      (cell) => cell.metadata.namespace === config.cellNamespace,
    ),
    selector: plan.spec.cellSelector ?? {},
    policy: plan.spec.placementPolicy,
    cellNamespace: config.cellNamespace,
    evaluatedAgain: 'the plan is evaluated again when a Cell is created or labelled to match.',
    evaluate: (cell) => evaluateFeasibility(planInput(plan, related, config, now, { cell })),
  });
  return { decision, checks, placement: report };
}
