import { expect } from 'chai';
import { evaluateSelector, formatSelector } from './namespace-selector.js';

describe('namespace selectors (metav1.LabelSelector semantics)', () => {
  const labels = { 'kubernetes.io/metadata.name': 'tenant-a', team: 'research', empty: '' };
  const verdict = (selector: unknown) => evaluateSelector(selector, labels).kind;

  it('an empty selector selects every namespace', () => {
    expect(verdict({})).to.equal('selected');
    expect(evaluateSelector({}, {}).kind).to.equal('selected');
    expect(verdict({ matchLabels: {}, matchExpressions: [] })).to.equal('selected');
  });

  it('matchLabels: every key with exactly its value', () => {
    expect(verdict({ matchLabels: { team: 'research' } })).to.equal('selected');
    expect(verdict({ matchLabels: { team: 'research', tier: 'gpu' } })).to.equal('notSelected');
    expect(verdict({ matchLabels: { team: 'Research' } })).to.equal('notSelected');
    expect(verdict({ matchLabels: { empty: '' } })).to.equal('selected');
    expect(verdict({ matchLabels: { absent: '' } })).to.equal('notSelected');
  });

  it('In, NotIn, Exists and DoesNotExist, all of which must hold', () => {
    const expression = (key: string, operator: string, values?: string[]) => ({
      matchExpressions: [{ key, operator, ...(values ? { values } : {}) }],
    });
    expect(verdict(expression('team', 'In', ['research', 'ops']))).to.equal('selected');
    expect(verdict(expression('team', 'In', ['ops']))).to.equal('notSelected');
    expect(verdict(expression('absent', 'In', ['x']))).to.equal('notSelected');
    expect(verdict(expression('team', 'NotIn', ['ops']))).to.equal('selected');
    expect(verdict(expression('team', 'NotIn', ['research']))).to.equal('notSelected');
    // NotIn selects a namespace without the label, as in Kubernetes.
    expect(verdict(expression('absent', 'NotIn', ['x']))).to.equal('selected');
    expect(verdict(expression('empty', 'Exists'))).to.equal('selected');
    expect(verdict(expression('absent', 'Exists'))).to.equal('notSelected');
    expect(verdict(expression('absent', 'DoesNotExist'))).to.equal('selected');
    expect(verdict(expression('team', 'DoesNotExist'))).to.equal('notSelected');
    expect(
      verdict({
        matchLabels: { team: 'research' },
        matchExpressions: [
          { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['tenant-a'] },
        ],
      }),
    ).to.equal('notSelected');
    // Inherited properties are not labels.
    expect(verdict(expression('constructor', 'Exists'))).to.equal('notSelected');
  });

  it('a malformed selector selects nothing and says why', () => {
    for (const [selector, problem] of [
      [null, 'it is not an object'],
      [{ matchLabels: [] }, 'matchLabels is not a map'],
      [{ matchLabels: { team: 1 } }, 'matchLabels[team] is not a string'],
      [{ matchExpressions: {} }, 'matchExpressions is not a list'],
      [{ matchExpressions: [{ operator: 'Exists' }] }, 'matchExpressions[0].key is missing'],
      [
        { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] },
        'matchExpressions[0].operator "Gt" is not one of In, NotIn, Exists, DoesNotExist',
      ],
      [
        { matchExpressions: [{ key: 'a', operator: 'In' }] },
        'matchExpressions[0]: In needs at least one value',
      ],
      [
        { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
        'matchExpressions[0]: Exists takes no values',
      ],
      [
        { matchExpressions: [{ key: 'a', operator: 'In', values: [1] }] },
        'matchExpressions[0].values is not a list of strings',
      ],
    ] as const) {
      expect(evaluateSelector(selector, labels), JSON.stringify(selector)).to.deep.equal({
        kind: 'invalid',
        problem,
      });
    }
  });

  it('is written as kubectl writes a selector, and shortened', () => {
    expect(formatSelector({})).to.equal('{}');
    expect(
      formatSelector({
        matchLabels: { team: 'research' },
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['gpu', 'npu'] },
          { key: 'env', operator: 'NotIn', values: ['prod'] },
          { key: 'owner', operator: 'Exists' },
          { key: 'legacy', operator: 'DoesNotExist' },
        ],
      }),
    ).to.equal('team=research,tier in (gpu,npu),env notin (prod),owner,!legacy');
    const long = formatSelector({
      matchExpressions: [
        {
          key: 'name',
          operator: 'In',
          values: Array.from({ length: 64 }, (_, i) => `tenant-${i}`),
        },
      ],
    });
    expect(long).to.have.length(300);
    expect(long.endsWith('…')).to.equal(true);
    expect(formatSelector({ matchLabels: 'x' })).to.equal('invalid: matchLabels is not a map');
  });
});
