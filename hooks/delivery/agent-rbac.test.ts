// The cell agent's RBAC, as the hub delivers it, against the calls the agent really makes: whole
// passes of hooks/agent run against a cluster in memory holding what the works create, with the
// settings the delivered Deployment gives it, and every call is recorded. Every call must be
// allowed by the delivered Roles and ClusterRole (as the apiserver's RBAC authorizer would judge
// it), and every verb they grant on every name must be used. The remote-Cell e2e runs the same
// passes against a real managed cluster (test/cluster/e2e/remote-agent-rbac.ts).
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import {
  agentPasses,
  agentWatchAnswers,
  deniedCalls,
  grantsOf,
  recording,
  recordingWatch,
  unusedGrants,
  type Access,
} from '../../test/support/agent-rbac.js';
import { loadAgentConfig, type AgentConfig } from '../agent/config.js';
import { fakeApi, k3kKubeconfigSecret } from '../agent/testing.js';
import { NOW, gpuNode, pod, readyProvider } from '../cell/testing.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { publicKeyPemOf } from '../remote/sealing-keys.js';
import { AGENT_NAME, AGENT_NAMESPACE, AGENT_WORK_NAME } from '../remote/contract.js';
import { loadDeliveryConfig } from './config.js';
import type { ManifestWork } from '../remote/manifest-work.js';
import { syncDelivery } from './sync.js';
import { placedVirtualCluster, remoteCell, syncRequest } from './testing.js';

const hub = {
  KUBECELL_K3K_CONTROLLER: 'k3k-system/k3k',
  KUBECELL_CNI_DAEMONSET: 'kube-system/cilium',
  KUBECELL_TOPOLVM_DAEMONSET: 'topolvm-system/topolvm-node',
};
const PEM = publicKeyPemOf(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
const KUBECONFIG = 'apiVersion: v1\nkind: Config\nclusters: []\n';

/** The works for one ManifestWork Cell and two VirtualClusters, and the agent's settings. */
function delivered(): { works: ManifestWork[]; config: AgentConfig } {
  const config = { ...loadDeliveryConfig(hub), publicKeyPem: PEM };
  const vcs = [
    placedVirtualCluster().vc,
    placedVirtualCluster({ name: 'team-b', namespace: 'tenant-b', uid: 'uid-b' }).vc,
  ];
  const works = syncDelivery(syncRequest([remoteCell(), ...vcs]), config)
    .attachments as ManifestWork[];
  expect(works[0]?.metadata.name).to.equal(AGENT_WORK_NAME);
  const deployment = manifests(works).find((m) => m.kind === 'Deployment') as unknown as {
    spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } };
  };
  const env = deployment.spec.template.spec.containers[0]?.env ?? [];
  return {
    works,
    config: loadAgentConfig(Object.fromEntries(env.map(({ name, value }) => [name, value]))),
  };
}

const manifests = (works: ManifestWork[]): KubernetesObject[] =>
  works.flatMap((work) => work.spec.workload.manifests);
const roles = (works: ManifestWork[]): KubernetesObject[] =>
  manifests(works).filter((m) => m.kind === 'Role' || m.kind === 'ClusterRole');

/**
 * The managed cluster once OCM's work agent applied the works (their Namespaces and ConfigMaps:
 * what the agent reads), with a profile Node, a pod, the provider baseline and k3k's kubeconfigs.
 */
function cluster(works: ManifestWork[], kubeconfig: string): KubernetesObject[] {
  return [
    gpuNode('n1', {}, { address: '10.0.0.1' }),
    ...readyProvider(),
    pod('p1', 'kube-system', 'n1', [{ cpu: '1' }]),
    ...manifests(works).filter((m) => ['Namespace', 'ConfigMap', 'Secret'].includes(m.kind)),
    k3kKubeconfigSecret('tenant-a', 'team-a', kubeconfig),
    k3kKubeconfigSecret('tenant-b', 'team-b', kubeconfig),
  ];
}

