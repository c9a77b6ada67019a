/**
 * The VirtualClusterPlan sync request in steady state: the plan fixture (hooks/plan/testing.ts)
 * in host namespace tenant-a, which hosts no VirtualCluster yet, carrying the status of its
 * last evaluation, with what its customize answer relates (hooks/plan/customize.ts): the Cell
 * with the status its controller reports for the benchmark's Cell, the class, the Namespace and
 * the VirtualClusters of the namespace (none). Objects as stored (stored.ts).
 */
import type { VirtualClusterPlan } from '../hooks/generated/types/index.js';
import { TYPE_KEYS } from '../hooks/kube/objects.js';
import {
  toObjectMap,
  type KubernetesObject,
  type ObjectMap,
} from '../hooks/metacontroller/protocol.js';
import { syncPlan } from '../hooks/plan/sync.js';
import { CONFIG as PLAN_CONFIG, plan as planFixture } from '../hooks/plan/testing.js';
import { reportedCell } from './bodies.js';
import { hostNamespaceOf, storedClass } from './bodies-virtualcluster.js';
import { applied, controllerOf, type Json } from './stored.js';

/** The Cell as stored: applied by the platform team, its status written by Metacontroller. */
export function storedCell(now: Date, nodes: number): KubernetesObject {
  return applied(reportedCell(now, nodes) as unknown as KubernetesObject);
}

export function planSyncBody(now: Date, nodes: number): Json {
  const parent = planFixture();
  const related = toObjectMap([
    storedCell(now, nodes),
    storedClass(20),
    hostNamespaceOf('tenant-a'),
  ]);
  return steadyPlanBody(parent, related, now);
}

/**
 * The sync request of a plan with `spec.cellSelector` matching `cells` Cells of `nodes` Nodes each
 * (the benchmark's Cell, 20 pods per Node, as stored, renamed cell-000…), as Metacontroller sends
 * it (hooks/plan/customize.ts relates every matching Cell): the Cells, the class, the Namespace,
 * no VirtualCluster; the plan carrying its last evaluation.
 */
export function selectorPlanSyncBody(now: Date, cells: number, nodes: number): Json {
  const parent = planFixture();
  parent.metadata.labels = { 'kubecell.io/class': 'small' };
  parent.spec = {
    cellSelector: { matchLabels: { 'example.com/tier': 'gpu' } },
    classRef: { name: 'small' },
  };
  const template = storedCell(now, nodes);
  const matched = Array.from({ length: cells }, (_, index) => {
    const cell = structuredClone(template);
    cell.metadata.name = `cell-${String(index).padStart(3, '0')}`;
    cell.metadata.uid = `${cell.metadata.name}-uid`;
    cell.metadata.labels = { 'example.com/tier': 'gpu' };
    return cell;
  });
  const related = toObjectMap([...matched, storedClass(20), hostNamespaceOf('tenant-a')]);
  return steadyPlanBody(parent, related, now);
}

/**
 * The request Metacontroller sends a plan in steady state: the plan carrying the status of its
 * evaluation of `related` (no VirtualCluster in its namespace), as stored.
 */
function steadyPlanBody(parent: VirtualClusterPlan, related: ObjectMap, now: Date): Json {
  related[TYPE_KEYS.virtualCluster] = {};
  const first = syncPlan({ parent, children: {}, related, finalizing: false }, PLAN_CONFIG, now);
  const stored = applied({ ...parent, status: first.status } as VirtualClusterPlan);
  return JSON.parse(
    JSON.stringify({
      controller: controllerOf('plan.yaml'),
      parent: stored,
      children: {},
      related,
      finalizing: false,
    }),
  ) as Json;
}
