// One GPUCellPool controller per provisioner (metacontroller/gpucellpool/<p>/), the label that
// selects each pool's controller, and the kinds a cluster may not serve: what the hooks answer
// when a pool reached the wrong controller, lost its label, or names a kind the apiserver does
// not serve, and how the customize hook learns which kinds are served.
import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { GPUCellPool } from '../generated/types/index.js';
import { childKey, type KubernetesObject } from '../metacontroller/protocol.js';
import { LABELS, PROVISIONER_LABEL_VALUES, type ProvisionerType } from '../kube/labels.js';
import { gpuCellPoolRelatedResources, servedRelatedResources } from './customize.js';
import { createGPUCellPoolHooks } from './hooks.js';
import type { NodeObject } from './objects.js';
import { controllerProvisioners, provisionerLabelProblem } from './provisioner.js';
import {
  discoveryServedKinds,
  servedKindsFromEnv,
  staticServedKinds,
  type ApiResourceEntry,
} from './served-kinds.js';
import { finalizeGPUCellPool, syncGPUCellPool } from './sync.js';
import {
  CONFIG,
  CONTROLLER_CHILD_TYPES,
  NOW,
  World,
  at,
  capiTemplates,
  claimTemplate,
  clusterApiPool,
  consumerNamespace,
  gpuPod,
  joinSecret,
  kubeVirtPool,
  relatedOf,
  syncRequest,
  childrenOf,
} from './testing.js';

const repo = (relative: string) => fileURLToPath(new URL(`../../${relative}`, import.meta.url));
const readYaml = (relative: string) =>
  parseAllDocuments(readFileSync(repo(relative), 'utf8')).map(
    (doc) => doc.toJS() as Record<string, unknown>,
  );

const related = () => [joinSecret(), claimTemplate(), consumerNamespace()];

function readyPool(pool: GPUCellPool, cells: string[]): World {
  const world = new World(pool, related());
  world.sync(NOW);
  for (const cell of cells) world.join(cell);
  world.sync(at(10));
  return world;
}

function ready(response: { status?: object | null }) {
  return (response.status as GPUCellPool['status'])?.conditions?.find((c) => c.type === 'Ready');
}

function withLabel(pool: GPUCellPool, value: string | undefined): GPUCellPool {
  const labels = { ...pool.metadata.labels };
  if (value === undefined) delete labels[LABELS.provisioner];
  else labels[LABELS.provisioner] = value;
  return { ...pool, metadata: { ...pool.metadata, labels } };
}

const kinds = (response: { children: KubernetesObject[] }) =>
  response.children.map((child) => `${child.kind} ${child.metadata.name}`).sort();

