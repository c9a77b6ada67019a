// Sealed kubeconfigs of remote Cells through the real OCM (issue 23): where a seal comes from, and
// a rotation of the hub's sealing key with VirtualClusters Ready. The cell agent on `cell-remote`
// signs each seal with a key it made there, whose public half reaches the hub through its own
// work's feedback; the hub accepts only what the agent of the work's own ManagedCluster signed.
// The hub key is then rotated as docs/remote-cells.md says: the new key as
// KUBECELL_SEALING_KEY_FILE and the old one as KUBECELL_SEALING_PREVIOUS_KEY_FILE, a
// VirtualCluster created while the agent still seals for the old key, the agent getting the new
// public key and re-sealing, then the old key dropped. No VirtualCluster leaves Ready on the way.
import { expect } from 'chai';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { createPublicKey } from 'node:crypto';
import {
  AGENT_IDENTITY_CONFIGMAP,
  AGENT_NAMESPACE,
  AGENT_PUBLIC_SIGNING_KEY_KEY,
  CELL_AGENT_KEY_ANNOTATION,
  SEALED_KUBECONFIG_KEY,
  SEALING_PUBLIC_KEY_CONFIGMAP,
  SEALING_PUBLIC_KEY_KEY,
  sealedKubeconfigConfigMapName,
  virtualClusterWorkName,
} from '../../../hooks/remote/contract.js';
import { keyId, loadPrivateKey, parseAgentPublicKey } from '../../../hooks/remote/sealing-keys.js';
import { writeSealingKey } from '../../../harness/cluster/certs.js';
import { CLUSTER_SETUP_TIMEOUT_MS } from '../shared-cluster.js';
import { CELL, CELL_NAMESPACE, createHostNamespace, GPU_CLASS_QUOTA, VC } from './cell-fixtures.js';
import {
  applyRemoteCell,
  MANAGED_CLUSTER,
  managedView,
  MANIFESTWORK,
  runAgent,
  standUpRemoteWorld,
  stopRemoteWorld,
  type RemoteWorld,
} from './remote-fixtures.js';
import { virtualClusterManifest, virtualNodeClassManifest } from '../../../harness/manifests.js';
import { poll } from '../../../harness/poll.js';
import {
  apply,
  conditionOf,
  describeStatus,
  eventuallyPhase,
  getObject,
  watching,
} from './support.js';

const cell = 'gpu-rotation';
const profile = 'a100-rotation';
const klass = 'rotation-small';
/** One VirtualCluster per namespace; the third is created in the middle of the rotation. */
const VCS = [
  { namespace: 'team-rot-a', name: 'vc-a' },
  { namespace: 'team-rot-b', name: 'vc-b' },
] as const;
const LATE = { namespace: 'team-rot-c', name: 'vc-c' } as const;
const FAST_AGENT = { KUBECELL_AGENT_INTERVAL_SECONDS: '5' };

type Where = { namespace: string; name: string };

/** The envelope of the seal in the VirtualCluster's ConfigMap on the managed cluster. */
async function envelopeOn(world: RemoteWorld, vc: Where): Promise<Record<string, unknown>> {
  const configMap = await getObject(
    managedView(world),
    'configmap',
    sealedKubeconfigConfigMapName(vc.name),
    vc.namespace,
  );
  const sealed = (configMap as { data?: Record<string, string> } | undefined)?.data?.[
    SEALED_KUBECONFIG_KEY
  ];
  if (sealed === undefined) return {};
  return JSON.parse(Buffer.from(sealed, 'base64').toString('utf8')) as Record<string, unknown>;
}

/** The public signing key the agent published on the managed cluster, as text. */
async function publishedAgentKey(world: RemoteWorld): Promise<string | undefined> {
  const identity = await getObject(
    managedView(world),
    'configmap',
    AGENT_IDENTITY_CONFIGMAP,
    AGENT_NAMESPACE,
  );
  return (identity as { data?: Record<string, string> } | undefined)?.data?.[
    AGENT_PUBLIC_SIGNING_KEY_KEY
  ];
}

/** Polls every VirtualCluster given once a second, noting each time one is not Ready. */
function watchReady(world: RemoteWorld, vcs: () => readonly Where[]) {
  const seen: string[] = [];
  let polls = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const vc of vcs()) {
        const found = await getObject(world.stack, VC, vc.name, vc.namespace);
        if (found?.status?.phase !== 'Ready') seen.push(`${vc.name}: ${describeStatus(found)}`);
      }
      polls += 1;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  })();
  return {
    async stop(): Promise<{ notReady: string[]; polls: number }> {
      running = false;
      await loop;
      return { notReady: seen, polls };
    },
  };
}

