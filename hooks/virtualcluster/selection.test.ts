// A VirtualCluster with spec.cellSelector (D48, D49): resolved once, on the Cell the policy
// chooses among those Metacontroller related through the selector, with the choice recorded in
// the snapshot; never moved afterwards.
import { expect } from 'chai';
import type { Cell, VirtualCluster, VirtualClusterPlan } from '../generated/types/index.js';
import {
  cell,
  condition,
  hostNamespace,
  LATER,
  runSync,
  smallClass,
  statusOf,
  virtualCluster,
  withStatus,
} from './testing.js';

/** cell() renamed, with `gpus` available (of 8) and `labels`. */
function namedCell(name: string, gpus: number, labels: Record<string, string> = {}): Cell {
  const made = cell({ uid: `${name}-uid` });
  made.metadata.name = name;
  made.metadata.labels = labels;
  const gpu = made.status!.inventory!['nvidia.com/gpu']!;
  gpu.availableEstimate = String(gpus);
  gpu.committed = String(8 - gpus);
  return made;
}

function selecting(policy?: VirtualCluster['spec']['placementPolicy']): VirtualCluster {
  const vc = virtualCluster();
  delete vc.metadata.labels!['kubecell.io/cell'];
  vc.spec = {
    cellSelector: { matchLabels: { 'example.com/accelerator': 'nvidia' } },
    ...(policy === undefined ? {} : { placementPolicy: policy }),
    classRef: { name: 'small' },
  };
  return vc;
}

const world = (...cells: Cell[]) => [...cells, smallClass(), hostNamespace()];

/** A plan of tenant-a that concluded `decision` on `chosen`, valid until `expiresAt`. */
function plan(
  chosen: string,
  decision = 'Accepted',
  expiresAt = '2026-11-30T00:10:00Z',
): VirtualClusterPlan {
  return {
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'VirtualClusterPlan',
    metadata: { name: 'asked', namespace: 'tenant-a', uid: 'plan-uid', generation: 1 },
    spec: { cellSelector: selecting().spec.cellSelector!, classRef: { name: 'small' } },
    status: {
      observedGeneration: 1,
      decision: decision as 'Accepted',
      evaluatedAt: '2026-11-29T23:50:00Z',
      expiresAt,
      checks: [],
      placement: { policy: { type: 'MostAvailable' }, candidates: 2, chosen: { name: chosen } },
    },
  };
}

function fromPlan(): VirtualCluster {
  const vc = selecting();
  vc.metadata.annotations = { 'kubecell.io/plan': 'asked' };
  return vc;
}

