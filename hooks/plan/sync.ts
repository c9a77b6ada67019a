/**
 * The kubecell-plan sync hook: evaluate a VirtualClusterPlan until it concludes (Accepted or
 * Rejected; Unknown is evaluated again when an input changes), keep the conclusion for the
 * generation, flip Expired at `expiresAt`. It returns no children and reserves nothing.
 *
 * The whole status is returned on every call (Metacontroller replaces `.status` with it),
 * including `observedGeneration`, which Metacontroller also sets itself. For the same
 * request and the same `now` the answer is byte-identical.
 */
import { API_VERSION } from '../api/kinds.js';
import type {
  Cell,
  VirtualCluster,
  VirtualClusterPlan,
  VirtualClusterPlanStatus,
  VirtualNodeClass,
} from '../generated/types/index.js';
import type { FeasibilityInput } from '../feasibility/evaluate.js';
import {
  childKey,
  findObject,
  listObjects,
  type CompositeSyncRequest,
  type CompositeSyncResponse,
  type KubernetesObject,
  type ObjectMap,
} from '../metacontroller/protocol.js';
import type { PlanConfig } from './config.js';
import {
  evaluatePlan,
  expiryOf,
  nextEvaluation,
  planConditions,
  storedEvaluation,
} from './phases.js';

const CELL = childKey(API_VERSION, 'Cell');
const CLASS = childKey(API_VERSION, 'VirtualNodeClass');
const VIRTUAL_CLUSTER = childKey(API_VERSION, 'VirtualCluster');
const NAMESPACE = childKey('v1', 'Namespace');

export function syncPlan(
  request: CompositeSyncRequest<VirtualClusterPlan>,
  config: PlanConfig,
  now: Date,
): CompositeSyncResponse {
  const plan = request.parent;
  const generation = plan.metadata.generation;
  const evaluation = nextEvaluation(storedEvaluation(plan.status, generation), () =>
    evaluatePlan(planInput(plan, request.related, config, now), config.ttlSeconds),
  );
  const expiry = expiryOf(evaluation.expiresAt, now);
  const status: VirtualClusterPlanStatus = {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    decision: evaluation.decision,
    evaluatedAt: evaluation.evaluatedAt,
    expiresAt: evaluation.expiresAt,
    checks: evaluation.checks,
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

/** The feasibility input for a plan, from what Metacontroller observed (see customize.ts). */
export function planInput(
  plan: VirtualClusterPlan,
  related: ObjectMap,
  config: PlanConfig,
  now: Date,
): FeasibilityInput {
  const cellName = plan.spec?.cellRef?.name ?? '';
  const className = plan.spec?.classRef?.name ?? '';
  const namespace = plan.metadata.namespace ?? '';
  const cell = findObject<Cell>(related, CELL, cellName, config.cellNamespace);
  const virtualNodeClass = findObject<VirtualNodeClass>(related, CLASS, className);
  const namespaceObject = findObject<KubernetesObject>(related, NAMESPACE, namespace);
  return {
    cellName,
    cell,
    className,
    virtualNodeClass,
    namespace,
    ...(namespaceObject === undefined
      ? {}
      : { namespaceLabels: namespaceObject.metadata.labels ?? {} }),
    virtualClusters: listObjects<VirtualCluster>(related, VIRTUAL_CLUSTER),
    nodePortRange: config.nodePortRange,
    now,
  };
}
