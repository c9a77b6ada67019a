// The cell agent's public signing key, from its work's feedback onto each VirtualCluster's work
// of the same ManagedCluster (CELL_AGENT_KEY_ANNOTATION), where the VirtualCluster controller
// reads which signature it accepts (hooks/remote/sealing.ts).
import { expect } from 'chai';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { CELL_AGENT_KEY_ANNOTATION, FEEDBACK } from '../remote/contract.js';
import { agentPublicKeyText, generateAgentKey } from '../remote/sealing-keys.js';
import type { ManifestWork } from '../remote/manifest-work.js';
import { syncDelivery } from './sync.js';
import { CONFIG, observedWorks, placedVirtualCluster, remoteCell, syncRequest } from './testing.js';

const KEY = agentPublicKeyText(generateAgentKey());

/** The agent's work as observed, its identity ConfigMap feeding back `value` (a String). */
function agentWorkFeedingBack(value: unknown): KubernetesObject {
  const [rendered] = syncDelivery(syncRequest([remoteCell()]), CONFIG).attachments;
  const [observed] = observedWorks([rendered!]);
  const status = (observed as unknown as { status: { resourceStatus: { manifests: unknown[] } } })
    .status;
  status.resourceStatus.manifests = [
    {
      resourceMeta: {
        ordinal: 6,
        group: '',
        version: 'v1',
        kind: 'ConfigMap',
        resource: 'configmaps',
        name: 'kubecell-cell-agent-identity',
        namespace: 'kubecell-system',
      },
      statusFeedback: {
        values: [{ name: FEEDBACK.agentSigningKey, fieldValue: { type: 'String', string: value } }],
      },
      conditions: [],
    },
  ];
  return observed!;
}

function vcWorkAnnotations(agentWork: KubernetesObject[]): Record<string, string> | undefined {
  const { vc } = placedVirtualCluster();
  const works = syncDelivery(syncRequest([remoteCell(), vc], agentWork), CONFIG)
    .attachments as ManifestWork[];
  return works.find((work) => work.metadata.name.startsWith('kubecell-vc-'))?.metadata.annotations;
}

describe("kubecell-delivery: the cell agent's signing key on each VirtualCluster's work", () => {
  it('records the key the agent work of this ManagedCluster fed back, written anew', () => {
    expect(vcWorkAnnotations([agentWorkFeedingBack(KEY)])).to.deep.equal({
      [CELL_AGENT_KEY_ANNOTATION]: KEY,
    });
  });

  it('records none before the agent published one, or when what came back is no Ed25519 key', () => {
    expect(vcWorkAnnotations([])).to.equal(undefined);
    const rsaLike = Buffer.from('not a key').toString('base64');
    for (const value of [rsaLike, `${KEY}\n# more`, 'x'.repeat(200), 42]) {
      expect(vcWorkAnnotations([agentWorkFeedingBack(value)]), String(value)).to.equal(undefined);
    }
  });
});
