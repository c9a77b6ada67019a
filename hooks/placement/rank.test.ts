import { expect } from 'chai';
import fc from 'fast-check';
import type { Cell } from '../generated/types/index.js';
import { evaluateFeasibility } from '../feasibility/evaluate.js';
import { Decision } from '../feasibility/reasons.js';
import { acceptedInput, copy, readyCell } from '../feasibility/testing.js';
import { chooseCell, MAX_NAMED_CELLS, type CandidateCell, type PlacementPolicy } from './rank.js';
import { formatScore, scoreOf } from './score.js';

/**
 * A Cell named `name` with `gpusFree` GPUs still to promise (of 8), labelled `labels`, with
 * `resolvedBy` VirtualClusters, evaluated for the class "small" (2 GPUs, 4 cpu, 16Gi) as a
 * placement naming it would be.
 */
function candidate(
  name: string,
  gpusFree: number,
  options: { labels?: Record<string, string>; resolvedBy?: number; edit?: (c: Cell) => void } = {},
): CandidateCell {
  const cell = copy(readyCell());
  cell.metadata.name = name;
  const gpu = cell.status!.inventory!['nvidia.com/gpu']!;
  gpu.committed = String(8 - 2 - gpusFree);
  gpu.availableEstimate = String(gpusFree);
  options.edit?.(cell);
  const input = { ...acceptedInput(), cellName: name, cell, virtualClusters: [] };
  return {
    name,
    labels: options.labels ?? {},
    resolvedBy: options.resolvedBy ?? 0,
    checks: evaluateFeasibility(input).checks,
  };
}

const MOST: PlacementPolicy = { type: 'MostAvailable' };
const PACK: PlacementPolicy = { type: 'Pack' };

