import { expect } from 'chai';
import { virtualCluster } from '../virtualcluster/testing.js';
import { kubeCellObjectProblems, verdictMemoStats } from './verdict-memo.js';

describe('the validation verdict memo (by content, not by identity)', () => {
  it('checks an object once and answers the same problems for the same content after', () => {
    const object = virtualCluster();
    object.metadata.name = 'memo-first';
    const before = verdictMemoStats();
    expect(kubeCellObjectProblems('VirtualCluster', object)).to.deep.equal([]);
    expect(kubeCellObjectProblems('VirtualCluster', structuredClone(object))).to.deep.equal([]);
    const after = verdictMemoStats();
    expect(after.misses - before.misses, 'checked once').to.equal(1);
    expect(after.hits - before.hits, 'answered from the memo once').to.equal(1);
  });

  it('checks anew an object that keeps a valid one’s uid and resourceVersion but not its content', () => {
    const valid = virtualCluster();
    valid.metadata.name = 'memo-forged';
    Object.assign(valid.metadata, { uid: 'u-1', resourceVersion: '42' });
    expect(kubeCellObjectProblems('VirtualCluster', valid)).to.deep.equal([]);
    const forged = structuredClone(valid) as unknown as { spec: Record<string, unknown> };
    forged.spec.unexpected = true;
    const problems = kubeCellObjectProblems('VirtualCluster', forged);
    expect(problems.join('\n')).to.contain('spec.unexpected');
  });

  it('keeps the verdict per kind: the same JSON is judged by each kind’s own rules', () => {
    const object = virtualCluster();
    object.metadata.name = 'memo-kind';
    expect(kubeCellObjectProblems('VirtualCluster', object)).to.deep.equal([]);
    expect(kubeCellObjectProblems('Cell', object)).not.to.deep.equal([]);
  });
});
