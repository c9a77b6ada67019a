// The GPUCellPool controller's output on a real apiserver. Metacontroller cannot run here (the Go
// module proxy refuses its module), and neither can KubeVirt, Cluster API or a kubelet: nothing
// calls the hooks for us and nothing is imitated. The test lists what the customize rules select
// from the apiserver, calls the pure sync function itself, and proves what the apiserver can:
//   (a) the rendered VirtualMachines (against a permissive stand-in CRD: KubeVirt publishes none)
//       and user-data Secrets pass a server-side apply, labelled as Metacontroller labels them;
//   (b) a Node the test registers with the pool's labels and the cell's firmware UUID as its
//       systemUUID is recognised as the cell's current Node, and one with a foreign systemUUID
//       is left out (so Metacontroller would delete it); the Nodes the hook returns, plain and
//       retiring, pass a server-side apply;
//   (c) the pool status the hook returns is accepted by the GPUCellPool status subresource;
//   (d) a Cluster API pool's Machine passes a server-side apply against Cluster API's real CRD,
//       and so does the KubeadmConfig cloned for it, owned by that Machine.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { GPUCellPool, GPUCellPoolStatus } from '../../hooks/generated/types/index.js';
import { DEFAULT_GPUCELLPOOL_CONFIG } from '../../hooks/gpucellpool/config.js';
import { gpuCellPoolRelatedResources } from '../../hooks/gpucellpool/customize.js';
import { CHILD_TYPES } from '../../hooks/gpucellpool/observe.js';
import type { NodeObject } from '../../hooks/gpucellpool/objects.js';
import { syncGPUCellPool } from '../../hooks/gpucellpool/sync.js';
import {
  childKey,
  objectKey,
  type CompositeSyncResponse,
  type KubernetesObject,
  type ObjectMap,
} from '../../hooks/metacontroller/protocol.js';
import type { ControlPlane } from './control-plane.js';
import { installCrds } from './crds.js';
import { applyObject, getObject, installKubeCellApi, kubectlOk, writeStatus } from './kubecell.js';
import { repoRoot } from './paths.js';
import { listRelated } from './related-objects.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getCluster } from './shared-cluster.js';

const NAMESPACE = 'kubecell-gcpool-test';
const CONSUMERS = 'kubecell-gcpool-tenant';
const FIELD_MANAGER = 'metacontroller';
const CONFIG = DEFAULT_GPUCELLPOOL_CONFIG;
const PERMISSIVE_KUBEVIRT_CRD = path.join(
  repoRoot,
  'test',
  'cluster',
  'kubevirt-permissive-crd.yaml',
);

type Json = Record<string, unknown>;

/** As Metacontroller applies a desired child: with its generated selector label. */
function labelled(child: KubernetesObject, uid: string): KubernetesObject {
  return {
    ...child,
    metadata: { ...child.metadata, labels: { ...child.metadata.labels, 'controller-uid': uid } },
  };
}

/** Every child type of the CompositeController, listed by the generated selector. */
async function listChildren(cluster: ControlPlane, uid: string): Promise<ObjectMap> {
  const map: ObjectMap = {};
  const types: [string, string][] = [
    [CHILD_TYPES.virtualMachine, 'virtualmachines.kubevirt.io'],
    [CHILD_TYPES.machine, 'machines.cluster.x-k8s.io'],
    [CHILD_TYPES.secret, 'secrets'],
    [CHILD_TYPES.node, 'nodes'],
  ];
  for (const [key, resource] of types) {
    const listed = JSON.parse(
      await kubectlOk(cluster, [
        'get',
        resource,
        '-A',
        '-l',
        `controller-uid=${uid}`,
        '-o',
        'json',
      ]),
    ) as { items: KubernetesObject[] };
    const group = (map[key] ??= {});
    for (const item of listed.items) group[objectKey(item)] = item;
  }
  return map;
}

function ofKind(response: CompositeSyncResponse, kind: string): KubernetesObject[] {
  return response.children.filter((child) => child.kind === kind);
}

/** The join Secret of samples/cell-join-secret.yaml, moved into the test namespace. */
function sampleJoinSecret(): KubernetesObject {
  const secret = parse(
    readFileSync(path.join(repoRoot, 'samples', 'cell-join-secret.yaml'), 'utf8'),
  ) as KubernetesObject;
  return { ...secret, metadata: { ...secret.metadata, namespace: NAMESPACE } };
}

