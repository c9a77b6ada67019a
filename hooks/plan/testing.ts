/** Fixtures for the plan tests (not loaded in production). */
import { API_VERSION } from '../api/kinds.js';
import { acceptedInput, NOW } from '../feasibility/testing.js';
import type { VirtualClusterPlan } from '../generated/types/index.js';
import {
  childKey,
  toObjectMap,
  type CompositeSyncRequest,
  type KubernetesObject,
  type ObjectMap,
} from '../metacontroller/protocol.js';
import { loadPlanConfig, type PlanConfig } from './config.js';

export { NOW };

export const CONFIG: PlanConfig = loadPlanConfig({});

export function plan(generation = 1): VirtualClusterPlan {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualClusterPlan',
    metadata: {
      name: 'small-on-cell1',
      namespace: 'tenant-a',
      uid: 'plan-uid',
      generation,
      labels: { 'kubecell.io/cell': 'cell1', 'kubecell.io/class': 'small' },
    },
    spec: { cellRef: { name: 'cell1' }, classRef: { name: 'small' } },
  };
}

export function hostNamespace(labels: Record<string, string> = {}): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'tenant-a', labels: { 'kubecell.io/host-namespace': 'true', ...labels } },
  };
}

/**
 * What Metacontroller would send for the accepted fixture: Cell, class, Namespace and the
 * VirtualClusters of the plan's namespace (none: the fixture's other VirtualCluster lives in
 * another namespace, which the plan does not relate to).
 */
export function acceptedRelated(): ObjectMap {
  const input = acceptedInput();
  const namespaceVcs = input.virtualClusters.filter((vc) => vc.metadata.namespace === 'tenant-a');
  const objects: KubernetesObject[] = [hostNamespace(), ...namespaceVcs];
  if (input.cell) objects.push(input.cell);
  if (input.virtualNodeClass) objects.push(input.virtualNodeClass);
  const map = toObjectMap(objects);
  map[childKey(API_VERSION, 'VirtualCluster')] ??= {};
  return map;
}

export function syncRequest(
  parent: VirtualClusterPlan = plan(),
  related: ObjectMap = acceptedRelated(),
): CompositeSyncRequest<VirtualClusterPlan> {
  return { parent, children: {}, related, finalizing: false };
}
