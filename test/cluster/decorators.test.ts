// The two DecoratorControllers' hooks against the real apiserver. Metacontroller cannot be built
// here (the Go module proxy refuses it), so nothing drives a sync loop and this test does not
// imitate one: it reads objects with kubectl, calls the pure hook functions, and hands their
// output to the apiserver the way Metacontroller would (attachments by server-side apply, labels
// and annotations as a merge patch where null removes a key, status through the status
// subresource). What it proves is what the apiserver decides: the NetworkPolicies are valid, the
// Pod Security labels make PodSecurity admission refuse what they should, and usedBy fits the
// VirtualNodeClass status schema.
import { expect } from 'chai';
import { stringify } from 'yaml';
import { computeClassUsage, classUsageRelatedResources } from '../../hooks/class-usage/usage.js';
import { virtualCluster } from '../../hooks/class-usage/testing.js';
import type { VirtualNodeClass } from '../../hooks/generated/types/index.js';
import { DEFAULT_HOST_NAMESPACE_CONFIG } from '../../hooks/host-namespace/config.js';
import { finalizeHostNamespace, syncHostNamespace } from '../../hooks/host-namespace/hooks.js';
import type { Namespace } from '../../hooks/kube/objects.js';
import type {
  DecoratorSyncResponse,
  KubernetesObject,
} from '../../hooks/metacontroller/protocol.js';
import type { ControlPlane } from './control-plane.js';
import { installKubeCellApi, kubectlOk } from './kubecell.js';
import { listRelated } from './related-objects.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getCluster } from './shared-cluster.js';

const HOST_LABEL = { 'kubecell.io/host-namespace': 'true' };

/** A pod that asks for nothing: allowed by baseline, refused by restricted. */
function plainPod(name: string): KubernetesObject & { spec: unknown } {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      automountServiceAccountToken: false,
      containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }],
    },
  };
}

/** A privileged pod: refused by baseline. */
function privilegedPod(name: string): KubernetesObject & { spec: unknown } {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      automountServiceAccountToken: false,
      containers: [
        {
          name: 'main',
          image: 'registry.k8s.io/pause:3.10',
          securityContext: { privileged: true },
        },
      ],
    },
  };
}

