import { expect } from 'chai';
import { acceptedInput } from '../feasibility/testing.js';
import { evaluatePlan, expiryOf, keptEvaluation, planConditions } from './phases.js';

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

  describe('evaluatePlan and keptEvaluation', () => {
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
      const kept = keptEvaluation(status, 3);
      expect(kept?.checks).to.equal(evaluation.checks);
      expect(keptEvaluation(status, 4)).to.equal(undefined);
      expect(keptEvaluation(status, undefined)).to.equal(undefined);
      expect(keptEvaluation(undefined, 3)).to.equal(undefined);
      expect(keptEvaluation({ ...status, decision: 'Maybe' as never }, 3)).to.equal(undefined);
      expect(keptEvaluation({ ...status, evaluatedAt: undefined }, 3)).to.equal(undefined);
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
