/**
 * No helper is written twice in the shipped code: jscpd finds repeated token sequences (50 tokens
 * and up, about 8 lines) across hooks/, tests, test helpers and generated code left out. A clone
 * means a concept without one home; give it one and import it.
 */
import { expect } from 'chai';
import { detectClones } from 'jscpd';
import path from 'node:path';
import { REPO_ROOT } from './source-files.js';

describe('duplicates: no code is repeated across hooks/ (jscpd)', function () {
  this.timeout(120_000);

  it('finds no clone in the shipped modules', async () => {
    const clones = await detectClones({
      path: [path.join(REPO_ROOT, 'hooks')],
      format: ['typescript'],
      ignore: [
        '**/generated/**',
        '**/*.test.ts',
        '**/testing.ts',
        '**/__fixtures__/**',
        '**/__snapshots__/**',
      ],
      minTokens: 50,
      silent: true,
      reporters: [],
      absolute: true,
    });
    const where = (part: { sourceId: string; start: { line: number }; end: { line: number } }) =>
      `${path.relative(REPO_ROOT, part.sourceId)}:${part.start.line}-${part.end.line}`;
    expect(
      clones.map((clone) => `${where(clone.duplicationA)} repeats ${where(clone.duplicationB)}`),
    ).to.deep.equal([]);
  });
});
