import { expect } from 'chai';
import { ConfigError } from '../config/env-reader.js';
import { DEFAULT_HOST_NAMESPACE_CONFIG, loadHostNamespaceConfig } from './config.js';
import { renderNetworkPolicies } from './network-policies.js';
import {
  formatRecord,
  isWeakerLevel,
  labelsToRemove,
  parseRecord,
  planPodSecurity,
} from './pod-security.js';

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
    ).to.deep.equal({
      podSecurityLevel: 'restricted',
      egressCidrs: ['10.0.0.0/8', 'fd00::/8'],
      apiClientCidrs: ['0.0.0.0/0', '::/0'],
      k3kNamespace: 'k3k-system',
    });
    expect(
      loadHostNamespaceConfig({ KUBECELL_HOST_EGRESS_CIDRS: 'none' }).egressCidrs,
    ).to.deep.equal([]);
  });

  it('reads the API client CIDRs and the k3k controller namespace', () => {
    expect(
      loadHostNamespaceConfig({
        KUBECELL_API_CLIENT_CIDRS: '192.0.2.0/24, 10.20.0.0/16',
        KUBECELL_K3K_CONTROLLER: 'k3k/k3k-controller',
      }),
    ).to.deep.include({ apiClientCidrs: ['192.0.2.0/24', '10.20.0.0/16'], k3kNamespace: 'k3k' });
    expect(
      loadHostNamespaceConfig({ KUBECELL_API_CLIENT_CIDRS: 'none' }).apiClientCidrs,
    ).to.deep.equal([]);
    try {
      loadHostNamespaceConfig({
        KUBECELL_API_CLIENT_CIDRS: 'anywhere',
        KUBECELL_K3K_CONTROLLER: 'k3k',
      });
      expect.fail('expected a ConfigError');
    } catch (error) {
      expect((error as ConfigError).problems).to.deep.equal([
        'KUBECELL_API_CLIENT_CIDRS: "anywhere" is not a CIDR (address/prefix, e.g. 10.0.0.0/8 or ' +
          'fd00::/8); give a comma-separated list of CIDRs, or none',
        'KUBECELL_K3K_CONTROLLER="k3k" is not <namespace>/<name>; set it like k3k-system/k3k (the default)',
      ]);
    }
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
    expect(plan.weaker).to.deep.equal({});
  });

  it('reports a kept label weaker than the configured level, and only those', () => {
    const labels = {
      'pod-security.kubernetes.io/enforce': 'privileged',
      'pod-security.kubernetes.io/warn': 'restricted',
      'pod-security.kubernetes.io/audit': 'baselin',
    };
    const underBaseline = planPodSecurity(labels, {}, 'baseline');
    expect(underBaseline.kept).to.deep.equal({
      audit: 'baselin',
      enforce: 'privileged',
      warn: 'restricted',
    });
    // `baselin` is no level: kept, not compared.
    expect(underBaseline.weaker).to.deep.equal({ enforce: 'privileged' });
    expect(planPodSecurity(labels, {}, 'restricted').weaker).to.deep.equal({
      enforce: 'privileged',
    });
    expect(
      planPodSecurity({ 'pod-security.kubernetes.io/enforce': 'baseline' }, {}, 'restricted')
        .weaker,
    ).to.deep.equal({ enforce: 'baseline' });
    // Under privileged nothing is weaker.
    expect(planPodSecurity(labels, {}, 'privileged').weaker).to.deep.equal({});
    expect(isWeakerLevel('privileged', 'baseline')).to.equal(true);
    expect(isWeakerLevel('restricted', 'baseline')).to.equal(false);
    expect(isWeakerLevel('Privileged', 'baseline')).to.equal(false);
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
  const apiPolicy = (config = DEFAULT_HOST_NAMESPACE_CONFIG) =>
    renderNetworkPolicies('tenant-a', config).find(
      (policy) => policy.metadata.name === 'kubecell-allow-api-server',
    );

  it("opens the API port of k3k's server pods only, not of tenant pods labelled like them", () => {
    const selector = apiPolicy()?.spec.podSelector;
    expect(selector).to.deep.equal({
      matchLabels: { role: 'server' },
      matchExpressions: [
        { key: 'cluster', operator: 'Exists' },
        { key: 'k3k.io/clusterName', operator: 'DoesNotExist' },
      ],
    });
    // The labels of k3k's server pod (StatefulSet k3k-<name>-server) and of a tenant pod that
    // k3k's virtual kubelet copied into the namespace with the tenant's own labels.
    const key = (labels: Record<string, string>, name: string) => Object.hasOwn(labels, name);
    const selects = (labels: Record<string, string>) =>
      Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => labels[key] === value) &&
      (selector?.matchExpressions ?? []).every((expression) =>
        expression.operator === 'Exists'
          ? key(labels, expression.key)
          : !key(labels, expression.key),
      );
    expect(selects({ cluster: 'team-a', role: 'server' })).to.equal(true);
    expect(
      selects({ cluster: 'team-a', role: 'server', 'k3k.io/clusterName': 'team-a', app: 'x' }),
    ).to.equal(false);
    expect(selects({ cluster: 'team-a', type: 'agent', mode: 'shared' })).to.equal(false);
  });

  it('admits the k3k controller namespace and the API client CIDRs, on 6443 only', () => {
    expect(apiPolicy()?.spec.ingress).to.deep.equal([
      {
        from: [
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'k3k-system' } } },
          { ipBlock: { cidr: '0.0.0.0/0' } },
          { ipBlock: { cidr: '::/0' } },
        ],
        ports: [{ protocol: 'TCP', port: 6443 }],
      },
    ]);
    const narrowed = apiPolicy({
      ...DEFAULT_HOST_NAMESPACE_CONFIG,
      apiClientCidrs: [],
      k3kNamespace: 'k3k',
    });
    expect(narrowed?.spec.ingress).to.deep.equal([
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'k3k' } } }],
        ports: [{ protocol: 'TCP', port: 6443 }],
      },
    ]);
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
