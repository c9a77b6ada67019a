import { expect } from 'chai';
import { createBodyBudget, type BodyBudget } from './body-budget.js';

/** A budget of `limitBytes` on a clock the test moves: grace 2 s, 250 ms to begin. */
function budgetOf(limitBytes: number): { budget: BodyBudget; clock: { ms: number } } {
  const clock = { ms: 0 };
  const budget = createBodyBudget({
    limitBytes,
    limit: `${limitBytes}b`,
    retryAfterSeconds: 3,
    now: () => clock.ms,
    graceMs: 2000,
    startMs: 250,
  });
  return { budget, clock };
}

const neverCut = (): void => expect.fail('nothing is cut');

describe('body budget (hooks/server/body-budget.ts)', () => {
  it('holds a chunked body’s bytes as they come, until released, and refuses what does not fit', () => {
    const { budget } = budgetOf(100);
    const a = budget.open(neverCut);
    const b = budget.open(neverCut);
    expect(a.receive(60)).to.equal(true);
    expect(b.receive(40)).to.equal(true);
    expect(budget.used()).to.equal(100);
    // Both bodies are young: nothing may be cut, so the bytes are refused.
    expect(b.receive(1)).to.equal(false);
    expect(budget.used()).to.equal(100);
    a.release();
    a.release();
    expect(budget.used()).to.equal(40);
    expect(b.receive(60)).to.equal(true);
    expect(budget.fullMessage()).to.equal(
      'the KubeCell hook server holds KUBECELL_BODY_BUDGET (100b) of request bodies already; ' +
        'retry after 3 s',
    );
  });

  it('holds a declared length at once, before any byte arrives, and no more as they do', () => {
    const { budget } = budgetOf(100);
    const a = budget.open(neverCut);
    expect(a.declare(70)).to.equal(true);
    expect(budget.used()).to.equal(70);
    expect(a.receive(70)).to.equal(true);
    expect(budget.used()).to.equal(70);
    expect(budget.open(neverCut).declare(31)).to.equal(false);
    expect(budget.open(neverCut).declare(30)).to.equal(true);
    expect(budget.used()).to.equal(100);
  });

  it('cuts the oldest incomplete bodies past their grace to make room, never a complete one', () => {
    const { budget, clock } = budgetOf(100);
    const cut: string[] = [];
    const complete = budget.open(() => cut.push('complete'));
    complete.receive(30);
    complete.complete();
    clock.ms = 100;
    const old = budget.open((message) => cut.push(`old: ${message}`));
    old.receive(30);
    clock.ms = 200;
    const older = budget.open(() => cut.push('second'));
    older.receive(30);
    clock.ms = 1900;
    const young = budget.open(() => cut.push('young'));
    young.receive(10);

    // 2.3 s later: `old` and `older` are past their grace, `young` is not.
    clock.ms = 2300;
    const newcomer = budget.open(() => cut.push('newcomer'));
    expect(newcomer.receive(25)).to.equal(true);
    // Cutting the oldest (30 bytes) made room; the next one was left alone.
    expect(cut).to.deep.equal([
      'old: request body incomplete after 2.2 s while the request bodies held reach ' +
        'KUBECELL_BODY_BUDGET (100b); cut to make room for others: send it again after 3 s',
    ]);
    expect(budget.used()).to.equal(95);
    // A cut body is held no more.
    expect(old.receive(1)).to.equal(false);

    // Past what cutting every such body would free: none is cut, the bytes are refused.
    expect(newcomer.receive(60)).to.equal(false);
    expect(cut).to.have.length(1);
    expect(budget.used()).to.equal(95);
    expect(newcomer.receive(35)).to.equal(true);
    expect(cut.slice(1)).to.deep.equal(['second']);
    expect(budget.used()).to.equal(100);
  });

  it('cuts a young body that is behind the pace that would complete it within its grace', () => {
    const { budget, clock } = budgetOf(100);
    const cut: string[] = [];
    // Two claims of 40 bytes: one keeps pace, the other sends nothing.
    const onPace = budget.open(() => cut.push('on pace'));
    const claim = budget.open(() => cut.push('claim'));
    expect(onPace.declare(40)).to.equal(true);
    expect(claim.declare(40)).to.equal(true);
    // Within the 250 ms to begin, neither may be cut.
    clock.ms = 250;
    expect(budget.open(neverCut).declare(30)).to.equal(false);
    // At 1.125 s, half way from the start to the grace, a body should have half of it.
    clock.ms = 1125;
    onPace.receive(20);
    expect(budget.open(() => cut.push('newcomer')).declare(30)).to.equal(true);
    expect(cut).to.deep.equal(['claim']);
    expect(budget.used()).to.equal(70);
  });
});
