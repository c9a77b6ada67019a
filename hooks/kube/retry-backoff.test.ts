import { expect } from 'chai';
import { RetryBackoff } from './retry-backoff.js';

describe('RetryBackoff (hooks/kube/retry-backoff.ts)', () => {
  it('waits 1 s, doubling up to 30 s, and back to 1 s after a success', () => {
    const backoff = new RetryBackoff();
    const waits = Array.from({ length: 7 }, () => backoff.failed('refused').retryMs);
    expect(waits).to.deep.equal([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
    expect(backoff.succeeded()).to.equal(7);
    expect(backoff.failed('refused').retryMs).to.equal(1000);
  });

  it('calls a failure new only when its text differs from the last one, or after a success', () => {
    const backoff = new RetryBackoff(50);
    expect(['a', 'a', 'b', 'b', 'a'].map((text) => backoff.failed(text).isNew)).to.deep.equal([
      true,
      false,
      true,
      false,
      true,
    ]);
    expect(backoff.failures).to.equal(5);
    backoff.succeeded();
    expect(backoff.failed('a')).to.deep.equal({ retryMs: 50, isNew: true });
  });
});