describe('DecoratorController hooks against the real apiserver', function () {
  let cluster: ControlPlane;

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    cluster = await getCluster();
    await installKubeCellApi(cluster);
  });

  async function createNamespace(name: string, labels: Record<string, string>): Promise<void> {
    await kubectlOk(
      cluster,
      ['apply', '-f', '-'],
      stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } }),
    );
    // The ServiceAccount admission plugin refuses pods until the controller made `default`.
    const deadline = Date.now() + 30_000;
    while ((await cluster.kubectl(['get', 'serviceaccount', 'default', '-n', name])).code !== 0) {
      if (Date.now() > deadline) throw new Error(`no default ServiceAccount in ${name}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async function getNamespace(name: string): Promise<Namespace> {
    return JSON.parse(await kubectlOk(cluster, ['get', 'namespace', name, '-o', 'json']));
  }

  /** Labels and annotations as Metacontroller applies them: set, or removed when null. */
  async function applyMetadata(name: string, response: DecoratorSyncResponse): Promise<void> {
    await kubectlOk(cluster, [
      'patch',
      'namespace',
      name,
      '--type=merge',
      '-p',
      JSON.stringify({
        metadata: { labels: response.labels ?? {}, annotations: response.annotations ?? {} },
      }),
    ]);
  }

  async function syncAndApply(name: string): Promise<DecoratorSyncResponse> {
    const namespace = await getNamespace(name);
    const response = syncHostNamespace(
      { parent: namespace, children: {}, related: {}, finalizing: false },
      DEFAULT_HOST_NAMESPACE_CONFIG,
    );
    await applyMetadata(name, response);
    return response;
  }

  async function createPod(namespace: string, pod: KubernetesObject) {
    return cluster.kubectl(['create', '-n', namespace, '-f', '-'], { input: JSON.stringify(pod) });
  }

  it('accepts the NetworkPolicies the sync hook attaches, as rendered', async function () {
    this.timeout(60_000);
    const name = 'decorators-netpol';
    await createNamespace(name, HOST_LABEL);
    const response = syncHostNamespace(
      { parent: await getNamespace(name), children: {}, related: {}, finalizing: false },
      DEFAULT_HOST_NAMESPACE_CONFIG,
    );
    expect(response.attachments).to.have.length(4);
    await kubectlOk(
      cluster,
      ['apply', '--server-side', '--field-manager=metacontroller', '-f', '-'],
      response.attachments.map((policy) => stringify(policy)).join('---\n'),
    );
    const stored = JSON.parse(
      await kubectlOk(cluster, ['get', 'networkpolicies', '-n', name, '-o', 'json']),
    ) as { items: (KubernetesObject & { spec: unknown })[] };
    const byName = new Map(stored.items.map((item) => [item.metadata.name, item]));
    for (const policy of response.attachments as (KubernetesObject & { spec: unknown })[]) {
      const read = byName.get(policy.metadata.name);
      // Nothing dropped or defaulted: what the hook renders is what the apiserver enforces.
      expect(read?.spec, policy.metadata.name).to.deep.equal(policy.spec);
      expect(read?.metadata.labels).to.deep.equal(policy.metadata.labels);
    }

    // The other configuration (no egress CIDRs, restricted) is valid too.
    const strict = syncHostNamespace(
      { parent: await getNamespace(name), children: {}, related: {}, finalizing: false },
      { podSecurityLevel: 'restricted', egressCidrs: [] },
    );
    await kubectlOk(
      cluster,
      ['apply', '--server-side', '--dry-run=server', '--field-manager=metacontroller', '-f', '-'],
      strict.attachments.map((policy) => stringify(policy)).join('---\n'),
    );
  });

  it('a baseline host namespace refuses a privileged pod and admits a plain one', async function () {
    this.timeout(60_000);
    const name = 'decorators-psa';
    await createNamespace(name, { ...HOST_LABEL, team: 'research' });
    // Before the baseline, the cluster default (privileged) lets it in: the labels make the difference.
    const before = await createPod(name, privilegedPod('privileged-before'));
    expect(before.code, before.stderr).to.equal(0);

    const response = await syncAndApply(name);
    const labelled = await getNamespace(name);
    expect(labelled.metadata.labels).to.include({
      'pod-security.kubernetes.io/enforce': 'baseline',
      'pod-security.kubernetes.io/warn': 'baseline',
      'pod-security.kubernetes.io/audit': 'baseline',
    });
    expect(labelled.metadata.annotations).to.include({ 'kubecell.io/baseline': 'v1' });

    const refused = await createPod(name, privilegedPod('privileged'));
    expect(refused.code).to.not.equal(0);
    expect(refused.stderr).to.contain('violates PodSecurity "baseline:latest"');
    expect(refused.stderr).to.contain('privileged');
    const plain = await createPod(name, plainPod('plain'));
    expect(plain.code, plain.stderr).to.equal(0);

    // The same namespace synced again: nothing to change.
    const again = syncHostNamespace(
      { parent: await getNamespace(name), children: {}, related: {}, finalizing: false },
      DEFAULT_HOST_NAMESPACE_CONFIG,
    );
    expect(again).to.deep.equal(response);

    // The platform removes the host label: finalize takes KubeCell's labels and annotations
    // away, the platform's label stays, and admission no longer applies the baseline.
    await kubectlOk(cluster, ['label', 'namespace', name, 'kubecell.io/host-namespace-']);
    const finalized = finalizeHostNamespace({
      parent: await getNamespace(name),
      children: {},
      related: {},
      finalizing: true,
    });
    expect(finalized.finalized).to.equal(true);
    expect(finalized.attachments).to.deep.equal([]);
    await applyMetadata(name, finalized);
    const after = await getNamespace(name);
    expect(after.metadata.labels).to.deep.equal({
      'kubernetes.io/metadata.name': name,
      team: 'research',
    });
    expect(after.metadata.annotations ?? {}).to.not.have.keys(
      'kubecell.io/baseline',
      'kubecell.io/pod-security-applied',
      'kubecell.io/pod-security-kept',
    );
    const privilegedAgain = await createPod(name, privilegedPod('privileged-after'));
    expect(privilegedAgain.code, privilegedAgain.stderr).to.equal(0);
  });

  it('keeps a Pod Security label the platform set, and admission enforces that one', async function () {
    this.timeout(60_000);
    const name = 'decorators-psa-kept';
    await createNamespace(name, {
      ...HOST_LABEL,
      'pod-security.kubernetes.io/enforce': 'restricted',
    });
    const response = await syncAndApply(name);
    expect(response.labels).to.not.have.property('pod-security.kubernetes.io/enforce');
    const labelled = await getNamespace(name);
    expect(labelled.metadata.labels).to.include({
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/warn': 'baseline',
    });
    expect(labelled.metadata.annotations).to.include({
      'kubecell.io/pod-security-kept': 'enforce=restricted',
      'kubecell.io/pod-security-applied': 'audit=baseline,warn=baseline',
    });
    const refused = await createPod(name, plainPod('plain'));
    expect(refused.code).to.not.equal(0);
    expect(refused.stderr).to.contain('violates PodSecurity "restricted:latest"');

    // Finalize keeps the platform's label.
    await kubectlOk(cluster, ['label', 'namespace', name, 'kubecell.io/host-namespace-']);
    const finalized = finalizeHostNamespace({
      parent: await getNamespace(name),
      children: {},
      related: {},
      finalizing: true,
    });
    await applyMetadata(name, finalized);
    expect((await getNamespace(name)).metadata.labels).to.deep.equal({
      'kubernetes.io/metadata.name': name,
      'pod-security.kubernetes.io/enforce': 'restricted',
    });
  });

  it('usedBy from two real VirtualClusters is accepted by the status subresource', async function () {
    this.timeout(60_000);
    const className = 'decorators-small';
    await kubectlOk(
      cluster,
      ['apply', '-f', '-'],
      stringify({
        apiVersion: 'kubecell.io/v1alpha1',
        kind: 'VirtualNodeClass',
        metadata: { name: className },
        spec: {
          entitlement: { workloadHard: { 'requests.cpu': '4', 'requests.nvidia.com/gpu': '2' } },
          storageClassName: 'topolvm-provisioner',
        },
      }),
    );
    const klass = JSON.parse(
      await kubectlOk(cluster, ['get', 'virtualnodeclass', className, '-o', 'json']),
    ) as VirtualNodeClass;
    const uid = klass.metadata.uid ?? '';
    expect(uid).to.not.equal('');

    // Two resolved VirtualClusters and a Pending one, each in a host namespace of its own,
    // labelled as the mutating webhook labels them (the webhook is not installed here).
    const placements = [
      { namespace: 'decorators-usage-b', name: 'team-b', resolved: true },
      { namespace: 'decorators-usage-a', name: 'team-a', resolved: true },
      { namespace: 'decorators-usage-c', name: 'team-c', resolved: false },
    ];
    for (const { namespace, name, resolved } of placements) {
      await createNamespace(namespace, HOST_LABEL);
      const vc = virtualCluster(
        namespace,
        name,
        className,
        resolved ? { name: className, uid } : undefined,
      );
      const { status, ...object } = vc;
      delete object.metadata.uid;
      await kubectlOk(cluster, ['apply', '-f', '-'], stringify(object));
      if (status) {
        await kubectlOk(cluster, [
          'patch',
          'virtualcluster',
          name,
          '-n',
          namespace,
          '--subresource=status',
          '--type=merge',
          '-p',
          JSON.stringify({ status }),
        ]);
      }
    }

    const related = await listRelated(cluster, classUsageRelatedResources(klass));
    const status = computeClassUsage(klass, related);
    expect(status).to.deep.equal({
      usedBy: {
        count: 2,
        virtualClusters: [
          { namespace: 'decorators-usage-a', name: 'team-a' },
          { namespace: 'decorators-usage-b', name: 'team-b' },
        ],
      },
    });
    // Metacontroller replaces .status through the status subresource.
    await kubectlOk(cluster, [
      'patch',
      'virtualnodeclass',
      className,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status }),
    ]);
    const stored = JSON.parse(
      await kubectlOk(cluster, ['get', 'virtualnodeclass', className, '-o', 'json']),
    ) as VirtualNodeClass;
    expect(stored.status).to.deep.equal(status);
    expect(stored.status?.usedBy?.count).to.equal(2);
    const table = await kubectlOk(cluster, ['get', 'virtualnodeclass', className]);
    expect(table).to.match(new RegExp(`${className}\\s+topolvm-provisioner\\s+2\\s`));

    // Read back and computed again: the same status, so Metacontroller would write nothing.
    const again = computeClassUsage(
      stored,
      await listRelated(cluster, classUsageRelatedResources(stored)),
    );
    expect(JSON.stringify(again)).to.equal(JSON.stringify(status));
  });
});