describe('VirtualCluster with spec.cellSelector', () => {
  it('resolves to the Cell with the most room left (MostAvailable) and records why', () => {
    const response = runSync(selecting(), world(namedCell('small', 4), namedCell('big', 6)));
    const resolved = statusOf(response).resolved;
    expect(resolved?.cell).to.deep.include({ name: 'big', uid: 'big-uid' });
    expect(resolved?.placement).to.deep.equal({
      policy: { type: 'MostAvailable' },
      candidates: 2,
      chosen: { name: 'big', score: '2', scoreResource: 'nvidia.com/gpu', left: '4' },
      runnerUp: { name: 'small', score: '1', scoreResource: 'nvidia.com/gpu', left: '2' },
      filtered: [],
    });
    expect(statusOf(response).phase).to.equal('Provisioning');
    expect(response.children.length).to.be.greaterThan(0);
  });

  it('resolves to the fullest Cell that still fits with Pack', () => {
    const response = runSync(
      selecting({ type: 'Pack' }),
      world(namedCell('small', 4), namedCell('big', 6), namedCell('full', 1)),
    );
    const resolved = statusOf(response).resolved;
    expect(resolved?.cell.name).to.equal('small');
    expect(resolved?.placement?.filtered).to.deep.equal([
      { result: 'Fail', reason: 'InsufficientCapacity', count: 1, cells: ['full'] },
    ]);
  });

  it('stays Pending when no Cell fits, naming the Cells left out and why', () => {
    const response = runSync(selecting(), world(namedCell('full', 1), namedCell('empty', 0)));
    const status = statusOf(response);
    expect(status.phase).to.equal('Pending');
    expect(status.resolved).to.equal(undefined);
    expect(response.children).to.deep.equal([]);
    expect(condition(response, 'Resolved')).to.deep.include({
      status: 'False',
      reason: 'FeasibilityRejected',
      message:
        'The feasibility evaluation rejected the placement on each of the 2 Cell(s) spec.cellSelector matches (left out: 2 Fail InsufficientCapacity (empty, full)); see status.feasibilityChecks.',
    });
    // The checks are one Cell's whole report: the first left out.
    const capacity = status.feasibilityChecks?.find(
      (c) => c.name === 'Capacity' && c.resource === 'nvidia.com/gpu',
    );
    expect(capacity).to.deep.include({ result: 'Fail', reason: 'InsufficientCapacity' });
  });

  it('waits Unknown while no Cell matches the selector', () => {
    const response = runSync(selecting(), world());
    const status = statusOf(response);
    expect(status.phase).to.equal('Pending');
    expect(status.feasibilityChecks?.[0]).to.deep.include({
      name: 'CellFound',
      result: 'Unknown',
      reason: 'NoCellMatches',
    });
    expect(condition(response, 'Resolved')).to.deep.include({ reason: 'FeasibilityUnknown' });
    // No Cell to judge yet: CellLive says so rather than naming an empty Cell.
    expect(condition(response, 'CellLive')).to.deep.include({
      status: 'Unknown',
      reason: 'CellNotObserved',
      message:
        'No Cell is chosen yet: spec.cellSelector chooses one at resolution (see the Resolved condition).',
    });
  });

  it('never moves once resolved: a later sync keeps the snapshot whatever the Cells now offer', () => {
    const first = runSync(selecting(), world(namedCell('small', 4), namedCell('big', 6)));
    const resolved = statusOf(first).resolved!;
    const after = withStatus(selecting(), statusOf(first));
    // Now the other Cell has far more room; the snapshot and the children stay.
    const later = runSync(
      after,
      world(namedCell('small', 8), namedCell('big', 1)),
      first.children,
      LATER,
    );
    expect(statusOf(later).resolved).to.deep.equal(resolved);
    expect(later.children.map((c) => c.metadata.name)).to.deep.equal(
      first.children.map((c) => c.metadata.name),
    );
  });
  describe('created from a plan (annotation kubecell.io/plan)', () => {
    it('takes the plan’s Cell while it still fits, ahead of the policy', () => {
      // MostAvailable alone would take big; the plan chose small, which still fits.
      const response = runSync(fromPlan(), [
        ...world(namedCell('small', 4), namedCell('big', 6)),
        plan('small'),
      ]);
      const resolved = statusOf(response).resolved;
      expect(resolved?.cell.name).to.equal('small');
      expect(resolved?.plan).to.deep.equal({ name: 'asked', cell: 'small', result: 'Followed' });
      expect(resolved?.placement?.runnerUp?.name).to.equal('big');
      expect(condition(response, 'PlanFollowed')).to.deep.include({
        status: 'True',
        reason: 'PlanFollowed',
      });
    });

    it('takes the next best when the plan’s Cell no longer fits, and says so', () => {
      const response = runSync(fromPlan(), [
        ...world(namedCell('small', 4), namedCell('big', 1)),
        plan('big'),
      ]);
      const resolved = statusOf(response).resolved;
      expect(resolved?.cell.name).to.equal('small');
      expect(resolved?.plan).to.deep.equal({
        name: 'asked',
        cell: 'big',
        result: 'CellNoLongerFits',
      });
      expect(condition(response, 'PlanFollowed')).to.deep.include({
        status: 'False',
        reason: 'CellNoLongerFits',
      });
    });

    it('lets the policy choose when the plan is expired, not Accepted, names an unmatched Cell, or is missing', () => {
      const cells = world(namedCell('small', 4), namedCell('big', 6));
      const cases: [VirtualClusterPlan | undefined, string][] = [
        [plan('small', 'Accepted', '2026-11-29T23:59:59Z'), 'PlanNotAccepted'],
        [plan('small', 'Rejected'), 'PlanNotAccepted'],
        [plan('elsewhere'), 'CellNotMatched'],
        [undefined, 'PlanNotFound'],
      ];
      for (const [asked, result] of cases) {
        const related = asked === undefined ? cells : [...cells, asked];
        const response = runSync(fromPlan(), related);
        const resolved = statusOf(response).resolved;
        expect(resolved?.cell.name, result).to.equal('big');
        expect(resolved?.plan?.result).to.equal(result);
        expect(condition(response, 'PlanFollowed')?.status).to.equal('False');
      }
    });

    it('has no PlanFollowed condition without the annotation', () => {
      const response = runSync(selecting(), world(namedCell('big', 6)));
      expect(condition(response, 'PlanFollowed')).to.equal(undefined);
      expect(statusOf(response).resolved?.plan).to.equal(undefined);
    });
  });
});