describe('placement: choosing a Cell among those a selector matched (hooks/placement)', () => {
  describe('the score', () => {
    it('counts how many more of the class fit, in its scarcest device', () => {
      // 6 GPUs free, the class needs 2: after it, 4 left, room for 2 more. cpu (23.5 free,
      // needs 4) would allow 4.875 more, but a GPU class is scored by its GPUs.
      expect(scoreOf(candidate('a', 6).checks)).to.deep.equal({
        milli: 2000,
        resource: 'nvidia.com/gpu',
        left: '4',
      });
      expect(scoreOf(candidate('a', 3).checks)).to.deep.include({ milli: 500, left: '1' });
      expect(scoreOf(candidate('a', 2).checks)).to.deep.include({ milli: 0, left: '0' });
    });

    it('scores a class without devices by whichever capacity-checked resource runs out first', () => {
      const cell = candidate('a', 6);
      const checks = cell.checks.filter(
        (c) => c.name !== 'ResourceOffered' && c.resource !== 'nvidia.com/gpu',
      );
      // cpu: (23.5 − 4) ÷ 4 = 4.875; memory: (244Gi − 16Gi) ÷ 16Gi = 14.25.
      expect(scoreOf(checks)).to.deep.equal({ milli: 4875, resource: 'cpu', left: '19500m' });
    });

    it('is written for people: 2, 0.5, 12.125, -1', () => {
      expect([2000, 500, 12125, 0, -1000].map(formatScore)).to.deep.equal([
        '2',
        '0.5',
        '12.125',
        '0',
        '-1',
      ]);
    });
  });

  describe('the policies', () => {
    const cells = [candidate('c', 4), candidate('a', 6), candidate('b', 2)];

    it('MostAvailable takes the most room left, the runner-up next', () => {
      const choice = chooseCell(cells, MOST);
      expect(choice.decision).to.equal(Decision.Accepted);
      expect(choice.chosen?.name).to.equal('a');
      expect(choice.runnerUp?.name).to.equal('c');
      expect(choice.candidates).to.equal(3);
    });

    it('Pack takes the fullest Cell that still fits', () => {
      const choice = chooseCell(cells, PACK);
      expect(choice.chosen).to.deep.equal({
        name: 'b',
        score: { milli: 0, resource: 'nvidia.com/gpu', left: '0' },
      });
      expect(choice.runnerUp?.name).to.equal('c');
    });

    it('Spread takes the label value with the fewest VirtualClusters, then the most room', () => {
      const zone = (z: string) => ({ 'topology.kubernetes.io/zone': z });
      const spread: PlacementPolicy = { type: 'Spread', spreadKey: 'topology.kubernetes.io/zone' };
      const zoned = [
        candidate('a1', 6, { labels: zone('a'), resolvedBy: 1 }),
        candidate('a2', 6, { labels: zone('a'), resolvedBy: 1 }),
        candidate('b1', 2, { labels: zone('b'), resolvedBy: 1 }),
        // Full, so not a choice, but its VirtualClusters count towards zone b.
        candidate('b2', 0, { labels: zone('b'), resolvedBy: 2 }),
        candidate('none', 6),
      ];
      const choice = chooseCell(zoned, spread);
      // Zone a has 2, zone b 3: a, and within a the tie on score goes to the first name.
      expect(choice.chosen).to.deep.include({ name: 'a1', domain: 'a' });
      expect(choice.runnerUp).to.deep.include({ name: 'a2', domain: 'a' });
      // A Cell without the label comes after every labelled one, whatever its room.
      const unlabelledLast = chooseCell(
        zoned.filter((c) => c.name !== 'a1' && c.name !== 'a2' && c.name !== 'b1'),
        spread,
      );
      expect(unlabelledLast.chosen).to.deep.equal({
        name: 'none',
        score: { milli: 2000, resource: 'nvidia.com/gpu', left: '4' },
      });
    });

    it('breaks ties by name, whatever the order the Cells came in', () => {
      const tied = [candidate('z', 4), candidate('m', 4), candidate('k', 4)];
      for (const policy of [MOST, PACK]) {
        expect(chooseCell(tied, policy).chosen?.name).to.equal('k');
        expect(chooseCell([...tied].reverse(), policy)).to.deep.equal(chooseCell(tied, policy));
      }
    });
  });

  describe('the Cells left out', () => {
    it('counts them per reason, naming the first few, and keeps the choice among the rest', () => {
      const full = Array.from({ length: 8 }, (_, i) => candidate(`full-${i}`, 1));
      const stale = candidate('stale', 6, {
        edit: (cell) => {
          cell.status!.observedAt = '2026-11-29T00:00:00Z';
        },
      });
      const choice = chooseCell([...full, stale, candidate('fits', 2)], MOST);
      expect(choice.chosen?.name).to.equal('fits');
      expect(choice.runnerUp).to.equal(undefined);
      expect(choice.filtered).to.deep.equal([
        {
          result: 'Fail',
          reason: 'InsufficientCapacity',
          count: 8,
          cells: ['full-0', 'full-1', 'full-2', 'full-3', 'full-4'],
        },
        { result: 'Unknown', reason: 'InventoryOutdated', count: 1, cells: ['stale'] },
      ]);
      expect(choice.filtered[0]!.cells).to.have.length(MAX_NAMED_CELLS);
    });

    it('is Rejected when every Cell fails, Unknown when one may still fit or none matched', () => {
      expect(chooseCell([candidate('a', 1), candidate('b', 0)], MOST)).to.deep.include({
        decision: Decision.Rejected,
        candidates: 2,
      });
      const stale = candidate('s', 6, {
        edit: (cell) => {
          cell.status!.observedAt = '2026-11-29T00:00:00Z';
        },
      });
      expect(chooseCell([candidate('a', 1), stale], MOST).decision).to.equal(Decision.Unknown);
      expect(chooseCell([], MOST)).to.deep.equal({
        decision: Decision.Unknown,
        candidates: 0,
        filtered: [],
      });
    });
  });

  it('chooses an accepted Cell exactly when there is one, and the same one for any order', () => {
    const cellArbitrary = fc.record({
      name: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'),
      gpusFree: fc.integer({ min: 0, max: 6 }),
      zone: fc.option(fc.constantFrom('x', 'y'), { nil: undefined }),
      resolvedBy: fc.integer({ min: 0, max: 3 }),
    });
    const policyArbitrary = fc.constantFrom<PlacementPolicy>(MOST, PACK, {
      type: 'Spread',
      spreadKey: 'zone',
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(cellArbitrary, { selector: (c) => c.name, maxLength: 6 }),
        policyArbitrary,
        (specs, policy) => {
          const cells = specs.map((s) =>
            candidate(s.name, s.gpusFree, {
              labels: s.zone === undefined ? {} : { zone: s.zone },
              resolvedBy: s.resolvedBy,
            }),
          );
          const choice = chooseCell(cells, policy);
          const fitting = specs.filter((s) => s.gpusFree >= 2).map((s) => s.name);
          expect(choice.chosen === undefined).to.equal(fitting.length === 0);
          if (choice.chosen) expect(fitting).to.include(choice.chosen.name);
          expect(chooseCell([...cells].reverse(), policy)).to.deep.equal(choice);
          const counted = choice.filtered.reduce((sum, group) => sum + group.count, 0);
          expect(counted + fitting.length).to.equal(specs.length);
          if (policy.type === 'MostAvailable' && choice.chosen) {
            const most = Math.max(...specs.filter((s) => s.gpusFree >= 2).map((s) => s.gpusFree));
            expect(choice.chosen.score?.milli).to.equal(((most - 2) * 1000) / 2);
          }
        },
      ),
    );
  });
});
