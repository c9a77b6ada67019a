import { expect } from 'chai';
import { API_VERSION } from '../api/kinds.js';
import { copy, readyCell, smallClass } from '../feasibility/testing.js';
import type {
  Cell,
  PlacementPolicy,
  VirtualClusterPlan,
  VirtualClusterPlanStatus,
} from '../generated/types/index.js';
import { gzipSync } from 'node:zlib';
import type { ConfigMapObject } from '../api/cell-liveness-record.js';
import {
  PLACEMENT_INDEX_KEY,
  PLACEMENT_INDEX_NAME,
  placementIndexBinaryData,
  placementIndexEntry,
} from '../api/placement-index.js';
import { TYPE_KEYS } from '../kube/objects.js';
import { childKey, toObjectMap } from '../metacontroller/protocol.js';
import { customizePlan } from './customize.js';
import { syncPlan } from './sync.js';
import { CONFIG, hostNamespace, NOW, plan, syncRequest } from './testing.js';

/** A Ready Cell named `name` with `gpusFree` GPUs still to promise (the class needs 2). */
function cell(name: string, gpusFree: number, labels: Record<string, string> = {}): Cell {
  const c = copy(readyCell());
  c.metadata.name = name;
  c.metadata.uid = `${name}-uid`;
  c.metadata.labels = { tier: 'gpu', ...labels };
  const gpu = c.status!.inventory!['nvidia.com/gpu']!;
  gpu.committed = String(6 - gpusFree);
  gpu.availableEstimate = String(gpusFree);
  return c;
}

function selectorPlan(policy?: PlacementPolicy): VirtualClusterPlan {
  const p = plan();
  p.metadata.labels = { 'kubecell.io/class': 'small' };
  p.spec = {
    cellSelector: { matchLabels: { tier: 'gpu' } },
    ...(policy === undefined ? {} : { placementPolicy: policy }),
    classRef: { name: 'small' },
  };
  return p;
}

/** The placement index the kubecell-placement-index controller writes for these Cells. */
function indexOf(cells: Cell[]): ConfigMapObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: PLACEMENT_INDEX_NAME, namespace: CONFIG.cellNamespace },
    binaryData: placementIndexBinaryData(cells),
  };
}

/** What Metacontroller sends: the placement index of `cells`, the class, the Namespace. */
/** `index` null: the index does not exist. */
function related(cells: Cell[], index: ConfigMapObject | null = indexOf(cells)) {
  const map = toObjectMap([hostNamespace(), smallClass(), ...(index ? [index] : [])]);
  map[childKey(API_VERSION, 'VirtualCluster')] ??= {};
  map[TYPE_KEYS.configMap] ??= {};
  return map;
}

function gzipped(text: string): string {
  return gzipSync(text).toString('base64');
}

function statusOf(
  p: VirtualClusterPlan,
  cells: Cell[],
  index?: ConfigMapObject,
): VirtualClusterPlanStatus {
  return syncPlan(syncRequest(p, related(cells, index ?? indexOf(cells))), CONFIG, NOW)
    .status as VirtualClusterPlanStatus;
}

function reasons(status: VirtualClusterPlanStatus): string[] {
  return (status.checks ?? []).map((c) => `${c.name}:${c.reason}`);
}

