import { expect } from 'chai';
import { PassTrigger } from './trigger.js';

const HOUR_MS = 3_600_000;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('when the cell agent passes (hooks/agent/trigger.ts)', () => {
  const never = new AbortController().signal;

  it('a burst of changes wakes one pass; the next waits for the interval', async () => {
    const trigger = new PassTrigger(20);
    const waking = trigger.next(HOUR_MS, never);
    for (let i = 0; i < 5; i++) trigger.changed();
    expect(await waking).to.equal('watch');
    trigger.passStarts();
    expect(await trigger.next(50, never)).to.equal('interval');
    trigger.stop();
  });

  it('a change during a pass wakes the next one as soon as that pass ends', async () => {
    const trigger = new PassTrigger(5);
    trigger.passStarts();
    trigger.changed();
    await pause(30); // the pass is still running when the change comes due
    expect(await trigger.next(HOUR_MS, never)).to.equal('watch');
    trigger.stop();
  });

  it('a pass that starts absorbs the changes asked for before it', async () => {
    const trigger = new PassTrigger(5);
    trigger.changed();
    trigger.passStarts();
    await pause(30);
    expect(await trigger.next(50, never)).to.equal('interval');
    trigger.stop();
  });

  it('stopping ends the wait', async () => {
    const trigger = new PassTrigger(5);
    const controller = new AbortController();
    const waiting = trigger.next(HOUR_MS, controller.signal);
    controller.abort();
    expect(await waiting).to.equal('stopped');
    expect(await trigger.next(HOUR_MS, controller.signal)).to.equal('stopped');
  });
});
