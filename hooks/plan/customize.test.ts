import { expect } from 'chai';
import { customizePlan } from './customize.js';
import { CONFIG, plan } from './testing.js';

describe('VirtualClusterPlan customize', () => {
  it('asks for the Cell, the class, the VirtualClusters of the namespace and the Namespace: not those of the Cell', () => {
    expect(customizePlan({ parent: plan() }, CONFIG)).to.deep.equal({
      relatedResources: [
        {
          apiVersion: 'kubecell.io/v1alpha1',
          resource: 'cells',
          namespace: 'kubecell-system',
          names: ['cell1'],
        },
        { apiVersion: 'kubecell.io/v1alpha1', resource: 'virtualnodeclasses', names: ['small'] },
        { apiVersion: 'kubecell.io/v1alpha1', resource: 'virtualclusters', namespace: 'tenant-a' },
        { apiVersion: 'v1', resource: 'namespaces', names: ['tenant-a'] },
      ],
    });
  });

  it('uses the configured controller namespace', () => {
    const rules = customizePlan({ parent: plan() }, { cellNamespace: 'platform' }).relatedResources;
    expect(rules[0]?.namespace).to.equal('platform');
  });

  it('depends on the spec only, never on status', () => {
    const withStatus = {
      ...plan(),
      status: { decision: 'Rejected' as const, observedGeneration: 1 },
    };
    expect(customizePlan({ parent: withStatus }, CONFIG)).to.deep.equal(
      customizePlan({ parent: plan() }, CONFIG),
    );
  });
});
