/**
 * The steps of a VirtualClusterPlan sync, as small pure functions.
 *
 * - `storedEvaluation`: the evaluation already made for this generation, if any.
 * - `nextEvaluation`: what the status carries now. A conclusion (Accepted or Rejected) is kept
 *   exactly as stored (same objects, so the same bytes): it is made once per generation and
 *   never refreshed by a resync or by a change to the Cell or class. Unknown is no conclusion:
 *   an input was missing or not yet observed (a class created a second after the plan, a Cell
 *   without status), so the plan is evaluated again at the next sync, which Metacontroller
 *   calls when a related object changes (customize.ts), never on a timer. While the checks
 *   come out the same, the stored evaluation is kept, so a sync that learns nothing new
 *   writes nothing (decision D40).
 * - `stampEvaluation`: a new evaluation (one Cell's, or a choice among Cells with its
 *   `placement`), stamped `evaluatedAt` (second precision) and `expiresAt` = `evaluatedAt` + TTL;
 *   `evaluatePlan` evaluates one Cell's input and stamps it.
 * - `expiryOf`: whether `expiresAt` has passed at `now`, and if not, how many seconds until
 *   it does (returned as `resyncAfterSeconds` so Metacontroller calls back at that moment).
 * - `planConditions`: the Evaluated and Expired conditions.
 */
import { isDeepStrictEqual } from 'node:util';
import type {
  Condition,
  FeasibilityCheck,
  VirtualClusterPlanStatus,
} from '../generated/types/index.js';
import { evaluateFeasibility, type FeasibilityInput } from '../feasibility/evaluate.js';
import { Decision } from '../feasibility/reasons.js';
import { formatTime, reconcileConditions } from '../status/conditions.js';
import { REASONS } from './reasons.js';

export interface PlanEvaluation {
  decision: Decision;
  evaluatedAt: string;
  expiresAt: string;
  checks: FeasibilityCheck[];
  /** With `spec.cellSelector`: the Cells weighed and the one chosen. */
  placement?: VirtualClusterPlanStatus['placement'];
}

export interface Expiry {
  expired: boolean;
  /** Whole seconds until `expiresAt` (rounded up); absent once expired. */
  resyncAfterSeconds?: number;
}

const DECISIONS: readonly string[] = Object.values(Decision);

/**
 * The stored evaluation, when it belongs to this generation and is complete. Anything
 * else (another generation, no decision, an unreadable expiresAt) means evaluate again.
 */
export function storedEvaluation(
  status: VirtualClusterPlanStatus | undefined,
  generation: number | undefined,
): PlanEvaluation | undefined {
  if (status === undefined || generation === undefined) return undefined;
  if (status.observedGeneration !== generation) return undefined;
  const { decision, evaluatedAt, expiresAt, checks, placement } = status;
  if (decision === undefined || !DECISIONS.includes(decision)) return undefined;
  if (typeof evaluatedAt !== 'string' || typeof expiresAt !== 'string') return undefined;
  if (Number.isNaN(Date.parse(expiresAt)) || !Array.isArray(checks)) return undefined;
  return { decision, evaluatedAt, expiresAt, checks, ...(placement ? { placement } : {}) };
}

/**
 * The evaluation the status carries: a stored conclusion as it is; otherwise `evaluate()`,
 * unless it is Unknown again with the same checks as the stored one (then the stored one,
 * byte for byte, so an unchanged input never moves `evaluatedAt`). The stored checks arrive
 * from the apiserver with their keys sorted; isDeepStrictEqual ignores key order.
 */
export function nextEvaluation(
  stored: PlanEvaluation | undefined,
  evaluate: () => PlanEvaluation,
): PlanEvaluation {
  if (stored !== undefined && stored.decision !== Decision.Unknown) return stored;
  const fresh = evaluate();
  const unchanged =
    stored !== undefined &&
    fresh.decision === Decision.Unknown &&
    isDeepStrictEqual(stored.checks, fresh.checks) &&
    isDeepStrictEqual(stored.placement, fresh.placement);
  return unchanged ? stored : fresh;
}

