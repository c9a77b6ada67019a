/**
 * The kubecell-plan sync hook: evaluate a VirtualClusterPlan until it concludes (Accepted or
 * Rejected; Unknown is evaluated again when an input changes), keep the conclusion for the
 * generation, flip Expired at `expiresAt`. It returns no children and reserves nothing.
 *
 * A plan names one Cell (`spec.cellRef`: input.ts) or chooses among the Cells a selector
 * matches (`spec.cellSelector`: selection.ts, D48); either way the conclusion is made once per
 * generation.
 *
 * The whole status is returned on every call (Metacontroller replaces `.status` with it),
 * including `observedGeneration`, which Metacontroller also sets itself. For the same
 * request and the same `now` the answer is byte-identical.
 */
import type { VirtualClusterPlan, VirtualClusterPlanStatus } from '../generated/types/index.js';
import { evaluateFeasibility } from '../feasibility/evaluate.js';
import type { CompositeSyncRequest, CompositeSyncResponse } from '../metacontroller/protocol.js';
import type { PlanConfig } from './config.js';
import { planInput } from './input.js';
import {
  expiryOf,
  nextEvaluation,
  planConditions,
  stampEvaluation,
  storedEvaluation,
} from './phases.js';
import { evaluateSelection } from './selection.js';

export function syncPlan(
  request: CompositeSyncRequest<VirtualClusterPlan>,
  config: PlanConfig,
  now: Date,
): CompositeSyncResponse {
  const plan = request.parent;
  const generation = plan.metadata.generation;
  const evaluation = nextEvaluation(storedEvaluation(plan.status, generation), () =>
    stampEvaluation(
      plan.spec?.cellSelector === undefined
        ? evaluateFeasibility(planInput(plan, request.related, config, now))
        : evaluateSelection(plan, request.related, config, now),
      now,
      config.ttlSeconds,
    ),
  );
  const expiry = expiryOf(evaluation.expiresAt, now);
  const status: VirtualClusterPlanStatus = {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    decision: evaluation.decision,
    evaluatedAt: evaluation.evaluatedAt,
    expiresAt: evaluation.expiresAt,
    checks: evaluation.checks,
    ...(evaluation.placement === undefined ? {} : { placement: evaluation.placement }),
    conditions: planConditions(plan.status?.conditions, evaluation, expiry, now, generation),
  };
  return {
    status,
    children: [],
    ...(expiry.resyncAfterSeconds === undefined
      ? {}
      : { resyncAfterSeconds: expiry.resyncAfterSeconds }),
  };
}
