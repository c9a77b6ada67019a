// The cell agent's ClusterRole, as the hub delivers it, against the calls the agent really makes:
// whole passes of hooks/agent run against a cluster in memory that records every call, with the
// settings the delivered Deployment gives it. Every call must be allowed by the role (as the
// apiserver's RBAC authorizer would judge it), and every verb the role grants must be used.
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { loadAgentConfig, type AgentConfig } from '../agent/config.js';
import type { AgentApi } from '../agent/kube-api.js';
import { runPass } from '../agent/pass.js';
import { fakeApi, type FakeApi } from '../agent/testing.js';
import { NOW, gpuNode, hostNamespace, pod, readyProvider } from '../cell/testing.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { publicKeyPemOf } from '../remote/sealing.js';
import {
  AGENT_NAMESPACE,
  AGENT_WORK_NAME,
  SEALING_PUBLIC_KEY_CONFIGMAP,
  SEALING_PUBLIC_KEY_KEY,
} from '../remote/contract.js';
import type { PolicyRule } from './agent-work.js';
import { loadDeliveryConfig } from './config.js';
import type { ManifestWork } from './manifest-work.js';
import { syncDelivery } from './sync.js';
import { remoteCell, syncRequest } from './testing.js';

/** One API call as RBAC sees it. */
interface Access {
  verb: string;
  group: string;
  resource: string;
  name?: string;
}

/** `/api/v1/...` or `/apis/<group>/<version>/...`, namespaced or not, a collection or an object. */
function accessOf(verb: string, path: string): Access {
  const segments = (path.split('?')[0] ?? '').split('/').filter((s) => s !== '');
  const [group, rest] =
    segments[0] === 'api' ? ['', segments.slice(2)] : [segments[1] ?? '', segments.slice(3)];
  const scoped = rest[0] === 'namespaces' && rest.length >= 3 ? rest.slice(2) : rest;
  const [resource = '', name] = scoped;
  return { verb, group, resource, ...(name === undefined ? {} : { name }) };
}

/** The fake apiserver, recording each call; create names the object it posts. */
function recording(api: FakeApi, calls: Access[]): AgentApi {
  return {
    list: (path) => (calls.push(accessOf('list', path)), api.list(path)),
    get: (path) => (calls.push(accessOf('get', path)), api.get(path)),
    create: (path, object) => (calls.push(accessOf('create', path)), api.create(path, object)),
    update: (path, object) => (calls.push(accessOf('update', path)), api.update(path, object)),
  };
}

/** RBAC's rule match (k8s.io/kubernetes plugin/pkg/auth/authorizer/rbac: RuleAllows). */
function allows(rule: PolicyRule, access: Access): boolean {
  const names = rule.resourceNames ?? [];
  return (
    rule.apiGroups.includes(access.group) &&
    rule.resources.includes(access.resource) &&
    rule.verbs.includes(access.verb) &&
    (names.length === 0 || (access.name !== undefined && names.includes(access.name)))
  );
}

const hub = {
  KUBECELL_K3K_CONTROLLER: 'k3k-system/k3k',
  KUBECELL_CNI_DAEMONSET: 'kube-system/cilium',
  KUBECELL_TOPOLVM_DAEMONSET: 'topolvm-system/topolvm-node',
};

/** The delivered ClusterRole's rules and the agent settings the delivered Deployment gives. */
function delivered(): { rules: PolicyRule[]; config: AgentConfig } {
  const config = loadDeliveryConfig(hub);
  const [work] = syncDelivery(syncRequest([remoteCell()]), config).attachments as ManifestWork[];
  expect(work?.metadata.name).to.equal(AGENT_WORK_NAME);
  const object = (kind: string) => work?.spec.workload.manifests.find((m) => m.kind === kind);
  const role = object('ClusterRole') as unknown as { rules: PolicyRule[] };
  const deployment = object('Deployment') as unknown as {
    spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } };
  };
  const env = deployment.spec.template.spec.containers[0]?.env ?? [];
  return {
    rules: role.rules,
    config: loadAgentConfig(Object.fromEntries(env.map(({ name, value }) => [name, value]))),
  };
}