describe('GPUCellPool controllers per provisioner', () => {
  describe('the controller files', () => {
    const PLURAL_KINDS: Record<string, string> = {
      virtualmachines: 'VirtualMachine',
      machines: 'Machine',
      secrets: 'Secret',
      nodes: 'Node',
    };

    for (const [type, value] of Object.entries(PROVISIONER_LABEL_VALUES) as [
      ProvisionerType,
      string,
    ][]) {
      it(`metacontroller/gpucellpool/${value}/ runs the ${type} pools with the child types the hooks expect`, () => {
        const [controller] = readYaml(`metacontroller/gpucellpool/${value}/controller.yaml`) as [
          {
            metadata: { name: string };
            spec: {
              parentResource: { labelSelector: unknown };
              childResources: Array<{ apiVersion: string; resource: string }>;
            };
          },
        ];
        expect(controller.metadata.name).to.equal(`kubecell-gpucellpool-${value}`);
        expect(controller.spec.parentResource.labelSelector).to.deep.equal({
          matchLabels: { [LABELS.provisioner]: value },
        });
        const keys = controller.spec.childResources.map((child) =>
          childKey(child.apiVersion, PLURAL_KINDS[child.resource] ?? child.resource),
        );
        expect(keys.sort()).to.deep.equal([...CONTROLLER_CHILD_TYPES[type]].sort());
        const children = childrenOf([], [], type);
        expect([...controllerProvisioners(children)]).to.deep.equal([type]);
      });
    }

    it('every GPUCellPool sample carries the label of its type', () => {
      const files = readdirSync(repo('samples')).filter((file) => /^\d+-gpucellpool-/.test(file));
      expect(files.length).to.be.greaterThan(2);
      for (const file of files) {
        for (const object of readYaml(`samples/${file}`)) {
          if (object.kind !== 'GPUCellPool') continue;
          expect(provisionerLabelProblem(object as unknown as GPUCellPool), file).to.equal(
            undefined,
          );
        }
      }
    });
  });

  describe('a pool at the controller of the other provisioner', () => {
    it('keeps every child it sees, reports the label, and lets go when finalized', () => {
      const world = readyPool(kubeVirtPool({ replicas: 1 }), ['a100-0']);
      const before = structuredClone(world.status);
      world.pool = withLabel(world.pool, 'cluster-api');
      // The Cluster API controller sees the pool's Secrets and Nodes (its own child types), and
      // no VirtualMachine.
      const other = new World(world.pool, related(), 'ClusterAPI');
      other.children = new Map(world.children);
      const response = syncGPUCellPool(other.request(), CONFIG, at(20));
      expect(kinds(response)).to.deep.equal(['Node a100-0-0', 'Secret a100-0-0-user-data']);
      expect(ready(response)).to.include({
        status: 'False',
        reason: 'ProvisionerLabelMismatch',
      });
      expect(ready(response)?.message).to.include(
        'kubectl label gpucellpool a100 kubecell.io/provisioner=kubevirt --overwrite',
      );
      expect(ready(response)?.message).to.include(
        'kubectl apply -k metacontroller/gpucellpool/kubevirt',
      );
      const status = response.status as GPUCellPool['status'];
      expect(status?.cells).to.deep.equal(before.cells);
      expect(status?.conditions?.find((c) => c.type === 'BootstrapValid')).to.deep.equal(
        before.conditions?.find((c) => c.type === 'BootstrapValid'),
      );
      // Finalize (the pool deleted, or its label fixed): let go at once, deleting nothing.
      const released = finalizeGPUCellPool(other.request(true), CONFIG, at(30));
      expect(released.finalized).to.equal(true);
      expect(released.resyncAfterSeconds).to.equal(undefined);
      expect(kinds(released)).to.deep.equal(kinds(response));
    });

    it('once the label is right again, writes nothing of its own while it lets go', () => {
      const world = readyPool(kubeVirtPool({ replicas: 1 }), ['a100-0']);
      const other = new World(world.pool, related(), 'ClusterAPI');
      other.children = new Map(world.children);
      const released = finalizeGPUCellPool(other.request(true), CONFIG, at(30));
      expect(released.finalized).to.equal(true);
      expect(released.status).to.deep.equal(world.status);
    });
  });

  describe('a pool whose label is removed or changed while its controller runs it', () => {
    it('keeps every cell and child, reports the label, and keeps the finalizer', () => {
      const world = readyPool(kubeVirtPool({ replicas: 2 }), ['a100-0', 'a100-1']);
      const before = structuredClone(world.status);
      const childrenBefore = [...world.children.keys()].sort();
      world.pool = withLabel(world.pool, undefined);
      // Metacontroller calls finalize, without a deletionTimestamp (shouldCallFinalizeHook).
      const response = world.finalize(at(20));
      expect(response.finalized).to.equal(false);
      expect(response.resyncAfterSeconds).to.equal(undefined);
      expect([...world.children.keys()].sort()).to.deep.equal(childrenBefore);
      expect(world.status.cells).to.deep.equal(before.cells);
      expect(world.condition('Ready')).to.include({ reason: 'ProvisionerLabelMissing' });
      expect(world.condition('Ready')?.message).to.include(
        'kubectl label gpucellpool a100 kubecell.io/provisioner=kubevirt',
      );
      // Changed to the other provisioner's value: the same, with the mismatch.
      world.pool = withLabel(world.pool, 'cluster-api');
      world.finalize(at(30));
      expect(world.condition('Ready')).to.include({ reason: 'ProvisionerLabelMismatch' });
      expect([...world.children.keys()].sort()).to.deep.equal(childrenBefore);
      // The label back: the sync runs as before.
      world.pool = withLabel(world.pool, 'kubevirt');
      world.sync(at(40));
      expect(world.condition('Ready')).to.include({ status: 'True', reason: 'AllCellsReady' });
    });

    it('lets go without deleting anything with kubecell.io/skip-cleanup=true', () => {
      const world = readyPool(kubeVirtPool({ replicas: 1 }), ['a100-0']);
      world.pool = withLabel(world.pool, undefined);
      world.pool.metadata.annotations = { 'kubecell.io/skip-cleanup': 'true' };
      const childrenBefore = [...world.children.keys()].sort();
      const response = world.finalize(at(20));
      expect(response.finalized).to.equal(true);
      expect([...world.children.keys()].sort()).to.deep.equal(childrenBefore);
    });

    it('keeps a retiring Node cordoned and tainted while it holds', () => {
      const world = readyPool(kubeVirtPool({ replicas: 1 }), ['a100-0']);
      world.pods = [gpuPod('train', { nodeName: 'a100-0-0' })];
      world.pool.spec.replicas = 0;
      world.sync(at(20));
      expect(world.phases()).to.deep.equal({ 'a100-0': 'Retiring' });
      world.pool = withLabel(world.pool, undefined);
      const response = world.finalize(at(30));
      const held = response.children.find((child) => child.kind === 'Node') as NodeObject;
      expect(held.spec).to.deep.equal({
        unschedulable: true,
        taints: [{ key: 'kubecell.io/retiring', effect: 'NoSchedule' }],
      });
    });

    it('reports the status the other controller holding it reports, so they never fight', () => {
      const world = readyPool(kubeVirtPool({ replicas: 1 }), ['a100-0']);
      world.pool = withLabel(world.pool, 'cluster-api');
      const other = new World(world.pool, related(), 'ClusterAPI');
      other.children = new Map(world.children);
      // Same observation, same clock: the same status.
      const own = finalizeGPUCellPool(world.request(true), CONFIG, at(20));
      const theirs = syncGPUCellPool(other.request(), CONFIG, at(20));
      expect(JSON.stringify(theirs.status)).to.equal(JSON.stringify(own.status));
      // Once one has written it, the other answers it unchanged, at any time: nothing to write.
      world.apply(own);
      other.pool = world.pool;
      const later = syncGPUCellPool(other.request(), CONFIG, at(600));
      expect(JSON.stringify(later.status)).to.equal(JSON.stringify(own.status));
      const ownLater = finalizeGPUCellPool(world.request(true), CONFIG, at(900));
      expect(JSON.stringify(ownLater.status)).to.equal(JSON.stringify(own.status));
    });
  });
});

