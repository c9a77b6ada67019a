/**
 * The feasibility input of a plan, from what Metacontroller observed (customize.ts): the Cell
 * (the one `spec.cellRef` names, or one of those `spec.cellSelector` matched), the class, the
 * plan's Namespace and the VirtualClusters of that namespace.
 */
import { API_VERSION } from '../api/kinds.js';
import type { FeasibilityInput } from '../feasibility/evaluate.js';
import type {
  Cell,
  VirtualCluster,
  VirtualClusterPlan,
  VirtualNodeClass,
} from '../generated/types/index.js';
import {
  childKey,
  findObject,
  listObjects,
  type KubernetesObject,
  type ObjectMap,
} from '../metacontroller/protocol.js';
import type { PlanConfig } from './config.js';

const CELL = childKey(API_VERSION, 'Cell');
const CLASS = childKey(API_VERSION, 'VirtualNodeClass');
const VIRTUAL_CLUSTER = childKey(API_VERSION, 'VirtualCluster');
const NAMESPACE = childKey('v1', 'Namespace');

/**
 * The input for the Cell `target` names (one matched by a selector, or none), or, without a
 * target, for the Cell of `spec.cellRef`.
 */
export function planInput(
  plan: VirtualClusterPlan,
  related: ObjectMap,
  config: PlanConfig,
  now: Date,
  target?: { cell: Cell | undefined },
): FeasibilityInput {
  const cellName = target ? (target.cell?.metadata.name ?? '') : (plan.spec?.cellRef?.name ?? '');
  const cell = target
    ? target.cell
    : findObject<Cell>(related, CELL, cellName, config.cellNamespace);
  const className = plan.spec?.classRef?.name ?? '';
  const namespace = plan.metadata.namespace ?? '';
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
