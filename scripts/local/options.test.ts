import { expect } from 'chai';
import {
  CLUSTER_API_STAND_IN_KINDS,
  permissiveStandInCrd,
} from '../../harness/simulate/cluster-api-crds.js';
import {
  REMOTE_CLUSTER_NAME,
  REMOTE_LINES,
  SIMULATED_LINES,
  USAGE,
  parseUpArguments,
} from './options.js';

describe('local-up options', function () {
  it('takes no argument, --simulate, --simulate --remote, or --help', function () {
    expect(parseUpArguments([])).to.deep.equal({ simulate: false, remote: false });
    expect(parseUpArguments(['--simulate'])).to.deep.equal({ simulate: true, remote: false });
    expect(parseUpArguments(['--simulate', '--simulate'])).to.deep.equal({
      simulate: true,
      remote: false,
    });
    expect(parseUpArguments(['--simulate', '--remote'])).to.deep.equal({
      simulate: true,
      remote: true,
    });
    expect(parseUpArguments(['--remote', '--simulate'])).to.deep.equal({
      simulate: true,
      remote: true,
    });
    expect(parseUpArguments(['--help'])).to.equal('help');
    expect(parseUpArguments(['-h', '--bogus'])).to.equal('help');
  });

  it('refuses anything else, naming it', function () {
    expect(parseUpArguments(['--simulated'])).to.deep.equal({
      error: 'unknown argument: --simulated',
    });
    expect(parseUpArguments(['--simulate', 'x'])).to.deep.equal({ error: 'unknown argument: x' });
    expect(USAGE).to.include('--simulate');
    expect(USAGE).to.include('--remote');
  });

  it('refuses --remote without --simulate: nothing would play the managed cluster', function () {
    const refused = parseUpArguments(['--remote']);
    expect(refused).to.have.property('error').that.includes('--remote needs --simulate');
    expect((refused as { error: string }).error).to.include(
      'npm run local-up -- --simulate --remote',
    );
  });

  it('says what --remote runs for real, what it simulates, and that the hub never connects', function () {
    const text = REMOTE_LINES.join('\n');
    expect(text).to.match(/^REMOTE \(--remote\): the REAL Open Cluster Management hub/);
    expect(text).to.include(`ManagedCluster\n${REMOTE_CLUSTER_NAME}`);
    for (const part of [
      'kubelets',
      'provider baseline',
      'k3k',
      'kubecell-system/kubecell-cell-agent',
    ]) {
      expect(text, part).to.include(part);
    }
    expect(text).to.include(`never connects\nto ${REMOTE_CLUSTER_NAME}`);
  });

  it('labels the simulation and names what it plays and what that means', function () {
    const text = SIMULATED_LINES.join('\n');
    expect(text).to.match(/^SIMULATED \(--simulate\): harness\/simulate\//);
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

describe('Cluster API stand-in CRDs (harness/simulate/cluster-api-crds.ts)', function () {
  it('are permissive, namespaced and labelled as stand-ins', function () {
    const names = CLUSTER_API_STAND_IN_KINDS.map(
      (kind) => permissiveStandInCrd(kind).metadata.name,
    );
    // Only the kind no pinned upstream CRD defines: the templates' real CRDs are pinned in
    // test/cluster/upstream-inputs.json and installed by the stack.
    expect(names).to.deep.equal(['kubevirtmachines.infrastructure.cluster.x-k8s.io']);
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
