import { expect } from 'chai';
import { poll, PollTimeout } from './poll.js';

describe('poll (harness/poll.ts)', () => {
  it('resolves to the first value the probe answers, trying again after each not-yet', async () => {
    let tries = 0;
    const value = await poll(
      'the third try',
      async () => (++tries === 3 ? { value: 'done' } : { notYet: `try ${tries}` }),
      { timeoutMs: 5_000, intervalMs: 1 },
    );
    expect(value).to.equal('done');
    expect(tries).to.equal(3);
  });

  it('counts a thrown error as not yet, and names the last reason when time runs out', async () => {
    let tries = 0;
    const error = await poll(
      'something that never comes',
      async () => {
        tries += 1;
        if (tries % 2) throw new Error('connection refused');
        return { notYet: 'still Pending' };
      },
      { timeoutMs: 30, intervalMs: 5, context: () => '--- log (end)' },
    ).catch((caught: unknown) => caught);
    expect(error).to.be.instanceOf(PollTimeout);
    expect((error as Error).message).to.match(
      /^timed out after 0 s waiting for something that never comes; last: (connection refused|still Pending)\n--- log \(end\)$/,
    );
    expect(tries).to.be.greaterThan(1);
  });

  it('stops at once when abort gives a reason, before trying', async () => {
    let tries = 0;
    const error = await poll(
      'a Ready VirtualCluster',
      async () => {
        tries += 1;
        return { notYet: 'Pending' };
      },
      {
        timeoutMs: 60_000,
        abort: () => (tries >= 2 ? 'hook-server exited with code 1' : undefined),
      },
    ).catch((caught: unknown) => caught);
    expect(error).to.not.be.instanceOf(PollTimeout);
    expect((error as Error).message).to.equal(
      'stopped waiting for a Ready VirtualCluster: hook-server exited with code 1',
    );
    expect(tries).to.equal(2);
  });
});
