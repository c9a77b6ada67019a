// The VirtualCluster controller's output on a real apiserver. Metacontroller cannot run here (the
// Go module proxy refuses its module), so nothing calls the hooks for us and nothing is
// imitated: the test calls the sync hook itself with the objects the apiserver holds and proves
// what the apiserver can prove:
//   (a) every child the hook renders for the sample VirtualCluster passes a server-side apply
//       (the k3k Cluster against k3k's real CRD), the apiserver allocates the API NodePort, and
//       the hook reports that port once it observes the Service;
//   (b) the ResourceQuota really limits the host namespace (admission, with the quota
//       controller of kube-controller-manager filling status.hard);
//   (c) the status the hook returns is accepted by the VirtualCluster status subresource, and
//       the CRD keeps status.resolved immutable.
import { expect } from 'chai';
import type { VirtualCluster, VirtualClusterStatus } from '../../hooks/generated/types/index.js';
import type {
  CompositeSyncResponse,
  KubernetesObject,
} from '../../hooks/metacontroller/protocol.js';
import { syncVirtualCluster } from '../../hooks/virtualcluster/sync.js';
import {
  cell,
  CONFIG,
  hostNamespace,
  K3K_KUBECONFIG,
  k3kKubeconfigSecret,
  node,
  NOW,
  smallClass,
  syncRequest,
} from '../../hooks/virtualcluster/testing.js';
import type { ControlPlane } from './control-plane.js';
import { applyObject, getObject, installKubeCellApi } from './kubecell.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getCluster } from './shared-cluster.js';

const NAMESPACE = 'kubecell-vc-cluster-test';
const VC_NAME = 'team-a';
const FIELD_MANAGER = 'kubecell-virtualcluster-test';

type Json = Record<string, unknown>;

function getJson<T = Json>(cluster: ControlPlane, kind: string, name: string): Promise<T> {
  return getObject<T>(cluster, kind, name, NAMESPACE);
}

