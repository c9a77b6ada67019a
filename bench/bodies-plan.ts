/**
 * The VirtualClusterPlan sync request in steady state: the plan fixture (hooks/plan/testing.ts)
 * in host namespace tenant-a, which hosts no VirtualCluster yet, carrying the status of its
 * last evaluation, with what its customize answer relates (hooks/plan/customize.ts): the Cell
 * with the status its controller reports for the benchmark's Cell, the class, the Namespace and
 * the VirtualClusters of the namespace (none). Objects as stored (stored.ts).
 */
import type { VirtualClusterPlan } from '../hooks/generated/types/index.js';
import { TYPE_KEYS } from '../hooks/kube/objects.js';
import { toObjectMap, type KubernetesObject } from '../hooks/metacontroller/protocol.js';
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
