import { expect } from 'chai';
import fc from 'fast-check';
import { ENTRY_OVERHEAD_BYTES, memoiseByText, stringBytes } from './bounded-memo.js';

/** A memo of `text.toUpperCase()` that counts the computations. */
function upper(options: Partial<Parameters<typeof memoiseByText<string>>[0]> = {}) {
  const computed: string[] = [];
  const memo = memoiseByText<string>(
    { maxBytes: 1 << 20, maxTextLength: 1 << 20, key: 'text', sizeOf: stringBytes, ...options },
    (text) => {
      computed.push(text);
      return text.toUpperCase();
    },
  );
  return { memo, computed };
}

describe('memoiseByText', () => {
  it('computes a text once and answers the same result after', () => {
    const { memo, computed } = upper();
    expect(memo('500m')).to.equal('500M');
    expect(memo('500m')).to.equal('500M');
    expect(memo('32Gi')).to.equal('32GI');
    expect(computed).to.deep.equal(['500m', '32Gi']);
    expect(memo.stats()).to.include({ entries: 2, hits: 1, misses: 2, evictions: 0 });
  });

  it('accounts key, result and overhead, and never retains more than maxBytes', () => {
    const entry = (text: string) => 2 * stringBytes(text) + ENTRY_OVERHEAD_BYTES;
    const maxBytes = 10 * entry('x'.repeat(100));
    const { memo } = upper({ maxBytes });
    for (let i = 0; i < 1000; i++) {
      memo(`${i}`.padStart(100, '0'));
      expect(memo.stats().retainedBytes).to.be.at.most(maxBytes);
    }
    const stats = memo.stats();
    expect(stats.entries).to.equal(10);
    expect(stats.retainedBytes).to.equal(10 * entry('x'.repeat(100)));
    expect(stats.evictions).to.equal(990);
  });

  it('drops the least recently used entry first', () => {
    const entry = 2 * stringBytes('a') + ENTRY_OVERHEAD_BYTES;
    const { memo, computed } = upper({ maxBytes: 3 * entry });
    memo('a');
    memo('b');
    memo('c');
    memo('a'); // a is now the most recently used
    memo('d'); // drops b
    computed.length = 0;
    memo('a');
    memo('c');
    memo('d');
    expect(computed).to.deep.equal([]);
    memo('b');
    expect(computed).to.deep.equal(['b']);
  });

  it('keeps and drops entries as a least-recently-used list of the same bound would', () => {
    // A reference model: an array from least to most recently used, trimmed from the front.
    const entry = 2 * stringBytes('a') + ENTRY_OVERHEAD_BYTES;
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'), { maxLength: 200 }),
        (capacity, texts) => {
          const { memo, computed } = upper({ maxBytes: capacity * entry });
          const model: string[] = [];
          for (const text of texts) {
            computed.length = 0;
            memo(text);
            const at = model.indexOf(text);
            expect(computed).to.deep.equal(at === -1 ? [text] : []);
            if (at !== -1) model.splice(at, 1);
            model.push(text);
            if (model.length > capacity) model.shift();
          }
          expect(memo.stats().entries).to.equal(model.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('computes a text over maxTextLength every time and never keeps it', () => {
    const { memo, computed } = upper({ maxTextLength: 8 });
    memo('123456789');
    memo('123456789');
    expect(computed).to.deep.equal(['123456789', '123456789']);
    expect(memo.stats()).to.include({ entries: 0, retainedBytes: 0, skipped: 2 });
  });

  it('does not keep a result larger than maxBytes', () => {
    const { memo } = upper({ maxBytes: 1000 });
    memo('x'.repeat(600));
    expect(memo.stats()).to.include({ entries: 0, retainedBytes: 0 });
  });

  it('keyed by sha256, keeps 64 characters whatever the length of the text', () => {
    const computed: number[] = [];
    const memo = memoiseByText(
      { maxBytes: 1 << 20, maxTextLength: 1 << 20, key: 'sha256' },
      (text) => {
        computed.push(text.length);
        return text.length;
      },
    );
    const long = 'k'.repeat(100_000);
    expect(memo(long)).to.equal(100_000);
    expect(memo('k'.repeat(100_000))).to.equal(100_000);
    expect(memo(`${long}!`)).to.equal(100_001);
    expect(computed).to.deep.equal([100_000, 100_001]);
    expect(memo.stats().retainedBytes).to.equal(2 * (2 * 64 + ENTRY_OVERHEAD_BYTES));
  });

  it('is emptied by clear()', () => {
    const { memo } = upper();
    memo('a');
    memo.clear();
    expect(memo.stats()).to.include({ entries: 0, retainedBytes: 0 });
  });

  it('refuses a bound that cannot hold anything', () => {
    expect(() => memoiseByText({ maxBytes: 0, maxTextLength: 1, key: 'text' }, (t) => t)).to.throw(
      RangeError,
    );
  });
});
