// The host-namespace baseline through the real Metacontroller: a user labels a namespace as a
// host namespace and checks with kubectl that it got its Pod Security labels and
// NetworkPolicies, that admission enforces them, that a hand edit is put back, and that
// removing the label takes everything KubeCell added away again.
import { expect } from 'chai';
import type { KubeCellStack } from '../../../harness/cluster/kubecell-stack.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getKubeCell } from '../shared-cluster.js';
import { poll } from '../../../harness/poll.js';
import { getObject, kubectl, listObjects, uniqueName, watching } from './support.js';

const POLICIES = [
  'kubecell-allow-api-server',
  'kubecell-allow-same-namespace',
  'kubecell-deny-ingress',
  'kubecell-egress',
];
const PSA_MODES = ['enforce', 'warn', 'audit'];

function pod(name: string, privileged: boolean): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'registry.example/app:1',
          ...(privileged ? { securityContext: { privileged: true } } : {}),
        },
      ],
    },
  });
}

describe('e2e: host-namespace baseline through Metacontroller', function () {
  this.timeout(120_000);
  let stack: KubeCellStack;
  const namespace = uniqueName('e2e-host');

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    stack = await getKubeCell();
    await kubectl(stack, ['create', 'namespace', namespace]);
    await kubectl(stack, ['label', 'namespace', namespace, 'kubecell.io/host-namespace=true']);
  });

  async function policyNames(): Promise<string[]> {
    return (await listObjects(stack, 'networkpolicies', { namespace }))
      .map((policy) => policy.metadata.name)
      .sort();
  }

  it('a labelled namespace gets the Pod Security labels and the four NetworkPolicies', async function () {
    const labels = await poll<Record<string, string>>(
      `Pod Security labels on ${namespace}`,
      async () => {
        const labels = (await getObject(stack, 'namespace', namespace))?.metadata.labels ?? {};
        return PSA_MODES.every(
          (mode) => labels[`pod-security.kubernetes.io/${mode}`] === 'baseline',
        )
          ? { value: labels }
          : { notYet: JSON.stringify(labels) };
      },
      watching(stack),
    );
    expect(labels['kubecell.io/host-namespace']).to.equal('true');
    await poll(
      `NetworkPolicies in ${namespace}`,
      async () => {
        const names = await policyNames();
        return names.join() === POLICIES.join() ? { value: names } : { notYet: names.join() };
      },
      watching(stack),
    );
    const finalizers = (await getObject(stack, 'namespace', namespace))?.metadata.finalizers;
    expect(finalizers).to.include('metacontroller.io/decoratorcontroller-kubecell-host-namespace');
  });

  it('the apiserver then refuses a privileged pod and admits a plain one', async function () {
    const privileged = await stack.cluster.kubectl(
      ['apply', '-n', namespace, '--dry-run=server', '-f', '-'],
      { input: pod('privileged', true) },
    );
    expect(privileged.code, privileged.stdout).to.not.equal(0);
    expect(privileged.stderr).to.match(/violates PodSecurity "baseline:latest".*privileged/);
    const plain = await stack.cluster.kubectl(
      ['apply', '-n', namespace, '--dry-run=server', '-f', '-'],
      { input: pod('plain', false) },
    );
    expect(plain.code, plain.stderr).to.equal(0);
  });

  it('a NetworkPolicy edited by hand is put back', async function () {
    const before = await getObject(stack, 'networkpolicy', 'kubecell-deny-ingress', namespace);
    await kubectl(stack, [
      'patch',
      'networkpolicy',
      'kubecell-deny-ingress',
      '-n',
      namespace,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { policyTypes: ['Egress'] } }),
    ]);
    await poll(
      'kubecell-deny-ingress restored',
      async () => {
        const policy = await getObject(stack, 'networkpolicy', 'kubecell-deny-ingress', namespace);
        return JSON.stringify(policy?.spec) === JSON.stringify(before?.spec)
          ? { value: true }
          : { notYet: JSON.stringify(policy?.spec) };
      },
      watching(stack),
    );
  });

  it('removing the label removes the policies, the labels KubeCell set and the finalizer', async function () {
    await kubectl(stack, ['label', 'namespace', namespace, 'kubecell.io/host-namespace-']);
    await poll(
      `${namespace} released`,
      async () => {
        const object = await getObject(stack, 'namespace', namespace);
        const names = await policyNames();
        const psa = Object.keys(object?.metadata.labels ?? {}).filter((key) =>
          key.startsWith('pod-security.kubernetes.io/'),
        );
        const finalizers = object?.metadata.finalizers ?? [];
        return names.length === 0 && psa.length === 0 && finalizers.length === 0
          ? { value: true }
          : {
              notYet: `policies ${names.join()}, labels ${psa.join()}, finalizers ${finalizers.join()}`,
            };
      },
      watching(stack),
    );
  });
});