async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('VirtualCluster children on the local control plane', function () {
  let cluster: ControlPlane;
  let vc: VirtualCluster;
  let first: CompositeSyncResponse;
  /** What the hook relates, with the Namespace as the apiserver holds it. */
  let related: KubernetesObject[];

  const sync = (
    parent: VirtualCluster,
    children: KubernetesObject[],
    extra: KubernetesObject[] = [],
  ) => syncVirtualCluster(syncRequest(parent, [...related, ...extra], children), CONFIG, NOW);

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    cluster = await getCluster();
    await installKubeCellApi(cluster);
    await applyObject(cluster, hostNamespace(NAMESPACE), FIELD_MANAGER);
    await applyObject(
      cluster,
      {
        apiVersion: 'kubecell.io/v1alpha1',
        kind: 'VirtualCluster',
        metadata: {
          name: VC_NAME,
          namespace: NAMESPACE,
          labels: { 'kubecell.io/cell': 'cell1', 'kubecell.io/class': 'small' },
        },
        spec: { cellRef: { name: 'cell1' }, classRef: { name: 'small' } },
      },
      FIELD_MANAGER,
    );
    vc = await getJson<VirtualCluster>(cluster, 'virtualclusters.kubecell.io', VC_NAME);
    const namespaceObject = await getObject<KubernetesObject>(cluster, 'namespace', NAMESPACE);
    related = [
      cell(),
      smallClass(),
      namespaceObject,
      node('node-a', '10.0.12.7'),
      node('node-b', '10.0.12.8'),
    ];
    first = sync(vc, []);
  });

  after(async function () {
    this.timeout(60_000);
    if (cluster) await cluster.kubectl(['delete', 'namespace', NAMESPACE, '--wait=false']);
  });

  it('resolves the sample VirtualCluster (the fixtures make the placement feasible)', function () {
    const status = first.status as VirtualClusterStatus;
    expect(status.phase, JSON.stringify(status.conditions)).to.equal('Provisioning');
    expect(status.resolved?.hostNamespace).to.equal(NAMESPACE);
    expect(first.children.map((child) => child.kind)).to.deep.equal([
      'Cluster',
      'ResourceQuota',
      'LimitRange',
      'Service',
    ]);
  });

  it('(a) every rendered child passes a server-side apply, the k3k Cluster against the upstream CRD', async function () {
    this.timeout(60_000);
    // Each apply fails the test with the apiserver's message if it is refused.
    for (const child of first.children) await applyObject(cluster, child, FIELD_MANAGER);
    const k3k = await getJson<{ spec: Json }>(cluster, 'clusters.k3k.io', VC_NAME);
    expect(k3k.spec).to.deep.include({ mode: 'shared', servers: 1 });
    expect(k3k.spec['tlsSANs']).to.deep.equal([
      (first.status as VirtualClusterStatus).resolved?.endpointAddress,
    ]);
  });

  it('(a) the apiserver allocates the NodePort, and the hook reports it as status.endpoint.port', async function () {
    this.timeout(60_000);
    const names = first.children.map((child) => [child.kind, child.metadata.name] as const);
    const service = await getJson<{ spec: { ports: { nodePort?: number }[] } }>(
      cluster,
      'service',
      names.find(([kind]) => kind === 'Service')![1],
    );
    const nodePort = service.spec.ports[0]?.nodePort;
    expect(nodePort).to.be.a('number');
    expect(nodePort).to.be.within(30000, 32767);

    const observed: KubernetesObject[] = [];
    for (const [kind, name] of names) {
      const resource = kind === 'Cluster' ? 'clusters.k3k.io' : kind.toLowerCase();
      observed.push(await getJson<KubernetesObject>(cluster, resource, name));
    }
    const second = sync({ ...vc, status: first.status } as VirtualCluster, observed);
    const status = second.status as VirtualClusterStatus;
    expect(status.endpoint).to.deep.equal({
      address: status.resolved?.endpointAddress,
      port: nodePort,
    });
    // The Service the hook renders again is the one applied: an in-place apply keeps the port.
    await applyObject(
      cluster,
      second.children.find((child) => child.kind === 'Service')!,
      FIELD_MANAGER,
    );
    const after = await getJson<{ spec: { ports: { nodePort?: number }[] } }>(
      cluster,
      'service',
      names.find(([kind]) => kind === 'Service')![1],
    );
    expect(after.spec.ports[0]?.nodePort).to.equal(nodePort);

    // k3k's kubeconfig Secret (written by hand here: k3k does not run) is republished at the
    // NodePort endpoint, and the apiserver accepts the Secret.
    const written = k3kKubeconfigSecret(K3K_KUBECONFIG, NAMESPACE, VC_NAME);
    delete written.metadata.uid;
    await applyObject(cluster, written);
    const k3kSecret = await getJson<KubernetesObject>(
      cluster,
      'secret',
      `k3k-${VC_NAME}-kubeconfig`,
    );
    const third = sync({ ...vc, status: second.status } as VirtualCluster, observed, [k3kSecret]);
    const secret = third.children.find((child) => child.kind === 'Secret');
    expect(secret, 'the kubeconfig Secret is rendered').to.not.equal(undefined);
    await applyObject(cluster, secret!, FIELD_MANAGER);
    const stored = await getJson<{ data: Record<string, string> }>(
      cluster,
      'secret',
      secret!.metadata.name,
    );
    const text = Buffer.from(stored.data['kubeconfig.yaml'] ?? '', 'base64').toString('utf8');
    expect(text).to.equal(
      K3K_KUBECONFIG.replace(
        'https://10.43.12.34:443',
        `https://${status.resolved?.endpointAddress}:${nodePort}`,
      ),
    );
  });

  it('(b) the ResourceQuota refuses a pod asking for more nvidia.com/gpu than the entitlement', async function () {
    this.timeout(120_000);
    const quotaName = first.children.find((child) => child.kind === 'ResourceQuota')!.metadata.name;
    const hard = await eventually('the quota controller to fill status.hard', async () => {
      const quota = await getJson<{ status?: { hard?: Record<string, string> } }>(
        cluster,
        'resourcequota',
        quotaName,
      );
      return quota.status?.hard && Object.keys(quota.status.hard).length > 0
        ? quota.status.hard
        : undefined;
    });
    expect(hard['requests.nvidia.com/gpu']).to.equal('2');
    await eventually('the default ServiceAccount', async () => {
      const result = await cluster.kubectl(['get', 'serviceaccount', 'default', '-n', NAMESPACE]);
      return result.code === 0 ? true : undefined;
    });

    const pod = (name: string, resources: Json | undefined) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: NAMESPACE },
        spec: {
          containers: [
            { name: 'main', image: 'registry.example/app:1', ...(resources ? { resources } : {}) },
          ],
        },
      });
    const tooMany = await cluster.kubectl(['create', '-f', '-'], {
      input: pod('gpu-3', { limits: { 'nvidia.com/gpu': '3' } }),
    });
    expect(tooMany.code).to.not.equal(0);
    expect(tooMany.stderr).to.contain(`exceeded quota: ${quotaName}`);
    expect(tooMany.stderr).to.contain('requested: requests.nvidia.com/gpu=3');
    expect(tooMany.stderr).to.contain('limited: requests.nvidia.com/gpu=2');

    // Within the entitlement, and without any request at all (the LimitRange supplies the
    // cpu and memory requests the quota demands): admitted.
    for (const [name, resources] of [
      ['gpu-2', { limits: { 'nvidia.com/gpu': '2' } }],
      ['no-requests', undefined],
    ] as const) {
      const admitted = await cluster.kubectl(['create', '--dry-run=server', '-f', '-'], {
        input: pod(name, resources),
      });
      expect(admitted.code, `${name}: ${admitted.stderr}`).to.equal(0);
    }
  });

  it('(c) the status the hook returns is accepted by the status subresource, resolved stays immutable', async function () {
    this.timeout(60_000);
    // `replace` of the status subresource, as Metacontroller writes it: the hook's status
    // replaces .status whole.
    const replaceStatus = async (status: unknown) => {
      const current = await getJson<VirtualCluster>(
        cluster,
        'virtualclusters.kubecell.io',
        VC_NAME,
      );
      return cluster.kubectl(['replace', '--subresource=status', '-f', '-'], {
        input: JSON.stringify({ ...current, status }),
      });
    };
    const accepted = await replaceStatus(first.status);
    expect(accepted.code, accepted.stderr).to.equal(0);
    const stored = await getJson<VirtualCluster>(cluster, 'virtualclusters.kubecell.io', VC_NAME);
    expect(stored.status?.resolved).to.deep.equal((first.status as VirtualClusterStatus).resolved);
    expect(stored.status?.phase).to.equal('Provisioning');

    // The next sync reads the stored object back; its status is accepted again.
    const next = sync(stored, []);
    expect((next.status as VirtualClusterStatus).resolved).to.deep.equal(stored.status?.resolved);
    const again = await replaceStatus(next.status);
    expect(again.code, again.stderr).to.equal(0);

    // The CRD itself refuses a rewritten snapshot.
    const moved = structuredClone(next.status) as VirtualClusterStatus;
    moved.resolved!.endpointAddress = '192.0.2.1';
    const refused = await replaceStatus(moved);
    expect(refused.code).to.not.equal(0);
    expect(refused.stderr).to.contain('status.resolved is an immutable snapshot');
  });
});