describe("kubecell-delivery: the cell agent's RBAC is what the agent calls", function () {
  this.timeout(20_000);

  it('allows every call of whole agent passes, and grants no verb or name the agent does not use', async () => {
    const { works, config } = delivered();
    const api = fakeApi(...cluster(works, KUBECONFIG));
    const calls: Access[] = [];
    const passes = await agentPasses({
      api: recording(api, calls),
      config,
      publicKeyPem: PEM,
      now: NOW,
      betweenPasses: async () =>
        api.put(
          k3kKubeconfigSecret('tenant-a', 'team-a', `${KUBECONFIG}# rotated\n`),
          k3kKubeconfigSecret('tenant-b', 'team-b', `${KUBECONFIG}# rotated\n`),
        ),
    });
    const secrets = [
      { namespace: 'tenant-a', name: 'k3k-team-a-kubeconfig' },
      { namespace: 'tenant-b', name: 'k3k-team-b-kubeconfig' },
    ];
    const updated = { reports: { a100: 'updated' }, errors: [], secrets };
    const sealed = { 'tenant-a': 'updated', 'tenant-b': 'updated' };
    expect(passes).to.deep.equal([
      { ...updated, identity: 'updated', sealed },
      { ...updated, identity: 'unchanged', sealed },
    ]);
    // The watches the agent then keeps, recorded as the passes' calls are.
    expect(await agentWatchAnswers(recordingWatch(api.watch, calls), secrets)).to.deep.equal({
      'host Namespaces': 'open',
      'Secret tenant-a/k3k-team-a-kubeconfig': 'open',
      'Secret tenant-b/k3k-team-b-kubeconfig': 'open',
    });
    const grants = grantsOf(roles(works));
    expect(deniedCalls(calls, grants), 'calls the roles do not allow').to.deep.equal([]);
    expect(unusedGrants(calls, grants), 'granted but never used').to.deep.equal([]);
  });

  it('holds nothing cluster-wide on Secrets or ConfigMaps, creates nothing, and binds each Role', () => {
    const { works } = delivered();
    const grants = grantsOf(roles(works));
    const sensitive = grants.filter(({ rule }) =>
      rule.resources.some((resource) => resource === 'secrets' || resource === 'configmaps'),
    );
    expect(sensitive.map((grant) => grant.namespace)).to.deep.equal([
      AGENT_NAMESPACE,
      AGENT_NAMESPACE,
      AGENT_NAMESPACE,
      'tenant-a',
      'tenant-a',
      'tenant-b',
      'tenant-b',
    ]);
    for (const { rule } of sensitive) {
      expect(rule.resourceNames ?? [], 'named').to.have.length.greaterThan(0);
    }
    const verbs = grants.flatMap(({ rule }) => rule.verbs);
    expect(verbs).to.not.include.members(['create', 'delete', 'patch', '*']);
    // Watches show only what the agent may read anyway: the Namespaces it lists, the Secrets it
    // gets by name.
    const watched = grants.filter(({ rule }) => rule.verbs.includes('watch'));
    expect(
      watched.map(({ namespace, rule }) => [namespace, rule.resources, rule.resourceNames]),
    ).to.deep.equal([
      [undefined, ['namespaces'], undefined],
      ['tenant-a', ['secrets'], ['k3k-team-a-kubeconfig']],
      ['tenant-b', ['secrets'], ['k3k-team-b-kubeconfig']],
    ]);
    const cluster = grants.filter((grant) => grant.namespace === undefined);
    expect(cluster.flatMap(({ rule }) => rule.resources)).to.not.include.members([
      'secrets',
      'configmaps',
    ]);
    for (const { rule } of cluster) {
      if (rule.verbs.includes('get'))
        expect(rule.resourceNames ?? [], 'get by name').to.have.length.greaterThan(0);
    }
    for (const role of roles(works)) {
      const binding = manifests(works).find(
        (m) => m.kind === `${role.kind}Binding` && m.metadata.name === role.metadata.name,
      ) as (KubernetesObject & { subjects: unknown; roleRef: { name: string } }) | undefined;
      expect(binding?.roleRef.name, `${role.kind} ${role.metadata.name} bound`).to.equal(
        role.metadata.name,
      );
      expect(binding?.metadata.namespace).to.equal(role.metadata.namespace);
      expect(binding?.subjects).to.deep.equal([
        { kind: 'ServiceAccount', name: AGENT_NAME, namespace: AGENT_NAMESPACE },
      ]);
    }
  });
});