/** A cluster with a profile Node, a pod, the provider baseline and one delivered VirtualCluster. */
function cluster(publicKeyPem: string, kubeconfig: string): KubernetesObject[] {
  const namespace = hostNamespace('tenant-a') as KubernetesObject;
  namespace.metadata.labels = {
    ...namespace.metadata.labels,
    'kubecell.io/virtualcluster-uid': 'uid-1',
  };
  namespace.metadata.annotations = { 'kubecell.io/virtualcluster': 'team-a' };
  return [
    gpuNode('n1', {}, { address: '10.0.0.1' }),
    ...readyProvider(),
    pod('p1', 'kube-system', 'n1', [{ cpu: '1' }]),
    namespace,
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'k3k-team-a-kubeconfig', namespace: 'tenant-a' },
      data: { 'kubeconfig.yaml': Buffer.from(kubeconfig).toString('base64') },
    } as KubernetesObject,
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: SEALING_PUBLIC_KEY_CONFIGMAP, namespace: AGENT_NAMESPACE },
      data: { [SEALING_PUBLIC_KEY_KEY]: publicKeyPem },
    } as KubernetesObject,
  ];
}

describe("kubecell-delivery: the cell agent's ClusterRole is what the agent calls", function () {
  this.timeout(20_000);

  it('allows every call of whole agent passes, and grants no verb the agent does not use', async () => {
    const { rules, config } = delivered();
    const pem = publicKeyPemOf(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
    const kubeconfig = 'apiVersion: v1\nkind: Config\nclusters: []\n';
    const api = fakeApi(...cluster(pem, kubeconfig));
    const calls: Access[] = [];
    const deps = { api: recording(api, calls), readFile: () => pem };
    const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
    // Creates the report and the sealed kubeconfig; the heartbeat and a new kubeconfig update
    // them; without the mounted key file the key is read from its ConfigMap.
    const first = await runPass({ ...deps, config, now: NOW });
    expect(first.errors).to.deep.equal([]);
    api.put(...cluster(pem, `${kubeconfig}# rotated\n`).filter((o) => o.kind === 'Secret'));
    const withoutFile = { ...config };
    delete withoutFile.publicKeyFile;
    const second = await runPass({ ...deps, config: withoutFile, now: at(300) });
    expect(second).to.deep.include({
      reports: { a100: 'updated' },
      sealed: { 'tenant-a': 'updated' },
      errors: [],
    });

    const denied = calls.filter((call) => !rules.some((rule) => allows(rule, call)));
    expect(denied, 'calls the role does not allow').to.deep.equal([]);
    const unused = rules.flatMap((rule) =>
      rule.apiGroups.flatMap((group) =>
        rule.resources.flatMap((resource) =>
          rule.verbs
            .filter((verb) => !calls.some((c) => allows(rule, c) && c.verb === verb))
            .map((verb) => `${verb} ${group}/${resource}`),
        ),
      ),
    );
    expect(unused, 'verbs granted but never used').to.deep.equal([]);
  });

  it('reads Secrets by name only, watches nothing, and names the baseline objects it reads', () => {
    const { rules } = delivered();
    const verbs = (resource: string) =>
      rules.filter((rule) => rule.resources.includes(resource)).flatMap((rule) => rule.verbs);
    expect(verbs('secrets')).to.deep.equal(['get']);
    expect(rules.flatMap((rule) => rule.verbs)).to.not.include.members(['watch', '*', 'delete']);
    const named = (resource: string) =>
      rules.find((rule) => rule.resources.includes(resource))?.resourceNames;
    expect(named('deployments')).to.deep.equal(['k3k']);
    expect(named('daemonsets')).to.deep.equal(['cilium', 'topolvm-node']);
    expect(named('customresourcedefinitions')).to.deep.equal([
      'clusters.k3k.io',
      'virtualclusterpolicies.k3k.io',
    ]);
    for (const rule of rules) {
      const writes = rule.verbs.filter((verb) => verb !== 'get' && verb !== 'list');
      if (writes.length > 0) expect(rule.resources, 'written').to.deep.equal(['configmaps']);
    }
  });
});
