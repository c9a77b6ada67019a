/**
 * A placement with a `cellSelector`, for a plan and a VirtualCluster alike: every matched Cell is
 * evaluated as a placement naming it would be (`evaluate`), one is chosen by the policy
 * (rank.ts), and the report says which Cells were weighed and why (D48). The checks returned
 * are the chosen Cell's; with none chosen, those of the first Cell left out, so the reasons
 * given are always one Cell's whole report; with no Cell matched, CellFound is Unknown
 * `NoCellMatches` and the rest of the placement (class, namespace) is still checked.
 */
import { check } from '../feasibility/check.js';
import type { FeasibilityResult } from '../feasibility/evaluate.js';
import { Reason } from '../feasibility/reasons.js';
import type {
  Cell,
  CellSelector,
  FeasibilityCheck,
  PlacementPolicy,
  PlacementReport,
  RankedCell as RankedCellStatus,
} from '../generated/types/index.js';
import { compareStrings } from '../json/compare.js';
import { chooseCell, type CandidateCell, type RankedCell } from './rank.js';
import { formatScore } from './score.js';

const DEFAULT_POLICY: PlacementPolicy = { type: 'MostAvailable' };

export interface SelectionRequest {
  /** The Cells the selector matched (any order; they are taken by name). */
  cells: readonly Cell[];
  selector: CellSelector;
  policy: PlacementPolicy | undefined;
  /** The namespace the Cells were selected in, for the message when none matched. */
  cellNamespace: string;
  /** When a placement with no Cell matched is evaluated again, in the owner's words. */
  evaluatedAgain: string;
  /** The feasibility evaluation of the placement on `cell` (undefined: no Cell). */
  evaluate: (cell: Cell | undefined) => FeasibilityResult;
  /** A Cell taken whenever it accepts, ahead of the policy (rank.ts `chooseCell`). */
  prefer?: string;
}

export interface Selection extends FeasibilityResult {
  report: PlacementReport;
  /** The Cell chosen, as observed. */
  chosen?: Cell;
}

export function selectCell(request: SelectionRequest): Selection {
  const policy = request.policy ?? DEFAULT_POLICY;
  const reports = [...request.cells]
    .sort((a, b) => compareStrings(a.metadata.name, b.metadata.name))
    .map((cell) => ({ cell, checks: request.evaluate(cell).checks }));
  const choice = chooseCell(
    reports.map(({ cell, checks }): CandidateCell => ({
      name: cell.metadata.name,
      labels: cell.metadata.labels ?? {},
      resolvedBy: cell.status?.resolvedBy ?? 0,
      checks,
    })),
    policy,
    request.prefer,
  );
  const reportOf = (name: string | undefined) =>
    reports.find((report) => report.cell.metadata.name === name);
  const chosen = reportOf(choice.chosen?.name);
  const firstLeftOut = reportOf(choice.filtered[0]?.cells[0]);
  return {
    decision: choice.decision,
    checks: chosen?.checks ?? firstLeftOut?.checks ?? noCellMatches(request),
    report: {
      policy,
      candidates: choice.candidates,
      ...(choice.chosen === undefined ? {} : { chosen: rankedStatus(choice.chosen) }),
      ...(choice.runnerUp === undefined ? {} : { runnerUp: rankedStatus(choice.runnerUp) }),
      filtered: choice.filtered,
    },
    ...(chosen === undefined ? {} : { chosen: chosen.cell }),
  };
}

/** No Cell matched: CellFound is Unknown, and the class and namespace are still checked. */
function noCellMatches(request: SelectionRequest): FeasibilityCheck[] {
  const { checks } = request.evaluate(undefined);
  const selector = JSON.stringify(request.selector);
  return [
    check(
      'CellFound',
      'Unknown',
      Reason.NoCellMatches,
      `No Cell in namespace ${request.cellNamespace} matches spec.cellSelector ${selector}; ${request.evaluatedAgain}`,
    ),
    ...checks.filter((entry) => entry.name !== 'CellFound'),
  ];
}

function rankedStatus(cell: RankedCell): RankedCellStatus {
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
