import { expect } from 'chai';
import { acceptedInput } from '../feasibility/testing.js';
import type { FeasibilityInput } from '../feasibility/evaluate.js';
import {
  evaluatePlan,
  expiryOf,
  nextEvaluation,
  planConditions,
  storedEvaluation,
} from './phases.js';

describe('VirtualClusterPlan phases', () => {
  describe('expiryOf', () => {
    const expiresAt = '2026-11-30T00:15:00Z';
    it('counts whole seconds up to expiresAt, rounding up', () => {
      expect(expiryOf(expiresAt, new Date('2026-11-30T00:00:00Z'))).to.deep.equal({
        expired: false,
        resyncAfterSeconds: 900,
      });
      expect(expiryOf(expiresAt, new Date('2026-11-30T00:14:59.001Z'))).to.deep.equal({
        expired: false,
        resyncAfterSeconds: 1,
      });
    });
    it('is expired at expiresAt and after', () => {
      expect(expiryOf(expiresAt, new Date('2026-11-30T00:15:00Z'))).to.deep.equal({
        expired: true,
      });
      expect(expiryOf(expiresAt, new Date('2027-01-01T00:00:00Z'))).to.deep.equal({
        expired: true,
      });
    });
    it('treats an unreadable expiresAt as expired', () => {
      expect(expiryOf('later', new Date('2026-11-30T00:00:00Z'))).to.deep.equal({ expired: true });
    });
  });

  describe('evaluatePlan and storedEvaluation', () => {
    it('stamps evaluatedAt and expiresAt = evaluatedAt + TTL', () => {
      const input = { ...acceptedInput(), now: new Date('2026-11-30T00:00:59.999Z') };
      const evaluation = evaluatePlan(input, 2);
      expect(evaluation).to.include({
        decision: 'Accepted',
        evaluatedAt: '2026-11-30T00:00:59Z',
        expiresAt: '2026-11-30T00:01:01Z',
      });
    });

    it('keeps only a complete evaluation of the same generation, as the same objects', () => {
      const evaluation = evaluatePlan(acceptedInput(), 900);
      const status = { observedGeneration: 3, ...evaluation };
      const kept = storedEvaluation(status, 3);
      expect(kept?.checks).to.equal(evaluation.checks);
      expect(storedEvaluation(status, 4)).to.equal(undefined);
      expect(storedEvaluation(status, undefined)).to.equal(undefined);
      expect(storedEvaluation(undefined, 3)).to.equal(undefined);
      expect(storedEvaluation({ ...status, decision: 'Maybe' as never }, 3)).to.equal(undefined);
      expect(storedEvaluation({ ...status, evaluatedAt: undefined }, 3)).to.equal(undefined);
    });
  });

  describe('nextEvaluation', () => {
    const noClass: FeasibilityInput = { ...acceptedInput(), virtualNodeClass: undefined };
    const later = new Date(acceptedInput().now.getTime() + 60_000);

    it('keeps a conclusion without evaluating again', () => {
      for (const input of [acceptedInput(), { ...acceptedInput(), namespace: '' }]) {
        const stored = evaluatePlan(input, 900);
        expect(stored.decision).to.not.equal('Unknown');
        const next = nextEvaluation(stored, () => {
          throw new Error('a conclusion must not be evaluated again');
        });
        expect(next).to.equal(stored);
      }
    });

    it('evaluates an Unknown again, and concludes once the missing input appears', () => {
      const stored = evaluatePlan(noClass, 900);
      expect(stored.decision).to.equal('Unknown');
      const next = nextEvaluation(stored, () =>
        evaluatePlan({ ...acceptedInput(), now: later }, 900),
      );
      expect(next.decision).to.equal('Accepted');
      expect(next.evaluatedAt).to.not.equal(stored.evaluatedAt);
    });

    it('keeps the stored Unknown, same object, while the checks come out the same', () => {
      const stored = evaluatePlan(noClass, 900);
      // As the apiserver returns it: keys sorted.
      const sortedKeys = {
        ...stored,
        checks: stored.checks.map((check) =>
          Object.fromEntries(Object.entries(check).sort(([a], [b]) => a.localeCompare(b))),
        ) as typeof stored.checks,
      };
      const next = nextEvaluation(sortedKeys, () => evaluatePlan({ ...noClass, now: later }, 900));
      expect(next).to.equal(sortedKeys);
    });

    it('takes a new Unknown when its checks differ', () => {
      const stored = evaluatePlan(noClass, 900);
      const noCell = { ...noClass, cell: undefined, now: later };
      const next = nextEvaluation(stored, () => evaluatePlan(noCell, 900));
      expect(next.decision).to.equal('Unknown');
      expect(next.checks.map((check) => check.reason)).to.include('CellNotFound');
      expect(next.evaluatedAt).to.not.equal(stored.evaluatedAt);
    });
  });

  describe('planConditions', () => {
    const evaluation = evaluatePlan(acceptedInput(), 900);
    const now = new Date('2026-11-30T00:00:00Z');

    it('omits observedGeneration on conditions when the plan has no generation', () => {
      const conditions = planConditions(undefined, evaluation, { expired: false }, now, undefined);
      expect(conditions.map((c) => Object.keys(c).includes('observedGeneration'))).to.deep.equal([
        false,
        false,
      ]);
      expect(conditions[0]?.message).to.match(/^The plan was evaluated at/);
    });

    it('carries lastTransitionTime forward while a status is unchanged', () => {
      const first = planConditions(undefined, evaluation, { expired: false }, now, 1);
      const later = planConditions(
        first,
        evaluation,
        { expired: false },
        new Date('2026-11-30T00:05:00Z'),
        1,
      );
      expect(later).to.deep.equal(first);
    });
  });
});
