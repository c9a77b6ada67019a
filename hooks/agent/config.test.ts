import { expect } from 'chai';
import { ConfigError } from '../config/env-reader.js';
import { loadAgentConfig } from './config.js';

function problems(env: NodeJS.ProcessEnv): string[] {
  try {
    loadAgentConfig(env);
  } catch (error) {
    expect(error).to.be.instanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('the cell agent settings (hooks/agent/config.ts)', () => {
  it('defaults to a pass every 30 s, no profile, the key from the ConfigMap', () => {
    const config = loadAgentConfig({});
    expect(config).to.include({ intervalSeconds: 30 });
    expect(config.machineProfiles).to.deep.equal([]);
    expect(config.publicKeyFile).to.equal(undefined);
    expect(config.cell.cniDaemonSet).to.deep.equal({
      namespace: 'kube-flannel',
      name: 'kube-flannel-ds',
    });
  });

  it('reads the profiles (sorted, once each), the interval, the key file and the provider names', () => {
    const config = loadAgentConfig({
      KUBECELL_AGENT_INTERVAL_SECONDS: '10',
      KUBECELL_AGENT_MACHINE_PROFILES: 'h100, a100,,h100',
      KUBECELL_SEALING_PUBLIC_KEY_FILE: '/etc/kubecell/sealing/public-key.pem',
      KUBECELL_CNI_DAEMONSET: 'kube-system/cilium',
    });
    expect(config.intervalSeconds).to.equal(10);
    expect(config.machineProfiles).to.deep.equal(['a100', 'h100']);
    expect(config.publicKeyFile).to.equal('/etc/kubecell/sealing/public-key.pem');
    expect(config.cell.cniDaemonSet).to.deep.equal({ namespace: 'kube-system', name: 'cilium' });
  });

  it('names every bad variable at once', () => {
    const found = problems({
      KUBECELL_AGENT_INTERVAL_SECONDS: '1',
      KUBECELL_AGENT_MACHINE_PROFILES: 'a100,not a profile',
      KUBECELL_CNI_DAEMONSET: 'nope',
    });
    expect(found).to.have.length(3);
    expect(found.join('\n'))
      .to.contain('KUBECELL_AGENT_INTERVAL_SECONDS="1"')
      .and.contain('"not a profile"')
      .and.contain('KUBECELL_CNI_DAEMONSET="nope"');
  });
});
