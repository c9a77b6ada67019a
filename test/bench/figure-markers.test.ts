/** The checker behind docs-figures.test.ts, on small documents with every case spelled out. */
import { expect } from 'chai';
import { figureProblems, markersOf, type PartMark } from './figure-markers.js';

const PARTS: PartMark[] = [
  { part: 'http', status: 'CURRENT', gitCommit: 'abc1234' },
  { part: 'idle', status: 'STALE', gitCommit: '617cf8a', reason: 'hooks/ changed since' },
];

const doc = (...lines: string[]) => lines.join('\n');

describe('bench: figure markers in the docs', () => {
  it('reads part, commit and stale; a marker quoted in inline code or a fence is not one', () => {
    const text = doc(
      '# Title',
      '<!-- bench: part=idle commit=3c0563c stale -->',
      'Write `<!-- bench: part=http commit=abc1234 -->` under the heading.',
      '```',
      '<!-- bench: part=http commit=abc1234 -->',
      '```',
    );
    expect(markersOf(text).markers).to.deep.equal([
      { line: 2, part: 'idle', commit: '3c0563c', stale: true },
    ]);
  });

  it('refuses a marker of an unknown part or without a commit, saying what it expects', () => {
    const problems = figureProblems(
      doc('<!-- bench: part=cells commit=abc1234 -->', '<!-- bench: part=http -->'),
      PARTS,
      false,
    );
    expect(problems).to.have.length(2);
    expect(problems[0]).to.contain('expected part=<http|scaling|');
    expect(problems[1]).to.contain('commit=<the commit of the run');
  });

  it('fails a section quoting a STALE part as current, naming the part, why, and the fix', () => {
    const problems = figureProblems(
      doc('## Idle', '<!-- bench: part=idle commit=617cf8a -->', '| a | b |'),
      PARTS,
      false,
    );
    expect(problems).to.have.length(1);
    expect(problems[0]).to.contain('line 2 (## Idle): quotes part idle as current');
    expect(problems[0]).to.contain('is STALE: hooks/ changed since');
    expect(problems[0]).to.contain('npm run bench -- --only=idle');
  });

  it('accepts the same section marked stale, and a CURRENT part of the same commit', () => {
    const text = doc(
      '## Idle',
      '<!-- bench: part=idle commit=617cf8a stale -->',
      '## Hooks',
      '<!-- bench: part=http commit=abc1234 -->',
    );
    expect(figureProblems(text, PARTS, false)).to.deep.equal([]);
  });

  it('fails a CURRENT part quoted from another run, and a part results.json lacks', () => {
    const problems = figureProblems(
      doc(
        '## Hooks',
        '<!-- bench: part=http commit=1111111 -->',
        '## Remote',
        '<!-- bench: part=remote commit=2222222 -->',
      ),
      PARTS,
      false,
    );
    expect(problems).to.have.length(2);
    expect(problems[0]).to.contain('measured on commit abc1234');
    expect(problems[1]).to.contain('has no remote part');
  });

  it('fails a stale section whose Met column says yes, in its subsections too', () => {
    const table = ['| Target | Met |', '| --- | --- |', '| ratio | **yes** |'];
    const stale = doc(
      '## Latest',
      '<!-- bench: part=idle commit=617cf8a stale -->',
      '### Table',
      ...table,
    );
    expect(figureProblems(stale, PARTS, false)[0]).to.contain('a Met column there says "yes"');
    const said = stale.replace('**yes**', 'yes, on older code');
    expect(figureProblems(said, PARTS, false)).to.deep.equal([]);
  });

  it('with coverage, fails a section quoting figures without a marker over it', () => {
    const text = doc(
      '# Performance',
      'No figures here.',
      '## Covered',
      '<!-- bench: part=idle commit=617cf8a stale -->',
      '### Sub',
      'It took **183** s.',
      '## Uncovered',
      'Now 1.04× the floor.',
      '## Method',
      'Measured with autocannon for 10 s.',
    );
    expect(figureProblems(text, PARTS, true)).to.deep.equal([
      '"## Uncovered" quotes figures without a marker: add <!-- bench: part=<part> commit=<sha> --> (with stale when measured on older code)',
    ]);
  });
});
