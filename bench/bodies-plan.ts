/**
 * The VirtualClusterPlan sync request in steady state: the plan fixture (hooks/plan/testing.ts)
 * in host namespace tenant-a, which hosts no VirtualCluster yet, carrying the status of its
 * last evaluation, with what its customize answer relates (hooks/plan/customize.ts): the Cell
 * with the status its controller reports for the benchmark's Cell, the class, the Namespace and
 * the VirtualClusters of the namespace (none). Objects as stored (stored.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { PLACEMENT_INDEX_NAME, placementIndexBinaryData } from '../hooks/api/placement-index.js';
import type { Cell, CellStatus, VirtualClusterPlan } from '../hooks/generated/types/index.js';
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
import { REPO_ROOT } from './processes.js';
import { applied, asStored, controllerOf, pick, type Json } from './stored.js';

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
 * `cells` Cells of `nodes` Nodes each (the benchmark's Cell, 20 pods per Node, as stored, renamed
 * cell-000…), labelled to match the selector plan below. Their committed and requested figures
 * and `resolvedBy` differ from Cell to Cell, as on a real installation, so that the compressed
 * placement index is not measured on copies.
 */
export function selectorCells(now: Date, cells: number, nodes: number): KubernetesObject[] {
  const template = storedCell(now, nodes);
  return Array.from({ length: cells }, (_, index) => {
    const cell = structuredClone(template) as KubernetesObject & { status?: CellStatus };
    cell.metadata.name = `cell-${String(index).padStart(3, '0')}`;
    cell.metadata.uid = `${cell.metadata.name}-uid`;
    cell.metadata.labels = { 'example.com/tier': 'gpu' };
    const status = cell.status;
    if (status !== undefined) {
      status.resolvedBy = index % 17;
      const gpu = status.inventory?.['nvidia.com/gpu'];
      if (gpu !== undefined) gpu.committed = String(2 * (index % 17));
      const cpu = status.inventory?.cpu;
      if (cpu !== undefined) cpu.requested = String(1000 + 37 * index);
    }
    return cell;
  });
}

/** The placement index of `cells` as stored: the attachment Metacontroller applied. */
export function storedPlacementIndex(cells: readonly KubernetesObject[]): KubernetesObject {
  const source = placementIndexSource();
  const index = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: PLACEMENT_INDEX_NAME,
      namespace: PLAN_CONFIG.cellNamespace,
      labels: { 'app.kubernetes.io/part-of': 'kubecell' },
      ownerReferences: [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: source.metadata.name,
          uid: String(source.metadata.uid),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    binaryData: placementIndexBinaryData(cells as unknown as Cell[]),
  };
  return asStored(index, [
    {
      manager: 'metacontroller',
      operation: 'Apply',
      fields: pick(index as unknown as Json, [
        'metadata.labels',
        'metadata.ownerReferences',
        'binaryData',
      ]),
      time: '2026-10-01T00:00:00Z',
    },
  ]);
}

/** The index's source ConfigMap as applied from metacontroller/placement-index-source.yaml. */
export function placementIndexSource(): KubernetesObject {
  const source = parse(
    readFileSync(path.join(REPO_ROOT, 'metacontroller', 'placement-index-source.yaml'), 'utf8'),
  ) as KubernetesObject;
  return asStored(source, [
    {
      manager: 'kubectl-client-side-apply',
      operation: 'Update',
      fields: pick(source as unknown as Json, ['metadata.labels']),
      time: '2026-10-01T00:00:00Z',
    },
  ]);
}

/**
 * The sync request of a plan with `spec.cellSelector` matching `cells` Cells of `nodes` Nodes
 * each, as Metacontroller sends it (hooks/plan/customize.ts relates the placement index, not the
 * Cells): the index of those Cells, the class, the Namespace, no VirtualCluster; the plan
 * carrying its last evaluation, or (`evaluated` false) none yet.
 */
export function selectorPlanSyncBody(
  now: Date,
  cells: number,
  nodes: number,
  evaluated = true,
): Json {
  const parent = planFixture();
  parent.metadata.labels = { 'kubecell.io/class': 'small' };
  parent.spec = {
    cellSelector: { matchLabels: { 'example.com/tier': 'gpu' } },
    classRef: { name: 'small' },
  };
  const index = storedPlacementIndex(selectorCells(now, cells, nodes));
  const related = toObjectMap([index, storedClass(20), hostNamespaceOf('tenant-a')]);
  const body = steadyPlanBody(parent, related, now);
  // Not yet evaluated: the plan as applied, without status, so the sync reads the index.
  if (!evaluated) delete (body.parent as Json).status;
  return body;
}

/**
 * The kubecell-placement-index decorator's sync request over the same Cells: its source, every
 * Cell whole (its customize relates them all), and the index it attached, as stored.
 */
export function placementIndexSyncBody(now: Date, cells: number, nodes: number): Json {
  const matched = selectorCells(now, cells, nodes);
  return JSON.parse(
    JSON.stringify({
      controller: controllerOf('placement-index.yaml'),
      object: placementIndexSource(),
      attachments: toObjectMap([storedPlacementIndex(matched)]),
      related: toObjectMap(matched),
      finalizing: false,
    }),
  ) as Json;
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
