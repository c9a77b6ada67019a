/**
 * Each part of bench/results.json marked CURRENT or STALE against the code in the tree
 * (bench/part-code.ts), and results.md never showing a target of a STALE part as met
 * (bench/report-code.ts). Git is replaced by a table of commits, so every case is explicit.
 */
import { expect } from 'chai';
import type { CodeFingerprint } from '../../bench/code-fingerprint.js';
import { partCodes, type CodeLookup } from '../../bench/part-code.js';
import { metText } from '../../bench/report-code.js';
import { targets, type Results } from '../../bench/report.js';
import { readResults, renderMarkdown } from '../../bench/results-file.js';

const tree = (hooks: string, schemas = 's1', metacontroller = 'm1'): CodeFingerprint => ({
  hooks,
  schemas,
  metacontroller,
});
const NOW = tree('h2');
const OLD = tree('h1');
const COMMITS: Record<string, CodeFingerprint> = { aaaaaaa: NOW, bbbbbbb: OLD };
const lookup: CodeLookup = {
  present: { fingerprint: NOW, gitCommit: 'aaaaaaa' },
  ofCommit: (commit) => COMMITS[commit],
};

/**
 * The committed results.json's http and Cell scaling figures (real shapes), as a run of the http
 * part at commit aaaaaaa with the Cell scaling part kept from a run at bbbbbbb.
 */
function results(overrides: Partial<Results> = {}): Results {
  const committed = readResults();
  if (!committed?.http || !committed.cellScaling)
    throw new Error('bench/results.json: expected the http and Cell scaling parts');
  const base: Results = {
    machine: { ...committed.machine, gitCommit: 'aaaaaaa', gitDirty: false },
    settings: { parts: ['http'] },
    http: committed.http,
    cellScaling: committed.cellScaling,
    kept: [
      { part: 'scaling', date: '2026-11-30T02:33:15Z', gitCommit: 'bbbbbbb', loadAverage: [1, 1] },
    ],
    targets: [],
    notes: [],
  };
  return { ...base, ...overrides };
}

const marks = (r: Results, l: CodeLookup = lookup) =>
  Object.fromEntries(partCodes(r, l).map((p) => [p.part, `${p.status}: ${p.reason ?? ''}`]));

describe('bench: which code each part measured, CURRENT or STALE', () => {
  describe('parts of runs before fingerprints were recorded (from their commit)', () => {
    it('a part run on a clean tree at a commit with the present code is CURRENT', () => {
      expect(marks(results()).http).to.equal('CURRENT: ');
    });

    it('a part run with uncommitted changes is STALE, even at the present commit', () => {
      const dirty = results();
      dirty.machine.gitDirty = true;
      expect(marks(dirty).http).to.match(/^STALE: it ran with uncommitted changes/);
    });

    it('a kept part whose run did not record uncommitted changes is STALE', () => {
      const kept = results({
        kept: [{ part: 'scaling', date: 'x', gitCommit: 'aaaaaaa', loadAverage: [1, 1] }],
      });
      expect(marks(kept).scaling).to.match(/^STALE: not recorded whether/);
      kept.kept = [{ ...kept.kept![0]!, gitDirty: false }];
      expect(marks(kept).scaling).to.equal('CURRENT: ');
    });

    it('a part of an older commit is STALE, naming the directories that changed since', () => {
      const older = results({
        kept: [
          {
            part: 'scaling',
            date: 'x',
            gitCommit: 'bbbbbbb',
            gitDirty: false,
            loadAverage: [1, 1],
          },
        ],
      });
      expect(marks(older).scaling).to.equal('STALE: hooks/ changed since');
    });

    it('a part without a commit, or of a commit not in this clone, is STALE', () => {
      const noCommit = results();
      delete noCommit.machine.gitCommit;
      expect(marks(noCommit).http).to.equal('STALE: no commit recorded');
      const unknown = results();
      unknown.machine.gitCommit = 'ccccccc';
      expect(marks(unknown).http).to.equal('STALE: commit ccccccc is not in this clone');
    });
  });

  describe('parts with a recorded fingerprint', () => {
    it('are CURRENT while the tree has that fingerprint, uncommitted or not', () => {
      const recorded = results({ measuredCode: { http: { date: 'x', fingerprint: NOW } } });
      recorded.machine.gitDirty = true;
      expect(marks(recorded).http).to.equal('CURRENT: ');
    });

    it('are STALE once any shipped directory differs', () => {
      const recorded = results({
        measuredCode: { http: { date: 'x', gitCommit: 'aaaaaaa', fingerprint: tree('h2', 's0') } },
      });
      expect(marks(recorded).http).to.equal('STALE: schemas/ changed since');
    });

    it('are STALE when the code changed while the part ran', () => {
      const recorded = results({
        measuredCode: { http: { date: 'x', fingerprint: NOW, fingerprintAtEnd: OLD } },
      });
      expect(marks(recorded).http).to.equal('STALE: the code changed while it ran (hooks/)');
    });

    it('are STALE when the present code cannot be fingerprinted', () => {
      const recorded = results({ measuredCode: { http: { date: 'x', fingerprint: NOW } } });
      const blind: CodeLookup = { present: {}, ofCommit: () => undefined };
      expect(marks(recorded, blind).http).to.match(/^STALE/);
    });
  });

  describe('results.md', () => {
    it('shows a target of a STALE part as STALE, never as met; one of a CURRENT part as measured', () => {
      const r = results();
      const judged = { ...r, targets: targets(r) };
      const codes = { parts: partCodes(judged, lookup), present: lookup.present };
      const met = { name: 't', limit: '≤ 1', measured: '1', met: true } as const;
      expect(metText({ ...met, part: 'http' }, codes)).to.equal('yes');
      expect(metText({ ...met, part: 'scaling' }, codes)).to.equal('**STALE** (met on older code)');
      expect(metText({ ...met, part: 'scaling', met: false }, codes)).to.equal(
        '**STALE** (not met on older code)',
      );
      expect(judged.targets.filter((t) => t.part === undefined)).to.deep.equal([]);

      const md = renderMarkdown(r, lookup);
      const row = md.split('\n').find((line) => line.startsWith('| Cell sync, 1,000 Nodes'));
      expect(row).to.match(/\| \*\*STALE\*\* \((not )?met on older code\) \|$/);
      expect(row).to.not.match(/\| yes \|$/);
      expect(md).to.match(/\| scaling \| 2026-11-30 02:33 \| bbbbbbb \| .* \| \*\*STALE\*\*: /);
      expect(md).to.match(/\| http \| [0-9-]+ [0-9:]+ \| aaaaaaa \| hooks h2 · .* \| CURRENT \|/);
    });

    it('renders the committed bench/results.json as it is (runs before fingerprints included)', () => {
      const committed = readResults();
      expect(committed).to.not.equal(undefined);
      const md = renderMarkdown(committed!, lookup);
      expect(md).to.contain('## Code measured');
      expect(md).to.contain('## Targets');
    });
  });
});
