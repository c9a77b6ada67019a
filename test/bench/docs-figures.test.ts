/**
 * No figure of a STALE part is quoted as current: each section of README.md and
 * docs/performance.md that quotes benchmark figures carries a marker naming the part and the
 * commit of its run (test/bench/figure-markers.ts), and a marker without `stale` holds only while
 * bench/results.json's part was measured on the code in this tree (bench/part-code.ts). After a
 * change to hooks/, schemas/ or metacontroller/, this fails until the part is measured again or the
 * docs say the figures are from older code.
 */
import { expect } from 'chai';
import { gitLookup, partCodes } from '../../bench/part-code.js';
import { readResults } from '../../bench/results-file.js';
import { readRepoFile } from '../install/markdown.js';
import { repoRoot } from '../install/support.js';
import { figureProblems, markersOf } from './figure-markers.js';

describe('docs: benchmark figures name their run, and none measured on older code is shown as current', () => {
  const results = readResults();
  const parts = results ? partCodes(results, gitLookup(repoRoot)) : [];

  it('bench/results.json is there to hold the docs against', () => {
    expect(results, 'bench/results.json (written by npm run bench)').to.not.equal(undefined);
  });

  for (const [file, coverage] of [
    ['docs/performance.md', true],
    ['README.md', false],
  ] as const) {
    it(`${file}: every marker holds${coverage ? ', every section with figures has one' : ''}`, () => {
      expect(figureProblems(readRepoFile(file), parts, coverage)).to.deep.equal([]);
    });
  }

  it('docs/performance.md marks the figures of every part it discusses', () => {
    const named = new Set(
      markersOf(readRepoFile('docs/performance.md')).markers.map((m) => m.part),
    );
    expect([...named].sort()).to.deep.equal(parts.map((p) => p.part).sort());
  });
});
