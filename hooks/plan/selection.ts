/**
 * A plan with `spec.cellSelector`: every Cell Metacontroller related through the selector
 * (customize.ts) is evaluated as a plan naming it would be (sync.ts `planInput`), and one is
 * chosen by `spec.placementPolicy` (hooks/placement/rank.ts, D48). The plan's checks are the
 * chosen Cell's; with none chosen, those of the first Cell left out, so the reasons the plan
 * gives are always one Cell's whole report. `placement` says which Cells were weighed and why.
 */
import { API_VERSION } from '../api/kinds.js';
import { check } from '../feasibility/check.js';
import { evaluateFeasibility, type FeasibilityResult } from '../feasibility/evaluate.js';
import { Reason } from '../feasibility/reasons.js';
import type {
  Cell,
  FeasibilityCheck,
  PlacementPolicy,
  VirtualClusterPlan,
  VirtualClusterPlanStatus,
} from '../generated/types/index.js';
import { compareStrings } from '../json/compare.js';
import { childKey, listObjects, type ObjectMap } from '../metacontroller/protocol.js';
import { chooseCell, type CandidateCell, type RankedCell } from '../placement/rank.js';
import { formatScore } from '../placement/score.js';
import type { PlanConfig } from './config.js';
import { planInput } from './input.js';

export type PlacementStatus = NonNullable<VirtualClusterPlanStatus['placement']>;

export interface SelectionResult extends FeasibilityResult {
  placement: PlacementStatus;
}

const CELL = childKey(API_VERSION, 'Cell');

const DEFAULT_POLICY: PlacementPolicy = { type: 'MostAvailable' };

export function evaluateSelection(
  plan: VirtualClusterPlan,
  related: ObjectMap,
  config: PlanConfig,
  now: Date,
): SelectionResult {
  const policy = plan.spec.placementPolicy ?? DEFAULT_POLICY;
  const reports = matchedCells(related, config.cellNamespace).map((cell) => ({
    cell,
    checks: evaluateFeasibility(planInput(plan, related, config, now, { cell })).checks,
  }));
  const choice = chooseCell(
    reports.map(({ cell, checks }): CandidateCell => ({
      name: cell.metadata.name,
      labels: cell.metadata.labels ?? {},
      resolvedBy: cell.status?.resolvedBy ?? 0,
      checks,
    })),
    policy,
  );
  const reportOf = (name: string | undefined) =>
    reports.find((report) => report.cell.metadata.name === name)?.checks;
  const firstLeftOut = choice.filtered[0]?.cells[0];
  const checks =
    reportOf(choice.chosen?.name) ??
    reportOf(firstLeftOut) ??
    noCellMatches(plan, related, config, now);
  return {
    decision: choice.decision,
    checks,
    placement: {
      policy,
      candidates: choice.candidates,
      ...(choice.chosen === undefined ? {} : { chosen: rankedStatus(choice.chosen) }),
      ...(choice.runnerUp === undefined ? {} : { runnerUp: rankedStatus(choice.runnerUp) }),
      filtered: choice.filtered,
    },
  };
}

/** The Cells of the controller namespace among those related, by name. */
function matchedCells(related: ObjectMap, cellNamespace: string): Cell[] {
  return (listObjects<Cell>(related, CELL) ?? [])
    .filter((cell) => cell.metadata.namespace === cellNamespace)
    .sort((a, b) => compareStrings(a.metadata.name, b.metadata.name));
}

/** No Cell matched: CellFound is Unknown, and the class and namespace are still checked. */
function noCellMatches(
  plan: VirtualClusterPlan,
  related: ObjectMap,
  config: PlanConfig,
  now: Date,
): FeasibilityCheck[] {
  const { checks } = evaluateFeasibility(
    planInput(plan, related, config, now, { cell: undefined }),
  );
  const selector = JSON.stringify(plan.spec.cellSelector ?? {});
  return [
    check(
      'CellFound',
      'Unknown',
      Reason.NoCellMatches,
      `No Cell in namespace ${config.cellNamespace} matches spec.cellSelector ${selector}; the plan is evaluated again when a Cell is created or labelled to match.`,
    ),
    ...checks.filter((entry) => entry.name !== 'CellFound'),
  ];
}

function rankedStatus(cell: RankedCell): NonNullable<PlacementStatus['chosen']> {
  return {
    name: cell.name,
    ...(cell.score === undefined
      ? {}
      : {
          score: formatScore(cell.score.milli),
          scoreResource: cell.score.resource,
          left: cell.score.left,
        }),
    ...(cell.domain === undefined ? {} : { domain: cell.domain }),
  };
}