describe('e2e: sealed kubeconfigs of a remote Cell: origin and a rotation of the hub key', function () {
  this.timeout(300_000);
  let world: RemoteWorld;
  let oldKeyFile: string;

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    world = await standUpRemoteWorld(profile, { agentDefaults: FAST_AGENT });
    oldKeyFile = world.sealingKeyFile;
    await applyRemoteCell(world, cell, profile);
    await runAgent(world);
    await eventuallyPhase(world.stack, CELL, cell, CELL_NAMESPACE, 'Ready', 120_000);
    await apply(world.stack, virtualNodeClassManifest(klass, GPU_CLASS_QUOTA), 'e2e-platform');
    for (const vc of VCS) {
      await createHostNamespace(world.stack, vc.namespace);
      await apply(
        world.stack,
        virtualClusterManifest(vc.namespace, vc.name, { cell: cell, klass: klass }),
      );
    }
    for (const vc of VCS) {
      await eventuallyPhase(world.stack, VC, vc.name, vc.namespace, 'Ready', 150_000);
    }
  });

  after(async function () {
    this.timeout(120_000);
    await stopRemoteWorld(world);
  });

  it("each seal names cell-remote and the hub key, signed with the key the agent published; the hub records that key on the VirtualCluster's work", async function () {
    const published = await publishedAgentKey(world);
    const agentKey = parseAgentPublicKey(published);
    expect(agentKey, 'the agent published an Ed25519 key').to.not.equal(undefined);
    const hubKey = keyId(loadPrivateKey(readFileSync(oldKeyFile, 'utf8')));
    for (const vc of VCS) {
      expect(await envelopeOn(world, vc), vc.name).to.include({
        v: 2,
        cluster: MANAGED_CLUSTER,
        kid: hubKey,
        signer: keyId(agentKey!),
      });
      const found = await getObject(world.stack, VC, vc.name, vc.namespace);
      const work = await getObject(
        world.stack,
        MANIFESTWORK,
        virtualClusterWorkName(found!.metadata.uid!),
        MANAGED_CLUSTER,
      );
      expect(work?.metadata.annotations?.[CELL_AGENT_KEY_ANNOTATION]).to.equal(published);
    }
  });

  it('rotating the hub key with VirtualClusters Ready: none leaves Ready, one made meanwhile turns Ready, all end sealed for the new key', async function () {
    const newKeyFile = path.join(path.dirname(world.sealingKeyFile), 'new-sealing-key.pem');
    writeSealingKey(newKeyFile);
    const newKey = keyId(loadPrivateKey(readFileSync(newKeyFile, 'utf8')));
    const watched: Where[] = [...VCS];
    const watch = watchReady(world, () => watched);
    // 1. The hub: the new key current, the old one previous.
    await world.stack.restartHookServer({
      KUBECELL_SEALING_KEY_FILE: newKeyFile,
      KUBECELL_SEALING_PREVIOUS_KEY_FILE: oldKeyFile,
    });
    // 2. A VirtualCluster made now: the running agent still seals for the old key.
    await createHostNamespace(world.stack, LATE.namespace);
    await apply(
      world.stack,
      virtualClusterManifest(LATE.namespace, LATE.name, { cell: cell, klass: klass }),
    );
    const late = await eventuallyPhase(
      world.stack,
      VC,
      LATE.name,
      LATE.namespace,
      'Ready',
      150_000,
    );
    expect(conditionOf(late, 'KubeconfigPublished')?.message).to.contain(
      'sealed it for the previous sealing key',
    );
    watched.push(LATE);
    // 3. The agent gets the new public key (the kubelet refreshes the mounted ConfigMap; here
    //    the agent is started again with it) and re-seals every kubeconfig for it.
    // (watching() is given the hub's stack: it checks that the current hook server runs.)
    await poll(
      'the new public key delivered to cell-remote',
      async () => {
        const map = await getObject(
          managedView(world),
          'configmap',
          SEALING_PUBLIC_KEY_CONFIGMAP,
          AGENT_NAMESPACE,
        );
        const pem = (map as { data?: Record<string, string> } | undefined)?.data?.[
          SEALING_PUBLIC_KEY_KEY
        ];
        return pem !== undefined && keyId(createPublicKey(pem)) === newKey
          ? { value: true }
          : { notYet: 'the old key' };
      },
      watching(world.stack, 120_000),
    );
    await runAgent(world);
    for (const vc of watched) {
      await poll(
        `${vc.name} sealed for the new key and published as such`,
        async () => {
          const kid = (await envelopeOn(world, vc))['kid'];
          const found = await getObject(world.stack, VC, vc.name, vc.namespace);
          const message = conditionOf(found, 'KubeconfigPublished')?.message ?? '';
          return kid === newKey && !message.includes('previous')
            ? { value: true }
            : { notYet: `kid ${String(kid)}; ${message}` };
        },
        watching(world.stack, 120_000),
      );
    }
    // 4. The rotation ends: the old key is dropped.
    await world.stack.restartHookServer({ KUBECELL_SEALING_KEY_FILE: newKeyFile });
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const { notReady, polls } = await watch.stop();
    console.log(`      ${polls} polls of ${watched.length} VirtualClusters during the rotation`);
    expect(notReady, 'seen not Ready').to.deep.equal([]);
    for (const vc of watched) {
      const found = await getObject(world.stack, VC, vc.name, vc.namespace);
      expect(conditionOf(found, 'KubeconfigPublished'), vc.name).to.include({
        status: 'True',
        reason: 'KubeconfigPublished',
      });
    }
  });
});
