import { expect } from 'chai';
import {
  configMapMeta,
  feedbackValue,
  manifestCondition,
  type ObservedManifestWork,
} from './manifest-work.js';

/** A work status as OCM's work agent writes it (api/work/v1 ManifestCondition). */
function work(manifests: unknown): ObservedManifestWork {
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: { name: 'kubecell-cell-agent', namespace: 'cluster1' },
    status: { resourceStatus: { manifests } },
  };
}

const reportMeta = {
  ordinal: 4,
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  resource: 'configmaps',
  name: 'kubecell-cell-report-a100',
  namespace: 'kubecell-system',
};
const serviceMeta = {
  ordinal: 5,
  group: '',
  version: 'v1',
  kind: 'Service',
  resource: 'services',
  name: 'kubecell-team-a-api',
  namespace: 'tenant-a',
};

describe('ManifestWork status feedback (hooks/remote/manifest-work.ts)', () => {
  const sample = work([
    {
      resourceMeta: serviceMeta,
      statusFeedback: {
        values: [{ name: 'nodePort', fieldValue: { type: 'Integer', integer: 31443 } }],
      },
      conditions: [],
    },
    {
      resourceMeta: reportMeta,
      statusFeedback: {
        values: [{ name: 'report', fieldValue: { type: 'String', string: '{"version":1}' } }],
      },
      conditions: [],
    },
  ]);

  it('finds a value by the resource it belongs to and its feedback name', () => {
    const report = configMapMeta('kubecell-system', 'kubecell-cell-report-a100');
    expect(feedbackValue(sample, report, 'report')).to.deep.equal({
      type: 'String',
      string: '{"version":1}',
    });
    expect(
      feedbackValue(
        sample,
        { kind: 'Service', name: 'kubecell-team-a-api', namespace: 'tenant-a' },
        'nodePort',
      ),
    ).to.deep.equal({ type: 'Integer', integer: 31443 });
  });

  it('matches a resourceMeta the work agent could not map to a resource', () => {
    const withoutResource = work([
      {
        resourceMeta: { ...reportMeta, resource: '' },
        statusFeedback: {
          values: [{ name: 'report', fieldValue: { type: 'String', string: 'x' } }],
        },
      },
    ]);
    expect(
      feedbackValue(
        withoutResource,
        configMapMeta('kubecell-system', 'kubecell-cell-report-a100'),
        'report',
      ),
    ).to.deep.equal({ type: 'String', string: 'x' });
  });

  it('is undefined without a status, a matching resource, a value of that name, or a typed value', () => {
    const report = configMapMeta('kubecell-system', 'kubecell-cell-report-a100');
    expect(feedbackValue(undefined, report, 'report')).to.equal(undefined);
    expect(feedbackValue({ ...sample, status: undefined }, report, 'report')).to.equal(undefined);
    expect(feedbackValue(sample, configMapMeta('kubecell-system', 'other'), 'report')).to.equal(
      undefined,
    );
    expect(feedbackValue(sample, report, 'sealedKubeconfig')).to.equal(undefined);
    const untyped = work([
      {
        resourceMeta: reportMeta,
        statusFeedback: { values: [{ name: 'report', fieldValue: {} }] },
      },
    ]);
    expect(feedbackValue(untyped, report, 'report')).to.equal(undefined);
    expect(manifestCondition(work('not a list'), report)).to.equal(undefined);
  });
});
