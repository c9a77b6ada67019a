// How the harness plays the kubelet for the delivered cell agent (delivered-pod.ts): the
// Deployment of the real kubecell-cell-agent work read as a kubelet would.
import { expect } from 'chai';
import { DEFAULT_DELIVERY_CONFIG } from '../../hooks/delivery/config.js';
import { renderAgentWork } from '../../hooks/delivery/agent-work.js';
import { AGENT_NAME } from '../../hooks/remote/contract.js';
import { REMOTE_CLUSTER } from '../remote-world.js';
import { deliveredPod, processEnvironment, type DeliveredPod } from './delivered-pod.js';

/** The Deployment of the real kubecell-cell-agent work, as OCM's work agent applies it. */
function agentDeployment(publicKeyPem?: string): unknown {
  const work = renderAgentWork(REMOTE_CLUSTER, ['a100', 'remote-cpu'], {
    agentImage: DEFAULT_DELIVERY_CONFIG.agentImage,
    ...(publicKeyPem === undefined ? {} : { publicKeyPem }),
  });
  const deployment = work.spec.workload.manifests.find(
    (manifest) => manifest.kind === 'Deployment' && manifest.metadata?.name === AGENT_NAME,
  );
  if (!deployment) throw new Error('the agent work holds no Deployment');
  return deployment;
}

describe('delivered-pod.ts: running the delivered cell agent', function () {
  it("reads the agent work's Deployment as a kubelet would: command, env, account, mount", function () {
    const pod = deliveredPod(agentDeployment()) as DeliveredPod;
    expect(pod.argv).to.deep.equal(['node', '--import', 'tsx', 'hooks/cli/kubecell.ts', 'agent']);
    expect(pod.serviceAccountName).to.equal('kubecell-cell-agent');
    expect(pod.env).to.include({
      KUBECELL_AGENT_MACHINE_PROFILES: 'a100,remote-cpu',
      KUBECELL_SEALING_PUBLIC_KEY_FILE: '/etc/kubecell/sealing/public-key.pem',
    });
    expect(pod.mounts).to.deep.equal([
      {
        mountPath: '/etc/kubecell/sealing',
        volume: 'sealing-public-key',
        configMap: 'kubecell-sealing-public-key',
        optional: true,
      },
    ]);
  });

  it('moves paths under a mount to the folder the ConfigMap was projected into', function () {
    const pod = deliveredPod(agentDeployment()) as DeliveredPod;
    const env = processEnvironment(pod, new Map([['/etc/kubecell/sealing', '/state/volumes/key']]));
    expect(env.KUBECELL_SEALING_PUBLIC_KEY_FILE).to.equal('/state/volumes/key/public-key.pem');
    expect(env.KUBECELL_AGENT_MACHINE_PROFILES).to.equal('a100,remote-cpu');
    // A path that only starts like the mount is not under it.
    const similar = { ...pod, env: { X: '/etc/kubecell/sealing-other/file' } };
    expect(processEnvironment(similar, new Map([['/etc/kubecell/sealing', '/f']])).X).to.equal(
      '/etc/kubecell/sealing-other/file',
    );
  });

  it('says why a Deployment cannot be run here', function () {
    expect(deliveredPod({ spec: {} })).to.deep.equal({
      problem: 'the Deployment has no pod template container',
    });
    const noCommand = { spec: { template: { spec: { containers: [{ name: 'x', image: 'i' }] } } } };
    expect(deliveredPod(noCommand)).to.have.property('problem').that.includes('no command');
    const fromSecret = {
      spec: {
        template: {
          spec: {
            containers: [
              { command: ['x'], env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: {} } }] },
            ],
          },
        },
      },
    };
    expect(deliveredPod(fromSecret)).to.deep.equal({ problem: 'env TOKEN is not a literal value' });
  });
});