async function registerNode(
  cluster: ControlPlane,
  name: string,
  labels: Record<string, string>,
  systemUUID: string,
): Promise<void> {
  await applyObject(
    cluster,
    { apiVersion: 'v1', kind: 'Node', metadata: { name, labels } },
    'kubelet',
  );
  const now = new Date().toISOString();
  await kubectlOk(cluster, [
    'patch',
    'node',
    name,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({
      status: {
        nodeInfo: {
          machineID: 'a'.repeat(32),
          systemUUID,
          bootID: 'b'.repeat(32),
          kernelVersion: '6.8.0',
          osImage: 'KubeCell cell image',
          containerRuntimeVersion: 'containerd://2.1.0',
          kubeletVersion: 'v1.35.4',
          kubeProxyVersion: '',
          operatingSystem: 'linux',
          architecture: 'amd64',
        },
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            message: 'kubelet is posting ready status',
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
        ],
      },
    }),
  ]);
}

describe('GPUCellPool children and status on the local control plane', function () {
  let cluster: ControlPlane;

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    cluster = await getCluster();
    await installKubeCellApi(cluster);
    await installCrds(cluster.kubectl, [PERMISSIVE_KUBEVIRT_CRD]);
    for (const namespace of [NAMESPACE, CONSUMERS]) {
      await applyObject(cluster, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: {
          name: namespace,
          ...(namespace === CONSUMERS ? { labels: { 'kubecell.io/host-namespace': 'true' } } : {}),
        },
      });
    }
    await applyObject(cluster, sampleJoinSecret());
    await applyObject(cluster, {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceClaimTemplate',
      metadata: { name: 'a100-vfio', namespace: NAMESPACE },
      spec: {
        spec: {
          devices: {
            requests: [{ name: 'gpu', exactly: { deviceClassName: 'vfio.gpu.example.com' } }],
          },
        },
      },
    });
  });

  describe('a KubeVirt pool (VirtualMachines against a permissive stand-in CRD, not KubeVirt’s)', function () {
    const POOL = 'gcpool-test';
    let pool: GPUCellPool;
    let first: CompositeSyncResponse;

    const sync = async (now: Date): Promise<CompositeSyncResponse> => {
      pool = await getObject<GPUCellPool>(cluster, 'gpucellpool', POOL);
      const related = await listRelated(cluster, gpuCellPoolRelatedResources(pool, CONFIG));
      const children = await listChildren(cluster, pool.metadata.uid ?? '');
      return syncGPUCellPool({ parent: pool, children, related, finalizing: false }, CONFIG, now);
    };

    before(async function () {
      this.timeout(60_000);
      await applyObject(cluster, {
        apiVersion: 'kubecell.io/v1alpha1',
        kind: 'GPUCellPool',
        metadata: { name: POOL },
        spec: {
          replicas: 2,
          machineProfile: 'gcpool-test-a100',
          namespace: NAMESPACE,
          provisioner: {
            type: 'KubeVirt',
            kubeVirt: {
              cpu: 8,
              memory: '64Gi',
              image: { containerDisk: 'registry.example/kubecell/cell:1.0' },
              networks: [
                { name: 'storage', networkAttachmentDefinition: `${NAMESPACE}/storage-net` },
              ],
            },
          },
          gpu: { resourceClaimTemplateName: 'a100-vfio' },
          bootstrap: { provider: 'Opaque', joinSecretRef: { name: 'cell-join' } },
        },
      });
    });

    it('(a) renders VMs and user-data Secrets from the sample join Secret, and they pass a server-side apply', async function () {
      this.timeout(60_000);
      first = await sync(new Date());
      const status = first.status as GPUCellPoolStatus;
      expect(status.conditions?.find((c) => c.type === 'BootstrapValid')).to.include({
        status: 'True',
        reason: 'TemplateValid',
      });
      expect(ofKind(first, 'VirtualMachine').map((vm) => vm.metadata.name)).to.deep.equal([
        `${POOL}-0-0`,
        `${POOL}-1-0`,
      ]);
      const uid = pool.metadata.uid ?? '';
      for (const child of first.children)
        await applyObject(cluster, labelled(child, uid), FIELD_MANAGER);
      await writeStatus(cluster, 'gpucellpool', POOL, undefined, first.status);
      const vm = await getObject<{ spec: Json }>(
        cluster,
        'virtualmachines.kubevirt.io',
        `${POOL}-0-0`,
        NAMESPACE,
      );
      expect(vm.spec).to.have.nested.property(
        'template.spec.domain.firmware.uuid',
        status.cells?.[0]?.systemUUID,
      );
      const secret = await getObject<{ data: Record<string, string> }>(
        cluster,
        'secret',
        `${POOL}-0-0-user-data`,
        NAMESPACE,
      );
      const userData = Buffer.from(secret.data['userdata'] ?? '', 'base64').toString('utf8');
      expect(userData).to.contain('token: "abcdef.0123456789abcdef"');
      expect(userData).to.contain(`name: ${POOL}-0-0\n`);
      expect(userData).to.contain(
        `value: controller-uid=${uid},kubecell.io/machine-profile=gcpool-test-a100,kubecell.io/pool=${POOL}\n`,
      );
      expect(userData).to.contain('bits=${subnet#*/}');
    });

    it('(b) recognises a Node with the pool labels and the cell’s systemUUID, and leaves out a foreign one', async function () {
      this.timeout(60_000);
      const uid = pool.metadata.uid ?? '';
      const cells = (first.status as GPUCellPoolStatus).cells ?? [];
      const labels = {
        'controller-uid': uid,
        'kubecell.io/pool': POOL,
        'kubecell.io/machine-profile': 'gcpool-test-a100',
      };
      await registerNode(
        cluster,
        `${POOL}-0-0`,
        labels,
        (cells[0]?.systemUUID ?? '').toUpperCase(),
      );
      await registerNode(cluster, `${POOL}-stale`, labels, '11111111-2222-4333-8444-555555555555');
      const second = await sync(new Date());
      expect(ofKind(second, 'Node')).to.deep.equal([
        { apiVersion: 'v1', kind: 'Node', metadata: { name: `${POOL}-0-0` } },
      ]);
      const status = second.status as GPUCellPoolStatus;
      expect(status.cells?.[0]).to.include({
        name: `${POOL}-0`,
        node: `${POOL}-0-0`,
        phase: 'Ready',
      });
      expect(status.cells?.[1]).to.include({ phase: 'Provisioning' });
      expect(status.readyReplicas).to.equal(1);
      for (const node of ofKind(second, 'Node'))
        await applyObject(cluster, labelled(node, uid), FIELD_MANAGER);

      // Retire the pool to zero: the Node comes back cordoned and tainted, and that applies too.
      await kubectlOk(cluster, [
        'patch',
        'gpucellpool',
        POOL,
        '--type=merge',
        '-p',
        '{"spec":{"replicas":0}}',
      ]);
      await applyObject(cluster, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'holds-the-gpu', namespace: CONSUMERS },
        spec: {
          nodeName: `${POOL}-0-0`,
          containers: [
            {
              name: 'main',
              image: 'example.invalid/cuda:12',
              resources: { limits: { 'nvidia.com/gpu': '1' } },
            },
          ],
        },
      });
      await writeStatus(cluster, 'gpucellpool', POOL, undefined, second.status);
      const third = await sync(new Date());
      expect((third.status as GPUCellPoolStatus).cells?.[0]).to.include({ phase: 'Retiring' });
      const retiring = ofKind(third, 'Node');
      expect(retiring).to.have.length(1);
      for (const node of retiring) await applyObject(cluster, labelled(node, uid), FIELD_MANAGER);
      const stored = await getObject<NodeObject>(cluster, 'node', `${POOL}-0-0`);
      expect(stored.spec?.unschedulable).to.equal(true);
      expect(stored.spec?.taints).to.deep.include({
        key: 'kubecell.io/retiring',
        effect: 'NoSchedule',
      });
      expect(
        ofKind(third, 'VirtualMachine').map((vm) => vm.metadata.name),
        'busy: the VM stays',
      ).to.deep.equal([`${POOL}-0-0`]);
    });

    it('(c) the status the hook returns is accepted by the status subresource', async function () {
      this.timeout(60_000);
      const response = await sync(new Date());
      const written = await writeStatus<GPUCellPoolStatus>(
        cluster,
        'gpucellpool',
        POOL,
        undefined,
        response.status,
      );
      const expected = response.status as GPUCellPoolStatus;
      expect(written.cells).to.deep.equal(expected.cells);
      expect(written.conditions).to.deep.equal(expected.conditions);
      expect(written).to.include({ replicas: expected.replicas, desiredReplicas: 0 });
    });
  });

  describe('a Cluster API pool (Machine and KubeadmConfig against Cluster API’s real CRDs)', function () {
    const POOL = 'gcpool-capi-test';

    it('(d) renders a Machine and, once it exists, its KubeadmConfig owned by it; both pass a server-side apply', async function () {
      this.timeout(60_000);
      await applyObject(cluster, {
        apiVersion: 'kubecell.io/v1alpha1',
        kind: 'GPUCellPool',
        metadata: { name: POOL },
        spec: {
          replicas: 1,
          machineProfile: 'gcpool-test-a100',
          namespace: NAMESPACE,
          provisioner: {
            type: 'ClusterAPI',
            clusterAPI: {
              clusterName: 'host',
              bootstrapConfigTemplateRef: {
                apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta2',
                kind: 'KubeadmConfigTemplate',
                name: 'gpu-cell',
              },
              infrastructureTemplateRef: {
                apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
                kind: 'KubevirtMachineTemplate',
                name: 'a100-cell',
              },
              version: 'v1.35.4',
            },
          },
          gpu: { resourceClaimTemplateName: 'a100-vfio' },
        },
      });
      const pool = await getObject<GPUCellPool>(cluster, 'gpucellpool', POOL);
      const uid = pool.metadata.uid ?? '';
      // The template CRDs (KubeadmConfigTemplate, KubevirtMachineTemplate) are not among the
      // upstream CRDs here, so the templates are given as the apiserver would serve them; every
      // other related object comes from the apiserver.
      const rules = gpuCellPoolRelatedResources(pool, CONFIG).filter(
        (rule) => !rule.apiVersion.includes('cluster.x-k8s.io'),
      );
      const templates: KubernetesObject[] = [
        {
          apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta2',
          kind: 'KubeadmConfigTemplate',
          metadata: { name: 'gpu-cell', namespace: NAMESPACE },
          spec: {
            template: {
              spec: {
                joinConfiguration: {
                  nodeRegistration: {
                    kubeletExtraArgs: [
                      {
                        name: 'node-labels',
                        value: `controller-uid=${uid},kubecell.io/pool=${POOL},kubecell.io/machine-profile=gcpool-test-a100`,
                      },
                    ],
                  },
                },
              },
            },
          },
        } as KubernetesObject,
        {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
          kind: 'KubevirtMachineTemplate',
          metadata: { name: 'a100-cell', namespace: NAMESPACE },
          spec: { template: { spec: {} } },
        } as KubernetesObject,
      ];
      const relatedMap = async (): Promise<ObjectMap> => {
        const map = await listRelated(cluster, rules);
        for (const template of templates) {
          (map[childKey(template.apiVersion, template.kind)] ??= {})[objectKey(template)] =
            template;
        }
        map[childKey('bootstrap.cluster.x-k8s.io/v1beta2', 'KubeadmConfig')] = {};
        map[childKey('infrastructure.cluster.x-k8s.io/v1alpha1', 'KubevirtMachine')] = {};
        return map;
      };
      const sync = async (): Promise<CompositeSyncResponse> =>
        syncGPUCellPool(
          {
            parent: await getObject<GPUCellPool>(cluster, 'gpucellpool', POOL),
            children: await listChildren(cluster, uid),
            related: await relatedMap(),
            finalizing: false,
          },
          CONFIG,
          new Date(),
        );

      const first = await sync();
      const machines = ofKind(first, 'Machine');
      expect(machines.map((machine) => machine.metadata.name)).to.deep.equal([`${POOL}-0-0`]);
      for (const machine of machines)
        await applyObject(cluster, labelled(machine, uid), FIELD_MANAGER);
      await writeStatus(cluster, 'gpucellpool', POOL, undefined, first.status);
      const stored = await getObject<{ metadata: { uid: string }; spec: Json }>(
        cluster,
        'machines.cluster.x-k8s.io',
        `${POOL}-0-0`,
        NAMESPACE,
      );
      expect(stored.spec).to.deep.include({ clusterName: 'host', version: 'v1.35.4' });

      const second = await sync();
      const config = ofKind(second, 'KubeadmConfig');
      expect(config).to.have.length(1);
      await applyObject(cluster, labelled(config[0] as KubernetesObject, uid), FIELD_MANAGER);
      const clone = await getObject<KubernetesObject>(
        cluster,
        'kubeadmconfigs.bootstrap.cluster.x-k8s.io',
        `${POOL}-0-0`,
        NAMESPACE,
      );
      expect(clone.metadata.ownerReferences).to.deep.equal([
        {
          apiVersion: 'cluster.x-k8s.io/v1beta2',
          kind: 'Machine',
          name: `${POOL}-0-0`,
          uid: stored.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      // The KubevirtMachine clone is rendered too; without Cluster API's KubeVirt provider CRD it
      // cannot be applied here.
      expect(ofKind(second, 'KubevirtMachine').map((object) => object.metadata.name)).to.deep.equal(
        [`${POOL}-0-0`],
      );
    });
  });
});
