import { expect } from 'chai';
import {
  CLUSTER_API_STAND_IN_KINDS,
  permissiveStandInCrd,
} from '../../test/simulate/cluster-api-crds.js';
import { SIMULATED_LINES, USAGE, parseUpArguments } from './options.js';

describe('local-up options', function () {
  it('takes no argument, --simulate, or --help', function () {
    expect(parseUpArguments([])).to.deep.equal({ simulate: false });
    expect(parseUpArguments(['--simulate'])).to.deep.equal({ simulate: true });
    expect(parseUpArguments(['--simulate', '--simulate'])).to.deep.equal({ simulate: true });
    expect(parseUpArguments(['--help'])).to.equal('help');
    expect(parseUpArguments(['-h', '--bogus'])).to.equal('help');
  });

  it('refuses anything else, naming it', function () {
    expect(parseUpArguments(['--simulated'])).to.deep.equal({
      error: 'unknown argument: --simulated',
    });
    expect(parseUpArguments(['--simulate', 'x'])).to.deep.equal({ error: 'unknown argument: x' });
    expect(USAGE).to.include('--simulate');
  });

  it('labels the simulation and names what it plays and what that means', function () {
    const text = SIMULATED_LINES.join('\n');
    expect(text).to.match(/^SIMULATED \(--simulate\): test\/simulate\//);
    for (const played of [
      'Open Cluster Management',
      'kubelets',
      'k3k',
      'KubeVirt',
      'Cluster API',
    ]) {
      expect(text, played).to.include(played);
    }
    expect(text).to.include('no Pod ever starts');
    expect(text).to.include('point nowhere');
  });
});

describe('Cluster API stand-in CRDs (test/simulate/cluster-api-crds.ts)', function () {
  it('are permissive, namespaced and labelled as stand-ins', function () {
    const names = CLUSTER_API_STAND_IN_KINDS.map(
      (kind) => permissiveStandInCrd(kind).metadata.name,
    );
    expect(names).to.deep.equal([
      'kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io',
      'kubevirtmachinetemplates.infrastructure.cluster.x-k8s.io',
      'kubevirtmachines.infrastructure.cluster.x-k8s.io',
    ]);
    for (const kind of CLUSTER_API_STAND_IN_KINDS) {
      const crd = permissiveStandInCrd(kind);
      expect(crd.metadata.labels).to.deep.equal({ 'kubecell.io/test-stand-in': 'permissive' });
      expect(crd.metadata.annotations?.['kubecell.io/simulated-by']).to.include('NOT the CRD of');
      expect(crd.spec).to.deep.include({ group: kind.group, scope: 'Namespaced' });
      expect((crd.spec as { versions: unknown[] }).versions).to.deep.equal([
        {
          name: kind.version,
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          },
          subresources: { status: {} },
        },
      ]);
    }
  });
});
