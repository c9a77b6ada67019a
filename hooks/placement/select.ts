/**
 * A placement with a `cellSelector`, for a plan and a VirtualCluster alike: every matched Cell is
 * evaluated as a placement naming it would be (`evaluate`), one is chosen by the policy
 * (rank.ts), and the report says which Cells were weighed and why (D48). The checks returned
 * are the chosen Cell's; with none chosen, those of the first Cell left out, so the reasons
 * given are always one Cell's whole report; with no Cell matched, CellFound is Unknown
 * `NoCellMatches` and the rest of the placement (class, namespace) is still checked.
 */
import type { UnreadableEntry } from '../api/placement-index.js';
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
import { PLACEMENT_INDEX_NAME } from '../api/placement-index.js';
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
  /**
   * Placement index entries that may match but cannot be read (hooks/api/placement-index.ts):
   * each is left out, undecided, under its own name.
   */
  unreadable?: readonly UnreadableEntry[];
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
  const unreadable = (request.unreadable ?? []).map((entry) => unreadableCandidate(entry, request));
  const choice = chooseCell(
    [
      ...reports.map(({ cell, checks }): CandidateCell => ({
        name: cell.metadata.name,
        labels: cell.metadata.labels ?? {},
        resolvedBy: cell.status?.resolvedBy ?? 0,
        checks,
      })),
      ...unreadable,
    ],
    policy,
    request.prefer,
  );
  const checksOf = (name: string | undefined) =>
    reports.find((report) => report.cell.metadata.name === name)?.checks ??
    unreadable.find((candidate) => candidate.name === name)?.checks;
  const chosen = reports.find((report) => report.cell.metadata.name === choice.chosen?.name);
  const firstLeftOut = checksOf(choice.filtered[0]?.cells[0]);
  return {
    decision: choice.decision,
    checks:
      chosen?.checks ?? (firstLeftOut ? [...firstLeftOut] : undefined) ?? noCellMatches(request),
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

/** An index entry that cannot be read stands for a Cell left out, undecided, under its name. */
function unreadableCandidate(entry: UnreadableEntry, request: SelectionRequest): CandidateCell {
  return {
    name: entry.entry,
    labels: entry.labels ?? {},
    resolvedBy: 0,
    checks: [
      check(
        'CellFound',
        'Unknown',
        Reason.PlacementIndexUnreadable,
        `The placement index entry ${entry.entry} in ${request.cellNamespace}/${PLACEMENT_INDEX_NAME} cannot be read (${entry.problem}); the kubecell-placement-index controller writes it anew when a Cell changes.`,
      ),
    ],
  };
}

/** No Cell matched: CellFound is Unknown, and the class and namespace are still checked. */
function noCellMatches(request: SelectionRequest): FeasibilityCheck[] {
  const selector = JSON.stringify(request.selector);
  return withoutCell(
    request,
    check(
      'CellFound',
      'Unknown',
      Reason.NoCellMatches,
      `No Cell in namespace ${request.cellNamespace} matches spec.cellSelector ${selector}; ${request.evaluatedAgain}`,
    ),
  );
}

/** The placement's checks without a Cell: `cellFound` first, then the class and namespace. */
function withoutCell(request: SelectionRequest, cellFound: FeasibilityCheck): FeasibilityCheck[] {
  const { checks } = request.evaluate(undefined);
  return [cellFound, ...checks.filter((entry) => entry.name !== 'CellFound')];
}

/**
 * No Cell can be weighed at all (the placement index is missing or unreadable): Unknown, with
 * `cellFound` saying why, an empty report, and the class and namespace still checked.
 */
export function selectNothing(request: SelectionRequest, cellFound: FeasibilityCheck): Selection {
  return {
    decision: 'Unknown',
    checks: withoutCell(request, cellFound),
    report: { policy: request.policy ?? DEFAULT_POLICY, candidates: 0, filtered: [] },
  };
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