describe('GPUCellPool kinds the apiserver does not serve', () => {
  const served = staticServedKinds({
    'resource.k8s.io/v1': {
      ResourceClaim: 'resourceclaims',
      ResourceClaimTemplate: 'resourceclaimtemplates',
    },
    'bootstrap.cluster.x-k8s.io/v1beta2': {
      KubeadmConfigTemplate: 'kubeadmconfigtemplates',
      KubeadmConfig: 'kubeadmconfigs',
    },
  });

  describe('customize', () => {
    it('leaves out a kind that is not served, and names the others as discovery does', async () => {
      const rules = await servedRelatedResources(clusterApiPool(), CONFIG, served);
      expect(rules.map((rule) => `${rule.apiVersion} ${rule.resource}`)).to.deep.equal([
        'v1 pods',
        'v1 namespaces',
        'bootstrap.cluster.x-k8s.io/v1beta2 kubeadmconfigtemplates',
        'bootstrap.cluster.x-k8s.io/v1beta2 kubeadmconfigs',
      ]);
      const irregular = staticServedKinds({
        'bootstrap.cluster.x-k8s.io/v1beta2': {
          KubeadmConfigTemplate: 'kubeadmconfigtemplates-served',
          KubeadmConfig: 'kubeadmconfigs-served',
        },
        'infrastructure.cluster.x-k8s.io/v1alpha1': {
          KubevirtMachineTemplate: 'kubevirtmachinetemplates',
          KubevirtMachine: 'kubevirtmachines',
        },
      });
      const named = await servedRelatedResources(clusterApiPool(), CONFIG, irregular);
      expect(named.map((rule) => rule.resource)).to.include.members([
        'kubeadmconfigtemplates-served',
        'kubeadmconfigs-served',
      ]);
    });

    it('asks for every kind, as before, when discovery does not know', async () => {
      for (const pool of [kubeVirtPool(), clusterApiPool()]) {
        expect(await servedRelatedResources(pool, CONFIG, servedKindsFromEnv({}))).to.deep.equal(
          gpuCellPoolRelatedResources(pool, CONFIG),
        );
      }
    });

    it('leaves out the DRA claim where resource.k8s.io/v1 is not served', async () => {
      const rules = await servedRelatedResources(kubeVirtPool(), CONFIG, staticServedKinds({}));
      expect(rules.map((rule) => rule.resource)).to.deep.equal(['secrets', 'pods', 'namespaces']);
    });

    it('is what the customize hook answers', async () => {
      const hooks = createGPUCellPoolHooks({ config: CONFIG, clock: () => NOW, served });
      const answer = await hooks.customize?.({ parent: clusterApiPool() });
      expect(answer?.relatedResources).to.deep.equal(
        await servedRelatedResources(clusterApiPool(), CONFIG, served),
      );
    });
  });

  describe('sync', () => {
    const infra = [
      childKey('infrastructure.cluster.x-k8s.io/v1alpha1', 'KubevirtMachineTemplate'),
      childKey('infrastructure.cluster.x-k8s.io/v1alpha1', 'KubevirtMachine'),
    ];

    it('reports an infrastructure template kind that is not served, and creates no Machine', () => {
      const pool = clusterApiPool();
      const request = syncRequest(
        pool,
        childrenOf([], [], 'ClusterAPI'),
        relatedOf(pool, [...capiTemplates(), consumerNamespace()], infra),
      );
      const response = syncGPUCellPool(request, CONFIG, NOW);
      expect(response.children).to.deep.equal([]);
      expect(ready(response)).to.include({ status: 'False', reason: 'KindNotServed' });
      expect(ready(response)?.message).to.include(
        'kind KubevirtMachineTemplate is not served by the apiserver in ' +
          'infrastructure.cluster.x-k8s.io/v1alpha1, so the template kubecell-cells/a100-cell ' +
          '(spec.provisioner.clusterAPI.infrastructureTemplateRef) cannot be read: install the ' +
          'Cluster API provider that defines it',
      );
      const status = response.status as GPUCellPool['status'];
      expect(status?.cells?.map((cell) => cell.phase)).to.deep.equal(['Failed']);
    });

    it('reports a bootstrap template kind, or its clone kind, that is not served', () => {
      const pool = clusterApiPool();
      for (const [omitted, named] of [
        [
          childKey('bootstrap.cluster.x-k8s.io/v1beta2', 'KubeadmConfigTemplate'),
          'kind KubeadmConfigTemplate',
        ],
        [childKey('bootstrap.cluster.x-k8s.io/v1beta2', 'KubeadmConfig'), 'kind KubeadmConfig is'],
      ] as const) {
        const request = syncRequest(
          pool,
          childrenOf([], [], 'ClusterAPI'),
          relatedOf(pool, [...capiTemplates(), consumerNamespace()], [omitted]),
        );
        const response = syncGPUCellPool(request, CONFIG, NOW);
        const status = response.status as GPUCellPool['status'];
        const bootstrap = status?.conditions?.find((c) => c.type === 'BootstrapValid');
        expect(bootstrap, omitted).to.include({ status: 'False', reason: 'KindNotServed' });
        expect(bootstrap?.message, omitted).to.include(named);
        expect(ready(response), omitted).to.include({ reason: 'KindNotServed' });
        expect(response.children, omitted).to.deep.equal([]);
      }
    });

    it('reports the DRA claim kind when resource.k8s.io/v1 is not served; existing VMs stay', () => {
      const world = readyPool(kubeVirtPool({ replicas: 1 }), ['a100-0']);
      world.pool.spec.replicas = 2;
      const request = world.request();
      delete request.related[childKey('resource.k8s.io/v1', 'ResourceClaimTemplate')];
      const response = syncGPUCellPool(request, CONFIG, at(20));
      expect(ready(response)).to.include({ status: 'False', reason: 'KindNotServed' });
      expect(ready(response)?.message).to.include('from Kubernetes 1.34 on');
      expect(kinds(response)).to.deep.equal([
        'Node a100-0-0',
        'Secret a100-0-0-user-data',
        'VirtualMachine a100-0-0',
      ]);
    });
  });
});

