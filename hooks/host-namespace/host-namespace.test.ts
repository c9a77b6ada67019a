import { expect } from 'chai';
import { ConfigError } from '../server/config.js';
import { DEFAULT_HOST_NAMESPACE_CONFIG, loadHostNamespaceConfig } from './config.js';
import { renderNetworkPolicies } from './network-policies.js';
import { formatRecord, labelsToRemove, parseRecord, planPodSecurity } from './pod-security.js';

describe('host-namespace settings', () => {
  it('defaults to baseline and all egress addresses', () => {
    expect(loadHostNamespaceConfig({})).to.deep.equal(DEFAULT_HOST_NAMESPACE_CONFIG);
  });

  it('reads the level and CIDRs', () => {
    expect(
      loadHostNamespaceConfig({
        KUBECELL_PSA_LEVEL: 'restricted',
        KUBECELL_HOST_EGRESS_CIDRS: ' 10.0.0.0/8, fd00::/8,10.0.0.0/8 ',
      }),
    ).to.deep.equal({ podSecurityLevel: 'restricted', egressCidrs: ['10.0.0.0/8', 'fd00::/8'] });
    expect(
      loadHostNamespaceConfig({ KUBECELL_HOST_EGRESS_CIDRS: 'none' }).egressCidrs,
    ).to.deep.equal([]);
  });

  it('refuses bad values, naming the variable and the fix', () => {
    const load = () =>
      loadHostNamespaceConfig({
        KUBECELL_PSA_LEVEL: 'Baseline',
        KUBECELL_HOST_EGRESS_CIDRS: '10.0.0.0/33,example.com,1.2.3.4',
      });
    expect(load).to.throw(ConfigError);
    try {
      load();
    } catch (error) {
      const problems = (error as ConfigError).problems;
      expect(problems).to.have.length(4);
      expect(problems[0]).to.equal(
        'KUBECELL_PSA_LEVEL="Baseline": expected one of privileged, baseline, restricted ' +
          '(the Pod Security Standard level of host namespaces)',
      );
      expect(problems[1]).to.match(/^KUBECELL_HOST_EGRESS_CIDRS: "10.0.0.0\/33": .* at most 32/);
      expect(problems[2]).to.contain('"example.com" is not a CIDR');
      expect(problems[3]).to.contain('"1.2.3.4" is not a CIDR');
    }
    expect(() => loadHostNamespaceConfig({ KUBECELL_HOST_EGRESS_CIDRS: ',' })).to.throw(
      /KUBECELL_HOST_EGRESS_CIDRS=",": no CIDR given; write none/,
    );
  });
});

describe('Pod Security labels', () => {
  const applied = 'kubecell.io/pod-security-applied';

  it('records round-trip, sorted by mode', () => {
    expect(formatRecord({ warn: 'baseline', audit: 'restricted' })).to.equal(
      'audit=restricted,warn=baseline',
    );
    expect(formatRecord({})).to.equal(undefined);
    expect(parseRecord('audit=restricted,warn=baseline')).to.deep.equal({
      audit: 'restricted',
      warn: 'baseline',
    });
  });

  it('a damaged record proves nothing: the label is the platform’s', () => {
    expect(parseRecord('enforce baseline,bogus=1,warn=')).to.deep.equal({});
    const plan = planPodSecurity(
      { 'pod-security.kubernetes.io/enforce': 'baseline' },
      { [applied]: 'enforce baseline' },
      'baseline',
    );
    expect(plan.kept).to.deep.equal({ enforce: 'baseline' });
  });

  it('a label equal to the level but set before KubeCell is the platform’s', () => {
    const plan = planPodSecurity(
      { 'pod-security.kubernetes.io/enforce': 'baseline' },
      {},
      'baseline',
    );
    expect(plan.kept).to.deep.equal({ enforce: 'baseline' });
    expect(plan.applied).to.deep.equal({ audit: 'baseline', warn: 'baseline' });
  });

  it('finalize removes only labels still at the value KubeCell wrote', () => {
    expect(
      labelsToRemove(
        {
          'pod-security.kubernetes.io/audit': 'baseline',
          'pod-security.kubernetes.io/enforce': 'privileged',
        },
        { [applied]: 'audit=baseline,enforce=baseline,warn=baseline' },
      ),
    ).to.deep.equal(['pod-security.kubernetes.io/audit']);
  });
});

describe('host-namespace NetworkPolicies', () => {
  it('selects k3k server pods of any cluster for the API port', () => {
    const policies = renderNetworkPolicies('tenant-a', DEFAULT_HOST_NAMESPACE_CONFIG);
    const api = policies.find((policy) => policy.metadata.name === 'kubecell-allow-api-server');
    expect(api?.spec.podSelector).to.deep.equal({
      matchLabels: { role: 'server' },
      matchExpressions: [{ key: 'cluster', operator: 'Exists' }],
    });
    expect(api?.spec.ingress).to.deep.equal([{ ports: [{ protocol: 'TCP', port: 6443 }] }]);
  });

  it('without egress CIDRs allows DNS and the namespace only', () => {
    const policies = renderNetworkPolicies('tenant-a', {
      ...DEFAULT_HOST_NAMESPACE_CONFIG,
      egressCidrs: [],
    });
    const egress = policies.find((policy) => policy.metadata.name === 'kubecell-egress');
    expect(egress?.spec.egress).to.have.length(2);
    expect(JSON.stringify(egress)).to.not.contain('ipBlock');
  });
});
