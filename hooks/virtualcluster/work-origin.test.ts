// A remote VirtualCluster's sealed kubeconfig: accepted only from the cell agent of its own
// ManagedCluster (the envelope names the cluster and is signed with the key kubecell-delivery
// recorded on the work), and opened with the current or, during a rotation, the previous hub key.
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import type { CompositeSyncResponse, KubernetesObject } from '../metacontroller/protocol.js';
import { generateAgentKey, keyId, publicKeyPemOf } from '../remote/sealing-keys.js';
import { sealFor } from '../remote/sealing.js';
import { sealVersion1 } from '../remote/testing.js';
import type { VirtualClusterConfig } from './config.js';
import { syncVirtualCluster } from './sync.js';
import {
  agentKey,
  asObserved,
  condition,
  K3K_KUBECONFIG,
  manifestWork,
  NOW,
  REMOTE_CLUSTER,
  remoteConfig,
  remoteRelated,
  remoteResolved,
  sealedKubeconfig,
  sealingKeys,
  statusOf,
  syncRequest,
  VC_UID,
} from './testing.js';

/** Two syncs with `work`: the second sees the Secret the first rendered, as Metacontroller would. */
function sync(work: KubernetesObject, config: VirtualClusterConfig = remoteConfig()) {
  const vc = remoteResolved();
  const related = [...remoteRelated(), work];
  const first = syncVirtualCluster(syncRequest(vc, related), config, NOW);
  const observed = first.children.map((child) => asObserved(child));
  return syncVirtualCluster(syncRequest(vc, related, observed), config, NOW);
}

function published(response: CompositeSyncResponse): [string, string, string] {
  const found = condition(response, 'KubeconfigPublished');
  return [found?.status ?? '', found?.reason ?? '', found?.message ?? ''];
}

const work = (sealed: string, options: Parameters<typeof manifestWork>[0] = {}) =>
  manifestWork({ nodePort: 31234, sealed, ...options });

describe('VirtualCluster on a ManifestWork Cell: where its sealed kubeconfig comes from', () => {
  it('publishes what the agent of its ManagedCluster sealed and signed', () => {
    const response = sync(work(sealedKubeconfig()));
    expect(published(response).slice(0, 2)).to.deep.equal(['True', 'KubeconfigPublished']);
    expect(statusOf(response).phase).to.equal('Ready');
  });

  it('refuses a seal of another ManagedCluster, even signed with this cluster’s agent key', () => {
    const elsewhere = sealedKubeconfig(VC_UID, K3K_KUBECONFIG, {
      managedCluster: 'gpu-east',
      signingKey: agentKey(),
    });
    const [status, reason, message] = published(sync(work(elsewhere)));
    expect([status, reason]).to.deep.equal(['False', 'SealedKubeconfigInvalid']);
    expect(message).to.contain(
      `sealed by the cell agent of ManagedCluster "gpu-east", not of "${REMOTE_CLUSTER}"`,
    );
  });

  it('refuses a seal signed with another key than the one recorded on the work', () => {
    const intruder = generateAgentKey();
    const forged = sealedKubeconfig(VC_UID, K3K_KUBECONFIG, {
      managedCluster: REMOTE_CLUSTER,
      signingKey: intruder,
    });
    const [status, , message] = published(sync(work(forged)));
    expect(status).to.equal('False');
    expect(message).to.contain(`signed with key ${keyId(intruder)}, not with ${keyId(agentKey())}`);
  });

  it('waits for the agent’s key before it opens a signed seal, and opens a version-1 seal only until then', () => {
    const unsigned = sealVersion1(sealingKeys().publicKeyPem, VC_UID, K3K_KUBECONFIG);
    const before = sync(work(sealedKubeconfig(), { agentKey: null }));
    expect(published(before)[2]).to.contain('has not published its signing key');
    // An agent from before version 2 publishes no key: its seal opens as it did.
    expect(published(sync(work(unsigned, { agentKey: null })))[0]).to.equal('True');
    // Once the agent's key is on record, an unsigned seal is refused: no downgrade.
    const downgraded = published(sync(work(unsigned)));
    expect(downgraded.slice(0, 2)).to.deep.equal(['False', 'SealedKubeconfigInvalid']);
    expect(downgraded[2]).to.contain('envelope version 1 carries no signature');
  });
});

describe('VirtualCluster on a ManifestWork Cell: rotating the hub sealing key', () => {
  const next = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const rotating = (): VirtualClusterConfig => ({
    ...remoteConfig(),
    sealingKeys: { current: next, previous: sealingKeys().privateKey },
  });

  it('opens a kubeconfig sealed for the previous key during the rotation, and says so', () => {
    const response = sync(work(sealedKubeconfig()), rotating());
    const [status, reason, message] = published(response);
    expect([status, reason]).to.deep.equal(['True', 'KubeconfigPublished']);
    expect(message).to.contain('sealed it for the previous sealing key');
    expect(statusOf(response).phase).to.equal('Ready');
    const resealed = sealFor(publicKeyPemOf(next), VC_UID, K3K_KUBECONFIG, {
      managedCluster: REMOTE_CLUSTER,
      signingKey: agentKey(),
    });
    expect(published(sync(work(resealed), rotating()))[2]).to.not.contain('previous');
  });

  it('once the previous key is dropped, refuses what is still sealed for it, naming the key ids', () => {
    const done = { ...remoteConfig(), sealingKeys: { current: next } };
    const [status, reason, message] = published(sync(work(sealedKubeconfig()), done));
    expect([status, reason]).to.deep.equal(['False', 'SealedKubeconfigInvalid']);
    expect(message).to.contain(
      `sealed for hub key ${keyId(sealingKeys().privateKey)}, which is neither the current sealing key ${keyId(next)}`,
    );
  });
});