describe('GPUCellPool served kinds from API discovery', () => {
  const resources: Record<string, ApiResourceEntry[] | undefined> = {
    'bootstrap.cluster.x-k8s.io/v1beta2': [
      { name: 'kubeadmconfigtemplates', kind: 'KubeadmConfigTemplate' },
      { name: 'kubeadmconfigs', kind: 'KubeadmConfig' },
      { name: 'kubeadmconfigs/status', kind: 'KubeadmConfig' },
    ],
  };

  it('answers served, with the plural, or not served; one request per apiVersion and TTL', async () => {
    const asked: string[] = [];
    let now = 0;
    const discovery = discoveryServedKinds(
      async (apiVersion) => {
        asked.push(apiVersion);
        return resources[apiVersion];
      },
      { ttlMs: 1000, clock: () => now },
    );
    const [a, b] = await Promise.all([
      discovery.lookup('bootstrap.cluster.x-k8s.io/v1beta2', 'KubeadmConfig'),
      discovery.lookup('bootstrap.cluster.x-k8s.io/v1beta2', 'KubeadmConfigTemplate'),
    ]);
    expect(a).to.deep.equal({ state: 'served', resource: 'kubeadmconfigs' });
    expect(b).to.deep.equal({ state: 'served', resource: 'kubeadmconfigtemplates' });
    expect(asked).to.deep.equal(['bootstrap.cluster.x-k8s.io/v1beta2']);
    await discovery.lookup('bootstrap.cluster.x-k8s.io/v1beta2', 'KubeadmConfig');
    expect(asked, 'served: from the list within the TTL').to.have.length(1);
    now = 1000;
    await discovery.lookup('bootstrap.cluster.x-k8s.io/v1beta2', 'KubeadmConfig');
    expect(asked, 'after the TTL, asked again').to.have.length(2);
    expect(
      await discovery.lookup('infrastructure.cluster.x-k8s.io/v1alpha1', 'KubevirtMachine'),
    ).to.deep.equal({ state: 'notServed' });
    expect(asked).to.have.length(3);
  });

  it('never says "not served" from an old list: a CRD installed a moment ago is seen', async () => {
    const served: Record<string, ApiResourceEntry[]> = {
      'bootstrap.cluster.x-k8s.io/v1beta2': [{ name: 'kubeadmconfigs', kind: 'KubeadmConfig' }],
    };
    let calls = 0;
    const discovery = discoveryServedKinds(async (apiVersion) => {
      calls += 1;
      const list = served[apiVersion];
      return list && [...list];
    });
    expect(
      await discovery.lookup('bootstrap.cluster.x-k8s.io/v1beta2', 'KubeadmConfig'),
    ).to.deep.include({ state: 'served' });
    // The template's CRD arrives; the list fetched above does not have it.
    served['bootstrap.cluster.x-k8s.io/v1beta2']?.push({
      name: 'kubeadmconfigtemplates',
      kind: 'KubeadmConfigTemplate',
    });
    expect(
      await discovery.lookup('bootstrap.cluster.x-k8s.io/v1beta2', 'KubeadmConfigTemplate'),
    ).to.deep.equal({ state: 'served', resource: 'kubeadmconfigtemplates' });
    expect(calls).to.equal(2);
  });

  it('does not know when discovery fails, and asks again next time', async () => {
    let calls = 0;
    const discovery = discoveryServedKinds(async () => {
      calls += 1;
      if (calls === 1) throw new Error('connect ECONNREFUSED 127.0.0.1:6443');
      return resources['bootstrap.cluster.x-k8s.io/v1beta2'];
    });
    const first = await discovery.lookup('bootstrap.cluster.x-k8s.io/v1beta2', 'KubeadmConfig');
    expect(first.state).to.equal('unknown');
    expect(first.state === 'unknown' && first.why).to.include('ECONNREFUSED');
    expect(
      await discovery.lookup('bootstrap.cluster.x-k8s.io/v1beta2', 'KubeadmConfig'),
    ).to.deep.equal({ state: 'served', resource: 'kubeadmconfigs' });
  });

  it('does not know without credentials (no KUBECONFIG, not in a Pod)', async () => {
    const lookup = await servedKindsFromEnv({}).lookup('resource.k8s.io/v1', 'ResourceClaim');
    expect(lookup.state).to.equal('unknown');
  });
});