/** Runs the feasibility evaluation of one Cell and stamps it. */
export function evaluatePlan(input: FeasibilityInput, ttlSeconds: number): PlanEvaluation {
  return stampEvaluation(evaluateFeasibility(input), input.now, ttlSeconds);
}

/** An evaluation's result, stamped with its time and expiry. */
export function stampEvaluation(
  result: Pick<PlanEvaluation, 'decision' | 'checks' | 'placement'>,
  now: Date,
  ttlSeconds: number,
): PlanEvaluation {
  const evaluatedMs = Math.floor(now.getTime() / 1000) * 1000;
  return {
    decision: result.decision,
    evaluatedAt: formatTime(new Date(evaluatedMs)),
    expiresAt: formatTime(new Date(evaluatedMs + ttlSeconds * 1000)),
    checks: result.checks,
    ...(result.placement === undefined ? {} : { placement: result.placement }),
  };
}

/** Expired from `expiresAt` on (inclusive); before that, the seconds left, rounded up. */
export function expiryOf(expiresAt: string, now: Date): Expiry {
  const remainingMs = Date.parse(expiresAt) - now.getTime();
  if (!(remainingMs > 0)) return { expired: true };
  return { expired: false, resyncAfterSeconds: Math.ceil(remainingMs / 1000) };
}

/**
 * Evaluated (always True once evaluated; its reason is the decision) and Expired. Each
 * lastTransitionTime is carried forward while the status stays the same; Expired turning
 * True is stamped with `expiresAt`, the moment it became true, not the moment it was seen.
 */
export function planConditions(
  previous: readonly Condition[] | undefined,
  evaluation: PlanEvaluation,
  expiry: Expiry,
  now: Date,
  generation: number | undefined,
): Condition[] {
  const evaluated = reconcileConditions(
    previous,
    [
      {
        type: 'Evaluated',
        status: 'True',
        reason: REASONS[evaluation.decision],
        message: evaluatedMessage(evaluation, generation),
      },
    ],
    now,
    generation,
  );
  const expired = reconcileConditions(
    previous,
    [
      expiry.expired
        ? {
            type: 'Expired',
            status: 'True',
            reason: REASONS.Expired,
            message: `The decision expired at ${evaluation.expiresAt} and is kept as it was; edit the spec or recreate the plan to evaluate again.`,
          }
        : {
            type: 'Expired',
            status: 'False',
            reason: REASONS.NotExpired,
            message: `The decision is current until ${evaluation.expiresAt}.`,
          },
    ],
    expiry.expired ? new Date(Date.parse(evaluation.expiresAt)) : now,
    generation,
  );
  return [...evaluated, ...expired];
}

function evaluatedMessage(evaluation: PlanEvaluation, generation: number | undefined): string {
  const which = generation === undefined ? 'The plan' : `Generation ${generation}`;
  const chosen = evaluation.placement?.chosen;
  const among =
    evaluation.placement === undefined
      ? ''
      : ` (${chosen ? `Cell ${chosen.name}` : 'no Cell'} chosen among ${evaluation.placement.candidates} matching spec.cellSelector)`;
  const head = `${which} was evaluated at ${evaluation.evaluatedAt}: ${evaluation.decision}${among}`;
  const list = (result: FeasibilityCheck['result']) =>
    evaluation.checks
      .filter((check) => check.result === result)
      .map(
        (check) => `${check.name}${check.resource ? ` ${check.resource}` : ''} (${check.reason})`,
      )
      .join(', ');
  switch (evaluation.decision) {
    case Decision.Accepted:
      return `${head}, every check passed. Acceptance reserves no capacity.`;
    case Decision.Rejected:
      return `${head}; failed: ${list('Fail')}.`;
    default:
      return `${head}; could not decide: ${list('Unknown')}. It is evaluated again when the Cell, the class or the namespace changes.`;
  }
}