describe('VirtualClusterPlan with spec.cellSelector (D48)', () => {
  const cells = [cell('gpu-b', 6), cell('gpu-a', 2), cell('gpu-c', 4), cell('gpu-full', 0)];

  it('relates the placement index of the controller namespace, not the Cells', () => {
    const rules = customizePlan({ parent: selectorPlan() }, CONFIG).relatedResources;
    expect(rules[0]).to.deep.equal({
      apiVersion: 'v1',
      resource: 'configmaps',
      namespace: CONFIG.cellNamespace,
      names: [PLACEMENT_INDEX_NAME],
    });
    expect(rules.some((rule) => rule.resource === 'cells')).to.equal(false);
  });

  it('weighs only the Cells of the index whose labels the selector matches', () => {
    const other = cell('cpu-big', 6, { tier: 'cpu' });
    const status = statusOf(selectorPlan(), [other, cell('gpu-a', 2)]);
    expect(status.placement?.candidates).to.equal(1);
    expect(status.placement?.chosen?.name).to.equal('gpu-a');
  });

  it('judges a Cell read from the index exactly as the Cell itself (the checks of cellRef)', () => {
    for (const candidate of [cell('gpu-a', 2), cell('gpu-full', 0)]) {
      const named = plan();
      named.spec = { cellRef: { name: candidate.metadata.name }, classRef: { name: 'small' } };
      const direct = toObjectMap([hostNamespace(), smallClass(), candidate]);
      direct[childKey(API_VERSION, 'VirtualCluster')] = {};
      const byRef = syncPlan(syncRequest(named, direct), CONFIG, NOW)
        .status as VirtualClusterPlanStatus;
      const bySelector = statusOf(selectorPlan(), [candidate]);
      expect(bySelector.checks, candidate.metadata.name).to.deep.equal(byRef.checks);
    }
  });

  it('is Unknown (PlacementIndexMissing) without the index, naming it and how to get it', () => {
    const status = syncPlan(syncRequest(selectorPlan(), related(cells, null)), CONFIG, NOW)
      .status as VirtualClusterPlanStatus;
    expect(status.decision).to.equal('Unknown');
    expect(reasons(status)[0]).to.equal('CellFound:PlacementIndexMissing');
    expect(status.checks?.[0]?.message).to.contain(
      `${CONFIG.cellNamespace}/${PLACEMENT_INDEX_NAME} does not exist`,
    );
    expect(status.placement).to.deep.equal({
      policy: { type: 'MostAvailable' },
      candidates: 0,
      filtered: [],
    });
  });

  it('is Unknown (PlacementIndexUnreadable) when the index is not what the controller writes', () => {
    const broken = indexOf(cells);
    broken.binaryData = { [PLACEMENT_INDEX_KEY]: Buffer.from('{"cells":[]}').toString('base64') };
    const status = statusOf(selectorPlan(), cells, broken);
    expect(status.decision).to.equal('Unknown');
    expect(reasons(status)[0]).to.equal('CellFound:PlacementIndexUnreadable');
    expect(status.checks?.[0]?.message).to.contain('is not gzip-compressed data');
  });

  it('leaves out, undecided, an entry that matches but breaks the Cell schema; chooses among the rest', () => {
    const good = placementIndexEntry(cell('gpu-a', 2));
    const bad = { ...placementIndexEntry(cell('gpu-b', 6)), spec: { machineProfile: 7 } };
    const elsewhere = {
      ...placementIndexEntry(cell('cpu-x', 6)),
      labels: { tier: 'cpu' },
      spec: 1,
    };
    const index = indexOf([]);
    index.binaryData = {
      [PLACEMENT_INDEX_KEY]: gzipped(JSON.stringify({ cells: [good, bad, elsewhere] })),
    };
    const status = statusOf(selectorPlan(), [], index);
    expect(status.placement?.chosen?.name).to.equal('gpu-a');
    // cpu-x does not match by its labels, so its broken spec is not the plan's concern.
    expect(status.placement?.candidates).to.equal(2);
    expect(status.placement?.filtered).to.deep.equal([
      { result: 'Unknown', reason: 'PlacementIndexUnreadable', count: 1, cells: ['gpu-b'] },
    ]);
  });

  it('chooses the Cell with the most room by default, and says why', () => {
    const status = statusOf(selectorPlan(), cells);
    expect(status.decision).to.equal('Accepted');
    expect(status.placement).to.deep.equal({
      policy: { type: 'MostAvailable' },
      candidates: 4,
      chosen: { name: 'gpu-b', score: '2', scoreResource: 'nvidia.com/gpu', left: '4' },
      runnerUp: { name: 'gpu-c', score: '1', scoreResource: 'nvidia.com/gpu', left: '2' },
      filtered: [{ result: 'Fail', reason: 'InsufficientCapacity', count: 1, cells: ['gpu-full'] }],
    });
    // The checks are the chosen Cell's report.
    const gpu = status.checks?.find(
      (c) => c.name === 'Capacity' && c.resource === 'nvidia.com/gpu',
    );
    expect(gpu).to.deep.include({ result: 'Pass', available: '6' });
    expect(status.conditions?.[0]?.message).to.contain(
      'Accepted (Cell gpu-b chosen among 4 matching spec.cellSelector)',
    );
  });

  it('packs onto the fullest Cell that still fits with Pack', () => {
    const status = statusOf(selectorPlan({ type: 'Pack' }), cells);
    expect(status.placement?.chosen).to.deep.include({ name: 'gpu-a', score: '0', left: '0' });
    expect(status.placement?.runnerUp?.name).to.equal('gpu-c');
  });

  it('spreads over a Cell label by the VirtualClusters already resolved', () => {
    const zoned = [
      { ...cell('z1-a', 6, { zone: 'one' }), status: { ...cell('z1-a', 6).status, resolvedBy: 3 } },
      { ...cell('z2-a', 2, { zone: 'two' }), status: { ...cell('z2-a', 2).status, resolvedBy: 1 } },
    ] as Cell[];
    const status = statusOf(selectorPlan({ type: 'Spread', spreadKey: 'zone' }), zoned);
    expect(status.placement?.chosen).to.deep.include({ name: 'z2-a', domain: 'two' });
    expect(status.placement?.runnerUp).to.deep.include({ name: 'z1-a', domain: 'one' });
  });

  it('leaves out a Cell whose namespaceSelector refuses the plan namespace, with its reason', () => {
    const restricted = cell('gpu-z', 6);
    restricted.spec.namespaceSelector = { matchLabels: { team: 'other' } };
    const status = statusOf(selectorPlan(), [restricted, cell('gpu-a', 2)]);
    expect(status.placement?.chosen?.name).to.equal('gpu-a');
    expect(status.placement?.filtered).to.deep.equal([
      { result: 'Fail', reason: 'NamespaceNotAllowed', count: 1, cells: ['gpu-z'] },
    ]);
  });

  it('is Rejected with the first left-out Cell’s checks when none fits', () => {
    const status = statusOf(selectorPlan(), [cell('gpu-x', 1), cell('gpu-full', 0)]);
    expect(status.decision).to.equal('Rejected');
    expect(status.placement?.chosen).to.equal(undefined);
    expect(status.checks?.some((c) => c.reason === 'InsufficientCapacity')).to.equal(true);
  });

  it('is Unknown (NoCellMatches) while no Cell matches, and still checks the class', () => {
    const status = statusOf(selectorPlan(), []);
    expect(status.decision).to.equal('Unknown');
    expect(status.placement).to.deep.equal({
      policy: { type: 'MostAvailable' },
      candidates: 0,
      filtered: [],
    });
    expect(status.checks?.map((c) => `${c.name}:${c.reason}`)).to.deep.equal([
      'CellFound:NoCellMatches',
      'ClassFound:ClassFound',
      'NamespaceAvailable:NamespaceAvailable',
    ]);
  });

  it('keeps its conclusion for the generation while the Cells change', () => {
    const first = syncPlan(syncRequest(selectorPlan(), related(cells)), CONFIG, NOW);
    const stored = {
      ...selectorPlan(),
      status: structuredClone(first.status),
    } as VirtualClusterPlan;
    const later = new Date(NOW.getTime() + 60_000);
    const again = syncPlan(syncRequest(stored, related([cell('gpu-new', 6)])), CONFIG, later);
    expect((again.status as VirtualClusterPlanStatus).placement).to.deep.equal(
      (first.status as VirtualClusterPlanStatus).placement,
    );
    expect(JSON.stringify(again.status)).to.equal(JSON.stringify(first.status));
  });

  it('gives the same answer for the Cells in any order', () => {
    const forward = statusOf(selectorPlan(), cells);
    const backward = statusOf(selectorPlan(), [...cells].reverse());
    expect(JSON.stringify(backward)).to.equal(JSON.stringify(forward));
  });
});
