/**
 * The choice of a Cell among those a selector matched, each already evaluated by the
 * feasibility evaluation (hooks/feasibility/evaluate.ts) exactly as a placement naming it would
 * be. A pure function of its input: the same Cells, reports and policy give the same choice and
 * the same findings, byte for byte (decision D48).
 *
 * - A Cell whose report has a Fail is rejected, one with an Unknown (not live, inventory not
 *   fresh, a namespace selector not decidable yet) is undecided; each is counted under the
 *   reason of its first such check. The rest are accepted and scored (score.ts).
 * - `MostAvailable` (the default) takes the accepted Cell with the highest score, `Pack` the
 *   lowest (the fullest Cell that still fits, so others can stay empty), `Spread` the one whose
 *   value of `spreadKey` (a Cell label) has the fewest VirtualClusters resolved over all matched
 *   Cells with that value, then the highest score; Cells without the label come last.
 * - Ties are broken by name, so the choice never depends on the order Cells were listed in.
 *
 * The findings are bounded whatever the number of Cells: the chosen Cell and the runner-up,
 * and per reason a count and the first few Cell names.
 */
import type { FeasibilityCheck } from '../generated/types/index.js';
import { compareStrings } from '../json/compare.js';
import { decide } from '../feasibility/evaluate.js';
import { Decision } from '../feasibility/reasons.js';
import { scoreOf, type CellScore } from './score.js';

export type PlacementPolicyType = 'MostAvailable' | 'Pack' | 'Spread';

export interface PlacementPolicy {
  type: PlacementPolicyType;
  /** The Cell label whose values are the spread's domains (`Spread` only). */
  spreadKey?: string;
}

/** One Cell the selector matched, with its feasibility report for this placement. */
export interface CandidateCell {
  name: string;
  labels: Readonly<Record<string, string>>;
  /** VirtualClusters resolved to it (its status.resolvedBy). */
  resolvedBy: number;
  checks: readonly FeasibilityCheck[];
}

export interface RankedCell {
  name: string;
  /** Undefined when the class needs nothing capacity-checked. */
  score?: CellScore;
  /** The Cell's value of `spreadKey` (`Spread` only; absent when the Cell lacks the label). */
  domain?: string;
}

/** Cells left out for one reason. */
export interface FilteredCells {
  result: 'Fail' | 'Unknown';
  reason: string;
  count: number;
  /** The first Cells by name, at most MAX_NAMED_CELLS. */
  cells: string[];
}

export interface PlacementChoice {
  decision: Decision;
  candidates: number;
  chosen?: RankedCell;
  runnerUp?: RankedCell;
  filtered: FilteredCells[];
}

/** Most Cell names given per reason. */
export const MAX_NAMED_CELLS = 5;

/**
 * `prefer` names a Cell to take whenever it accepts, ahead of the policy (a VirtualCluster
 * created from a plan takes the plan's Cell while it still fits); the runner-up is then the
 * policy's first among the others.
 */
export function chooseCell(
  candidates: readonly CandidateCell[],
  policy: PlacementPolicy,
  prefer?: string,
): PlacementChoice {
  const byName = [...candidates].sort((a, b) => compareStrings(a.name, b.name));
  const accepted = byName.filter((cell) => decide(cell.checks) === Decision.Accepted);
  const filtered = filteredCells(byName.filter((cell) => !accepted.includes(cell)));
  const ranked = rankAccepted(accepted, byName, policy);
  const preferred = ranked.findIndex((cell) => cell.name === prefer);
  if (preferred > 0) ranked.unshift(...ranked.splice(preferred, 1));
  const [chosen, runnerUp] = ranked;
  return {
    decision:
      chosen !== undefined
        ? Decision.Accepted
        : filtered.some((group) => group.result === 'Unknown') || byName.length === 0
          ? Decision.Unknown
          : Decision.Rejected,
    candidates: byName.length,
    ...(chosen === undefined ? {} : { chosen }),
    ...(runnerUp === undefined ? {} : { runnerUp }),
    filtered,
  };
}

function rankAccepted(
  accepted: readonly CandidateCell[],
  all: readonly CandidateCell[],
  policy: PlacementPolicy,
): RankedCell[] {
  const key = policy.type === 'Spread' ? policy.spreadKey : undefined;
  const load = key === undefined ? new Map<string, number>() : domainLoad(all, key);
  const ranked = accepted.map((cell): RankedCell & { load: number } => {
    const score = scoreOf(cell.checks);
    const domain = key === undefined ? undefined : cell.labels[key];
    return {
      name: cell.name,
      ...(score === undefined ? {} : { score }),
      ...(domain === undefined ? {} : { domain }),
      load: domain === undefined ? Number.POSITIVE_INFINITY : (load.get(domain) ?? 0),
    };
  });
  ranked.sort((a, b) => compareRanked(a, b, policy.type));
  return ranked.map(({ load: _load, ...cell }) => cell);
}

/** VirtualClusters resolved per value of the spread label, over every matched Cell. */
function domainLoad(cells: readonly CandidateCell[], key: string): Map<string, number> {
  const load = new Map<string, number>();
  for (const cell of cells) {
    const domain = cell.labels[key];
    if (domain !== undefined) load.set(domain, (load.get(domain) ?? 0) + cell.resolvedBy);
  }
  return load;
}

/** Negative when `a` is the better choice. */
function compareRanked(
  a: RankedCell & { load: number },
  b: RankedCell & { load: number },
  type: PlacementPolicyType,
): number {
  if (type === 'Spread' && a.load !== b.load) return a.load < b.load ? -1 : 1;
  const scoreA = a.score?.milli;
  const scoreB = b.score?.milli;
  if (scoreA !== scoreB) {
    // A Cell with a score is preferred to one without only when the other has none at all,
    // which happens only when the class needs nothing capacity-checked (then none has one).
    if (scoreA === undefined) return 1;
    if (scoreB === undefined) return -1;
    return type === 'Pack' ? scoreA - scoreB : scoreB - scoreA;
  }
  return compareStrings(a.name, b.name);
}

/** The Cells left out, grouped by result and reason: most first, then by reason. */
function filteredCells(cells: readonly CandidateCell[]): FilteredCells[] {
  const groups = new Map<string, FilteredCells>();
  for (const cell of cells) {
    const blocking =
      cell.checks.find((c) => c.result === 'Fail') ??
      cell.checks.find((c) => c.result === 'Unknown');
    const result = blocking?.result === 'Unknown' ? 'Unknown' : 'Fail';
    const reason = blocking?.reason ?? 'NoCheck';
    const key = `${result}/${reason}`;
    const group = groups.get(key) ?? { result, reason, count: 0, cells: [] };
    group.count += 1;
    if (group.cells.length < MAX_NAMED_CELLS) group.cells.push(cell.name);
    groups.set(key, group);
  }
  return [...groups.values()].sort(
    (a, b) =>
      b.count - a.count || compareStrings(a.result, b.result) || compareStrings(a.reason, b.reason),
  );
}
