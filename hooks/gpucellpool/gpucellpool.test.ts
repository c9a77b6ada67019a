import { expect } from 'chai';
import type { GPUCellPool } from '../generated/types/index.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { decideScale } from './autoscale.js';
import { loadGPUCellPoolConfig } from './config.js';
import { SCALING_REASONS } from './reasons.js';
import { pendingDemand, requestsGpu, targetsPool } from './consumers.js';
import { gpuCellPoolRelatedResources } from './customize.js';
import type { NodeObject, SecretObject } from './objects.js';
import { CHILD_TYPES } from './observe.js';
import { finalizeGPUCellPool, syncGPUCellPool } from './sync.js';
import {
  CONFIG,
  NAMESPACE,
  NOW,
  POOL_UID,
  TOKEN,
  World,
  at,
  capiTemplates,
  childrenOf,
  claimTemplate,
  clusterApiPool,
  consumerNamespace,
  gpuPod,
  joinSecret,
  kubeVirtPool,
  namedClaim,
  node,
  relatedOf,
  syncRequest,
  withAutoscaling,
} from './testing.js';
import { firmwareUuid, uuidV5 } from './uuid.js';

type Spec = Record<string, unknown>;
const specOf = (object: KubernetesObject | undefined) =>
  (object as unknown as { spec: Spec } | undefined)?.spec;
const related = () => [joinSecret(), claimTemplate(), consumerNamespace()];

function readyPool(pool: GPUCellPool, cells: string[]): World {
  const world = new World(pool, related());
  world.sync(NOW);
  for (const cell of cells) world.join(cell);
  world.sync(at(10));
  return world;
}

function decodedUserData(world: World, secret: string): string {
  const object = world.ofKind<SecretObject>('Secret').find((s) => s.metadata.name === secret);
  return Buffer.from(object?.data?.['userdata'] ?? '', 'base64').toString('utf8');
}

describe('GPUCellPool sync', () => {
  describe('cells, machines and Nodes', () => {
    it('creates one VM and one user-data Secret per cell, and counts a cell Ready once its Node is', () => {
      const world = new World(kubeVirtPool(), related());
      world.sync(NOW);
      expect(world.names('VirtualMachine')).to.deep.equal(['a100-0-0', 'a100-1-0']);
      expect(world.names('Secret')).to.deep.equal(['a100-0-0-user-data', 'a100-1-0-user-data']);
      expect(world.phases()).to.deep.equal({ 'a100-0': 'Provisioning', 'a100-1': 'Provisioning' });
      // CURRENT (status.replicas) counts the cells whose machine exists: none was observed yet.
      expect(world.status).to.include({ replicas: 0, readyReplicas: 0, desiredReplicas: 2 });
      expect(world.condition('Ready')).to.include({ status: 'False', reason: 'CellsNotReady' });
      world.sync(at(5));
      expect(world.status).to.include({ replicas: 2, readyReplicas: 0, desiredReplicas: 2 });

      world.join('a100-0');
      world.join('a100-1', { ready: false });
      world.sync(at(10));
      expect(world.phases()).to.deep.equal({ 'a100-0': 'Ready', 'a100-1': 'NotReady' });
      world.join('a100-1');
      world.sync(at(20));
      expect(world.status).to.include({ replicas: 2, readyReplicas: 2 });
      expect(world.condition('Ready')).to.include({ status: 'True', reason: 'AllCellsReady' });
      expect(world.status.cells?.[0]).to.include({ node: 'a100-0-0', vm: 'a100-0-0' });
    });

    it('gives each incarnation a firmware UUID derived from the pool UID, cell and incarnation', () => {
      const world = new World(kubeVirtPool(), related());
      world.sync(NOW);
      const uuid = world.status.cells?.[0]?.systemUUID;
      expect(uuid).to.equal(firmwareUuid(POOL_UID, 'a100-0', 0));
      expect(uuid).to.match(
        /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      expect(firmwareUuid(POOL_UID, 'a100-0', 1)).to.not.equal(uuid);
      const vm = world.ofKind('VirtualMachine')[0];
      expect(specOf(vm)).to.have.nested.property('template.spec.domain.firmware.uuid', uuid);
      // A restart of the hook server changes nothing: the same request gives the same answer.
      const again = syncGPUCellPool(world.request(), CONFIG, at(5));
      expect(again.children.map((child) => specOf(child))).to.deep.equal(
        world.last?.children.map((child) => specOf(child)),
      );
    });

    it('computes name-based UUIDs as RFC 9562 version 5 does', () => {
      // The RFC's own example: the DNS namespace and www.example.com.
      expect(uuidV5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com')).to.equal(
        '2ed6657d-e927-568b-95e1-2665a8aea6a2',
      );
    });

    it('renders uefi firmware as EFI without secure boot, and bios as BIOS', () => {
      const uefi = new World(kubeVirtPool(), related());
      uefi.sync(NOW);
      expect(specOf(uefi.ofKind('VirtualMachine')[0])).to.have.deep.nested.property(
        'template.spec.domain.firmware.bootloader',
        { efi: { secureBoot: false } },
      );
      const defaulted = kubeVirtPool();
      delete defaulted.spec.provisioner.kubeVirt?.firmware;
      const byDefault = new World(defaulted, related());
      byDefault.sync(NOW);
      expect(specOf(byDefault.ofKind('VirtualMachine')[0])).to.have.deep.nested.property(
        'template.spec.domain.firmware.bootloader',
        { efi: { secureBoot: false } },
      );
      const biosPool = kubeVirtPool();
      if (biosPool.spec.provisioner.kubeVirt) biosPool.spec.provisioner.kubeVirt.firmware = 'bios';
      const bios = new World(biosPool, related());
      bios.sync(NOW);
      expect(specOf(bios.ofKind('VirtualMachine')[0])).to.have.deep.nested.property(
        'template.spec.domain.firmware.bootloader',
        { bios: {} },
      );
    });

    it('attaches the GPU from a named claim or from the claim template, by its request name', () => {
      const world = new World(kubeVirtPool(), [
        joinSecret(),
        claimTemplate('vfio'),
        consumerNamespace(),
      ]);
      world.sync(NOW);
      const spec = specOf(world.ofKind('VirtualMachine')[0]);
      expect(spec).to.have.deep.nested.property('template.spec.resourceClaims', [
        { name: 'gpu', resourceClaimTemplateName: 'a100-vfio' },
      ]);
      expect(spec).to.have.deep.nested.property('template.spec.domain.devices.gpus', [
        { name: 'gpu', claimName: 'gpu', requestName: 'vfio' },
      ]);
      const single = new World(
        kubeVirtPool({ replicas: 1, gpu: { resourceClaimName: 'a100-0' } }),
        [joinSecret(), namedClaim('a100-0'), consumerNamespace()],
      );
      single.sync(NOW);
      expect(specOf(single.ofKind('VirtualMachine')[0])).to.have.deep.nested.property(
        'template.spec.resourceClaims',
        [{ name: 'gpu', resourceClaimName: 'a100-0' }],
      );
    });

    it('creates no VM while the claim is missing, and says so', () => {
      const world = new World(kubeVirtPool(), [joinSecret(), consumerNamespace()]);
      world.sync(NOW);
      expect(world.names('VirtualMachine')).to.deep.equal([]);
      expect(world.condition('Ready')).to.include({ status: 'False', reason: 'GPUClaimNotFound' });
      expect(world.phases()).to.deep.equal({ 'a100-0': 'Failed', 'a100-1': 'Failed' });
      world.sync(at(5));
      expect(world.status, 'no machine exists: CURRENT is 0').to.include({
        replicas: 0,
        readyReplicas: 0,
        desiredReplicas: 2,
      });
    });

    it('attaches Multus networks and boots from the rendered user-data Secret', () => {
      const world = new World(kubeVirtPool(), related());
      world.sync(NOW);
      const spec = specOf(world.ofKind('VirtualMachine')[0]);
      expect(spec).to.have.deep.nested.property('template.spec.networks', [
        { name: 'default', pod: {} },
        { name: 'storage', multus: { networkName: `${NAMESPACE}/storage-net` } },
      ]);
      expect(spec).to.have.deep.nested.property('template.spec.domain.devices.interfaces', [
        { name: 'default', masquerade: {} },
        { name: 'storage', bridge: {} },
      ]);
      expect(spec).to.have.deep.nested.property('template.spec.volumes[1]', {
        name: 'cloudinitdisk',
        cloudInitNoCloud: { secretRef: { name: 'a100-0-0-user-data' } },
      });
      expect(spec).to.have.property('runStrategy', 'Always');
    });
  });

  describe('stale Nodes', () => {
    it('reaps the Node of an earlier incarnation and keeps the current one; no phantom Ready cell', () => {
      const world = readyPool(kubeVirtPool({ replicas: 1 }), ['a100-0']);
      expect(world.phases()).to.deep.equal({ 'a100-0': 'Ready' });
      // The VM disappears (deleted by hand); its Node is still there and still says Ready.
      world.remove('VirtualMachine', 'a100-0-0');
      world.sync(at(20));
      expect(world.status.cells?.[0]).to.include({ vm: 'a100-0-1', phase: 'Provisioning' });
      expect(world.status.cells?.[0]?.systemUUID).to.equal(firmwareUuid(POOL_UID, 'a100-0', 1));
      expect(world.status.readyReplicas).to.equal(0);
      expect(world.names('VirtualMachine')).to.deep.equal(['a100-0-1']);
      expect(world.names('Node'), 'the earlier incarnation Node is left out').to.deep.equal([]);
      world.join('a100-0');
      world.sync(at(30));
      expect(world.names('Node')).to.deep.equal(['a100-0-1']);
      expect(world.phases()).to.deep.equal({ 'a100-0': 'Ready' });
    });

    it('compares systemUUIDs case-insensitively, and omits a Node with a foreign systemUUID', () => {
      const world = readyPool(kubeVirtPool({ replicas: 1 }), ['a100-0']);
      const uuid = world.status.cells?.[0]?.systemUUID ?? '';
      world.addNode(node('impostor', '11111111-2222-4333-8444-555555555555'));
      world.addNode(node('late', undefined));
      const response = world.sync(at(30));
      const nodes = response.children.filter((child) => child.kind === 'Node');
      expect(nodes.map((n) => n.metadata.name)).to.deep.equal(['a100-0-0', 'late']);
      expect(world.ofKind<NodeObject>('Node')[0]?.status?.nodeInfo?.systemUUID).to.equal(
        uuid.toUpperCase(),
      );
      expect(world.status.readyReplicas).to.equal(1);
    });

    it('takes the Node named like the machine when several report the same systemUUID, and reaps the others', () => {
      const world = new World(kubeVirtPool({ replicas: 1 }), related());
      world.sync(NOW);
      const uuid = world.status.cells?.[0]?.systemUUID ?? '';
      // Registered before the cell's own Node, under another name (sorting first), with its UUID.
      const earlier = node('a-registered-before', uuid);
      earlier.metadata.creationTimestamp = '2026-11-30T12:00:01Z';
      world.addNode(earlier);
      world.sync(at(5));
      expect(world.status.cells?.[0]).to.include({ node: 'a-registered-before', phase: 'Ready' });
      const own = world.join('a100-0');
      own.metadata.creationTimestamp = '2026-11-30T12:00:10Z';
      const response = world.sync(at(10));
      expect(world.status.cells?.[0]).to.include({ node: 'a100-0-0', phase: 'Ready' });
      expect(
        response.children.filter((child) => child.kind === 'Node').map((n) => n.metadata.name),
      ).to.deep.equal(['a100-0-0']);
      // Without a Node named like the machine, the newest registration is the current one.
      const other = new World(kubeVirtPool({ replicas: 1 }), related());
      other.sync(NOW);
      const otherUuid = other.status.cells?.[0]?.systemUUID ?? '';
      const old = node('b-old', otherUuid);
      old.metadata.creationTimestamp = '2026-11-30T12:00:01Z';
      const renamed = node('c-renamed', otherUuid);
      renamed.metadata.creationTimestamp = '2026-11-30T12:05:00Z';
      other.addNode(old);
      other.addNode(renamed);
      other.sync(at(400));
      expect(other.status.cells?.[0]).to.include({ node: 'c-renamed' });
      expect(other.names('Node')).to.deep.equal(['c-renamed']);
    });

    it('returns current Nodes by identity only, never the kubelet-owned fields', () => {
      const world = readyPool(kubeVirtPool({ replicas: 1 }), ['a100-0']);
      const nodes = world.last?.children.filter((child) => child.kind === 'Node');
      expect(nodes).to.deep.equal([
        { apiVersion: 'v1', kind: 'Node', metadata: { name: 'a100-0-0' } },
      ]);
    });
  });

  describe('retirement', () => {
    it('retires a busy cell only after its consumer pods end, VM first, then the Node', () => {
      const pool = kubeVirtPool({ replicas: 1 });
      const world = readyPool(pool, ['a100-0']);
      world.pods = [gpuPod('train', { nodeName: 'a100-0-0' })];
      world.sync(at(20));
      world.pool.spec.replicas = 0;
      const retiring = world.sync(at(30));
      expect(world.phases()).to.deep.equal({ 'a100-0': 'Retiring' });
      expect(world.names('VirtualMachine')).to.deep.equal(['a100-0-0']);
      const tainted = retiring.children.find((child) => child.kind === 'Node');
      expect(specOf(tainted)).to.deep.equal({
        unschedulable: true,
        taints: [{ key: 'kubecell.io/retiring', effect: 'NoSchedule' }],
      });
      // Still busy later: nothing moves, nothing is evicted.
      world.sync(at(3600));
      expect(world.phases()).to.deep.equal({ 'a100-0': 'Retiring' });
      expect(world.last?.children.map((child) => child.kind)).to.not.include('Eviction');
      // The pod ends: the VM is left out (deleted), the Node stays cordoned until the VM is gone.
      world.pods = [gpuPod('train', { nodeName: 'a100-0-0', phase: 'Succeeded' })];
      world.sync(at(3700));
      expect(world.phases()).to.deep.equal({ 'a100-0': 'Deleting' });
      expect(world.names('VirtualMachine')).to.deep.equal([]);
      expect(world.names('Secret')).to.deep.equal([]);
      expect(world.names('Node')).to.deep.equal(['a100-0-0']);
      world.sync(at(3710));
      expect(world.names('Node')).to.deep.equal([]);
      expect(world.phases()).to.deep.equal({ 'a100-0': 'Deleting' });
      world.sync(at(3720));
      expect(world.status.cells).to.deep.equal([]);
      expect(world.status).to.include({ replicas: 0, desiredReplicas: 0 });
    });

    it('cordons an idle cell before deleting its VM, and keeps it when a pod turns up meanwhile', () => {
      const world = readyPool(kubeVirtPool({ replicas: 1 }), ['a100-0']);
      world.pool.spec.replicas = 0;
      const first = world.sync(at(20));
      expect(world.phases()).to.deep.equal({ 'a100-0': 'Retiring' });
      expect(world.names('VirtualMachine')).to.deep.equal(['a100-0-0']);
      expect(specOf(first.children.find((child) => child.kind === 'Node'))).to.deep.include({
        unschedulable: true,
      });
      // A pod bound before the cordon, which the pod cache did not show in the last sync.
      world.pods = [gpuPod('late', { nodeName: 'a100-0-0' })];
      world.sync(at(30));
      expect(world.phases()).to.deep.equal({ 'a100-0': 'Retiring' });
      expect(world.names('VirtualMachine')).to.deep.equal(['a100-0-0']);
      world.pods = [];
      world.sync(at(40));
      expect(world.phases()).to.deep.equal({ 'a100-0': 'Deleting' });
      expect(world.names('VirtualMachine')).to.deep.equal([]);
    });

    it('deletes the machine of a retired cell that has no Node at once: nothing to cordon', () => {
      const world = new World(kubeVirtPool({ replicas: 1 }), related());
      world.sync(NOW);
      world.sync(at(5));
      expect(world.names('VirtualMachine')).to.deep.equal(['a100-0-0']);
      world.pool.spec.replicas = 0;
      world.sync(at(10));
      expect(world.names('VirtualMachine')).to.deep.equal([]);
    });

    it('keeps existing taints on a retiring Node and adds its own once', () => {
      const world = readyPool(kubeVirtPool({ replicas: 1 }), ['a100-0']);
      const existing = world.ofKind<NodeObject>('Node')[0] as NodeObject;
      existing.spec = { taints: [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }] };
      world.pods = [gpuPod('train', { nodeName: 'a100-0-0' })];
      world.pool.spec.replicas = 0;
      world.sync(at(20));
      const again = world.sync(at(30));
      expect(specOf(again.children.find((child) => child.kind === 'Node'))).to.deep.equal({
        unschedulable: true,
        taints: [
          { key: 'nvidia.com/gpu', effect: 'NoSchedule' },
          { key: 'kubecell.io/retiring', effect: 'NoSchedule' },
        ],
      });
    });

    it('waits while pods are not observed, instead of assuming the GPU is free', () => {
      const world = readyPool(kubeVirtPool({ replicas: 1 }), ['a100-0']);
      world.pool.spec.replicas = 0;
      const request = world.request();
      delete request.related['Pod.v1'];
      const response = syncGPUCellPool(request, CONFIG, at(20));
      expect(response.children.map((child) => child.kind).sort()).to.deep.equal([
        'Node',
        'Secret',
        'VirtualMachine',
      ]);
    });
  });

  describe('autoscaling', () => {
    it('scales 0 → 2 on pending GPU demand and back to 1, retiring the idle cell', () => {
      const pool = withAutoscaling(kubeVirtPool({ replicas: 0 }), {
        minReplicas: 0,
        maxReplicas: 2,
        scaleDownDelaySeconds: 600,
      });
      const world = new World(pool, related());
      world.sync(NOW);
      expect(world.status.desiredReplicas).to.equal(0);
      expect(world.condition('ScalingActive')).to.include({ reason: 'DemandMet' });

      world.pods = [gpuPod('p1')];
      world.sync(at(1));
      expect(world.condition('ScalingActive')).to.include({ status: 'True', reason: 'ScalingUp' });
      expect(world.status.desiredReplicas).to.equal(1);
      world.sync(at(2));
      expect(world.condition('ScalingActive')).to.include({ reason: 'WaitingForCells' });
      world.join('a100-0');
      world.pods = [gpuPod('p1', { nodeName: 'a100-0-0' }), gpuPod('p2')];
      world.sync(at(60));
      expect(world.status.desiredReplicas).to.equal(2);
      world.join('a100-1');
      world.pods = [gpuPod('p1', { nodeName: 'a100-0-0' }), gpuPod('p2', { nodeName: 'a100-1-0' })];
      world.sync(at(120));
      expect(world.status).to.include({ desiredReplicas: 2, readyReplicas: 2 });
      expect(world.condition('ScalingActive')).to.include({ reason: 'DemandMet' });

      // p1 ends: cell a100-0 (the older one) is idle, a100-1 still busy.
      world.pods = [gpuPod('p2', { nodeName: 'a100-1-0' })];
      world.sync(at(200));
      expect(world.condition('ScalingActive')).to.include({ reason: 'WaitingForScaleDownDelay' });
      expect(world.last?.resyncAfterSeconds).to.equal(600);
      world.sync(at(500));
      expect(world.last?.resyncAfterSeconds).to.equal(300);
      world.sync(at(800));
      expect(world.condition('ScalingActive')).to.include({ reason: 'ScalingDown' });
      expect(world.status.desiredReplicas).to.equal(1);
      // Idle, but cordoned first: the VM goes once the Node is seen cordoned and tainted.
      expect(world.phases()).to.deep.equal({ 'a100-0': 'Retiring', 'a100-1': 'Ready' });
      expect(world.names('VirtualMachine')).to.deep.equal(['a100-0-0', 'a100-1-0']);
      world.sync(at(805));
      expect(world.phases()).to.deep.equal({ 'a100-0': 'Deleting', 'a100-1': 'Ready' });
      world.sync(at(810));
      world.sync(at(820));
      expect(world.names('VirtualMachine')).to.deep.equal(['a100-1-0']);
      expect(world.names('Node')).to.deep.equal(['a100-1-0']);
      expect(world.status).to.include({ replicas: 1, readyReplicas: 1, desiredReplicas: 1 });
    });

    it('reaches every ScalingActive reason', () => {
      const seen = new Set<string>();
      const cell = (name: string, ordinal: number, ready: boolean, idleSince?: Date) => ({
        name,
        ordinal,
        ready,
        ...(idleSince ? { idleSince } : {}),
      });
      const base = { minReplicas: 1, maxReplicas: 3, scaleDownDelaySeconds: 600, now: NOW };
      const note = (reason: string) => seen.add(reason);
      note(decideScale({ ...base, previous: 1, cells: [cell('a', 0, true)] }).reason); // DemandNotObserved
      note(
        decideScale({ ...base, previous: 1, cells: [cell('a', 0, true)], pending: ['x/p'] }).reason,
      );
      note(
        decideScale({ ...base, previous: 2, cells: [cell('a', 0, false)], pending: ['x/p'] })
          .reason,
      );
      note(
        decideScale({ ...base, previous: 3, cells: [cell('a', 0, true)], pending: ['x/p'] }).reason,
      );
      note(
        decideScale({ ...base, previous: 2, cells: [cell('a', 0, true, at(-601))], pending: [] })
          .reason,
      );
      note(
        decideScale({ ...base, previous: 1, cells: [cell('a', 0, true, at(-601))], pending: [] })
          .reason,
      );
      note(
        decideScale({ ...base, previous: 1, cells: [cell('a', 0, true, at(-5))], pending: [] })
          .reason,
      );
      note(decideScale({ ...base, previous: 1, cells: [cell('a', 0, true)], pending: [] }).reason);
      // AutoscalingDisabled comes from the sync itself.
      const world = new World(kubeVirtPool(), related());
      world.sync(NOW);
      note(world.condition('ScalingActive')?.reason ?? '');
      expect([...seen].sort()).to.deep.equal(Object.values(SCALING_REASONS).sort());
    });

    it('scales down newest idle cell first, never below minReplicas', () => {
      const decision = decideScale({
        minReplicas: 1,
        maxReplicas: 4,
        scaleDownDelaySeconds: 60,
        previous: 3,
        cells: [
          { name: 'a100-0', ordinal: 0, ready: true, idleSince: at(-100) },
          { name: 'a100-1', ordinal: 1, ready: true, idleSince: at(-100) },
          { name: 'a100-2', ordinal: 2, ready: true, idleSince: at(-100) },
        ],
        pending: [],
        now: NOW,
      });
      expect(decision).to.include({ desired: 1, reason: 'ScalingDown' });
      expect(decision.retire).to.deep.equal(['a100-2', 'a100-1']);
    });

    it('holds the size when Metacontroller delivered no pods', () => {
      const pool = withAutoscaling(kubeVirtPool({ replicas: 1 }), { maxReplicas: 3 });
      const world = new World(pool, related());
      const request = world.request();
      delete request.related['Pod.v1'];
      const response = syncGPUCellPool(request, CONFIG, NOW);
      const status = response.status as GPUCellPool['status'];
      expect(status?.desiredReplicas).to.equal(1);
      expect(status?.conditions?.find((c) => c.type === 'ScalingActive')).to.include({
        status: 'False',
        reason: 'DemandNotObserved',
      });
    });
  });

  describe('consumer pods', () => {
    it('counts only unschedulable GPU pods of consumer namespaces that target the pool', () => {
      const pods = [
        gpuPod('yes'),
        gpuPod('by-pool-label', { nodeSelector: { 'kubecell.io/pool': 'a100' } }),
        gpuPod('other-profile', { nodeSelector: { 'kubecell.io/machine-profile': 'h100' } }),
        gpuPod('not-tried-yet', { unschedulable: false }),
        gpuPod('no-gpu', { gpu: '0' }),
        gpuPod('bound', { nodeName: 'n1' }),
      ];
      expect(pendingDemand(pods, 'nvidia.com/gpu', 'a100', 'a100')).to.deep.equal([
        'tenant-a/by-pool-label',
        'tenant-a/yes',
      ]);
      const affinity = gpuPod('affinity', { nodeSelector: {} });
      expect(targetsPool(affinity, 'a100', 'a100')).to.equal(false);
      affinity.spec = {
        ...affinity.spec,
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                {
                  matchExpressions: [
                    {
                      key: 'kubecell.io/machine-profile',
                      operator: 'In',
                      values: ['h100', 'a100'],
                    },
                  ],
                },
              ],
            },
          },
        },
      };
      expect(targetsPool(affinity, 'a100', 'a100')).to.equal(true);
      expect(requestsGpu(gpuPod('limits-only'), 'nvidia.com/gpu')).to.equal(true);
    });

    it('ignores pods outside the consumer namespaces', () => {
      const pool = withAutoscaling(kubeVirtPool({ replicas: 0 }), {
        minReplicas: 0,
        maxReplicas: 2,
      });
      const world = new World(pool, related());
      world.pods = [gpuPod('elsewhere', { namespace: 'kube-system' })];
      world.sync(NOW);
      expect(world.status.desiredReplicas).to.equal(0);
    });
  });

  describe('bootstrap', () => {
    it('renders the template per cell, with the token quoted and the node labels', () => {
      const world = new World(kubeVirtPool(), related());
      world.sync(NOW);
      const userData = decodedUserData(world, 'a100-1-0-user-data');
      expect(userData).to.contain('hostname: a100-1-0\n');
      expect(userData).to.contain(`TOKEN="${TOKEN}"\n`);
      expect(userData).to.contain(
        `NODE_LABELS=controller-uid=${POOL_UID},kubecell.io/machine-profile=a100,kubecell.io/pool=a100\n`,
      );
      expect(userData).to.contain(
        'ssh_authorized_keys: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKubeCellOps ops@example"]\n',
      );
      expect(userData).to.contain('POOL=a100 CELL=a100-1 PROFILE=a100\n');
      expect(userData).to.contain('LITERAL=${HOME}\n');
      expect(userData).to.contain('NODE_SUBNET=10.0.12.0/24\n');
    });

    it('blocks VM creation on an unknown variable, naming it, and keeps existing children', () => {
      const world = readyPool(kubeVirtPool({ replicas: 1 }), ['a100-0']);
      const before = world.names('VirtualMachine');
      world.related = [
        joinSecret('#cloud-config\nhostname: ${NODE_NAME}\nrunc: ${RUNC_VERSION}\n'),
        claimTemplate(),
        consumerNamespace(),
      ];
      world.pool.spec.replicas = 2;
      world.sync(at(30));
      expect(world.condition('BootstrapValid')).to.include({
        status: 'False',
        reason: 'UnknownVariable',
      });
      expect(world.condition('BootstrapValid')?.message).to.contain('${RUNC_VERSION}');
      expect(world.condition('Ready')).to.include({ status: 'False', reason: 'BootstrapInvalid' });
      expect(world.names('VirtualMachine')).to.deep.equal(before);
      expect(world.names('Secret')).to.deep.equal(['a100-0-0-user-data']);
      expect(world.phases()).to.deep.equal({ 'a100-0': 'Ready', 'a100-1': 'Failed' });
      // The Secret kept as it was rendered before.
      expect(decodedUserData(world, 'a100-0-0-user-data')).to.contain(`TOKEN="${TOKEN}"`);
    });

    it('names a missing key, or a missing Secret, and creates no VM', () => {
      const missingKey = new World(kubeVirtPool(), [
        joinSecret(undefined, { token: undefined }),
        claimTemplate(),
        consumerNamespace(),
      ]);
      missingKey.sync(NOW);
      expect(missingKey.condition('BootstrapValid')).to.include({
        status: 'False',
        reason: 'JoinSecretKeyMissing',
      });
      expect(missingKey.condition('BootstrapValid')?.message).to.contain('lacks key token');
      expect(missingKey.names('VirtualMachine')).to.deep.equal([]);

      const noSecret = new World(kubeVirtPool(), [claimTemplate(), consumerNamespace()]);
      noSecret.sync(NOW);
      expect(noSecret.condition('BootstrapValid')).to.include({
        status: 'False',
        reason: 'JoinSecretNotFound',
      });
      expect(noSecret.condition('BootstrapValid')?.message).to.contain('kubecell-cells/cell-join');
      expect(noSecret.names('VirtualMachine')).to.deep.equal([]);

      const twoLines = new World(kubeVirtPool(), [
        joinSecret(undefined, { apiServer: '10.0.0.10:6443\nevil: true' }),
        claimTemplate(),
        consumerNamespace(),
      ]);
      twoLines.sync(NOW);
      expect(twoLines.condition('BootstrapValid')).to.include({
        reason: 'JoinSecretValueInvalid',
      });
    });

    it('never puts the join token into status', () => {
      const world = new World(kubeVirtPool(), related());
      world.sync(NOW);
      expect(JSON.stringify(world.status)).to.not.contain(TOKEN);
      const broken = new World(kubeVirtPool(), [
        joinSecret('token: ${JOIN_TOKEN} ${OOPS}'),
        claimTemplate(),
        consumerNamespace(),
      ]);
      broken.sync(NOW);
      expect(JSON.stringify(broken.status)).to.not.contain(TOKEN);
    });
  });

  describe('Cluster API', () => {
    it('creates a Machine per cell with the clones of the templates, owned by the pool but not controlled', () => {
      const pool = clusterApiPool();
      const world = new World(pool, [...capiTemplates(), consumerNamespace()]);
      const first = world.sync(NOW);
      expect(world.names('Machine')).to.deep.equal(['a100-capi-0-0']);
      expect(world.names('Secret'), 'no user-data: Cluster API bootstraps').to.deep.equal([]);
      expect(world.condition('BootstrapValid')).to.include({ reason: 'ClusterAPIBootstrap' });
      const clones = first.children.filter((child) =>
        ['KubeadmConfig', 'KubevirtMachine'].includes(child.kind),
      );
      expect(clones.map((clone) => `${clone.kind}/${clone.metadata.name}`)).to.deep.equal([
        'KubeadmConfig/a100-capi-0-0',
        'KubevirtMachine/a100-capi-0-0',
      ]);
      // The pool's UID among the ownerReferences keeps Metacontroller from adding itself as
      // controller (claimOwnership); no controller at all lets Cluster API's Machine controller
      // become it (controllerutil.SetControllerReference refuses a second controller).
      for (const clone of clones) {
        expect(clone.metadata.ownerReferences).to.deep.equal([
          {
            apiVersion: 'kubecell.io/v1alpha1',
            kind: 'GPUCellPool',
            name: 'a100-capi',
            uid: POOL_UID,
            controller: false,
          },
        ]);
      }
      // The KubeadmConfig registers the Node with the pool's labels, the template's kept.
      expect(specOf(clones[0])).to.have.deep.nested.property(
        'joinConfiguration.nodeRegistration.kubeletExtraArgs',
        [
          {
            name: 'node-labels',
            value: `controller-uid=${POOL_UID},kubecell.io/machine-profile=a100,kubecell.io/pool=a100-capi`,
          },
        ],
      );
      // Once seen (Cluster API's from then on), they are not rendered again.
      world.related.push(...clones.map((clone) => structuredClone(clone)));
      const second = world.sync(at(10));
      expect(second.children.map((child) => child.kind).sort()).to.deep.equal(['Machine']);
    });

    it('gives an existing Machine its missing clones, but never a Machine being deleted', () => {
      const world = new World(clusterApiPool(), [...capiTemplates(), consumerNamespace()]);
      world.sync(NOW);
      // The clones were refused before (a pool made while they were rendered as controlled by
      // the Machine and Metacontroller added itself as a second controller): they come now.
      const again = world.sync(at(5));
      expect(again.children.map((child) => child.kind).sort()).to.deep.equal([
        'KubeadmConfig',
        'KubevirtMachine',
        'Machine',
      ]);
      const machine = world.ofKind('Machine')[0] as KubernetesObject;
      machine.metadata.deletionTimestamp = '2026-11-30T12:00:20Z';
      const deleting = world.sync(at(20));
      expect(deleting.children.map((child) => child.kind)).to.not.include('KubeadmConfig');
      expect(deleting.children.map((child) => child.kind)).to.not.include('KubevirtMachine');
    });

    it('merges the pool labels into a node-labels the template writes, in either kubeadm form', () => {
      const labels = `controller-uid=${POOL_UID},kubecell.io/machine-profile=a100,kubecell.io/pool=a100-capi`;
      const cases: [string, unknown, unknown][] = [
        // v1beta2 list form, the template's own label kept first, a wrong pool label replaced
        [
          'bootstrap.cluster.x-k8s.io/v1beta2',
          [
            { name: 'cloud-provider', value: 'external' },
            { name: 'node-labels', value: 'example.com/gpu=a100,kubecell.io/pool=wrong' },
          ],
          [
            { name: 'cloud-provider', value: 'external' },
            { name: 'node-labels', value: `example.com/gpu=a100,${labels}` },
          ],
        ],
        // v1beta1 map form
        [
          'bootstrap.cluster.x-k8s.io/v1beta1',
          { 'cloud-provider': 'external' },
          { 'cloud-provider': 'external', 'node-labels': labels },
        ],
        // none written: the form of the apiVersion
        ['bootstrap.cluster.x-k8s.io/v1beta1', undefined, { 'node-labels': labels }],
        ['bootstrap.cluster.x-k8s.io/v1beta2', undefined, [{ name: 'node-labels', value: labels }]],
      ];
      for (const [apiVersion, written, expected] of cases) {
        const pool = clusterApiPool();
        const ref = pool.spec.provisioner.clusterAPI?.bootstrapConfigTemplateRef;
        if (ref) ref.apiVersion = apiVersion;
        const templates = capiTemplates();
        const template = templates[0] as KubernetesObject & { apiVersion: string; spec: Spec };
        template.apiVersion = apiVersion;
        template.spec = {
          template: {
            spec: {
              joinConfiguration: {
                nodeRegistration: written === undefined ? {} : { kubeletExtraArgs: written },
              },
            },
          },
        };
        const world = new World(pool, [...templates, consumerNamespace()]);
        const response = world.sync(NOW);
        const config = response.children.find((child) => child.kind === 'KubeadmConfig');
        expect(
          specOf(config),
          `${apiVersion} ${JSON.stringify(written)}`,
        ).to.have.deep.nested.property(
          'joinConfiguration.nodeRegistration.kubeletExtraArgs',
          expected,
        );
      }
    });

    it('identifies the Node by the Machine nodeRef and records the systemUUID it reports', () => {
      const world = new World(clusterApiPool(), [...capiTemplates(), consumerNamespace()]);
      world.sync(NOW);
      const machine = world.ofKind('Machine')[0] as KubernetesObject & {
        status?: Record<string, unknown>;
      };
      machine.status = { nodeRef: { name: 'gpu-node-7' } };
      world.addNode(node('gpu-node-7', 'AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE'));
      world.sync(at(10));
      expect(world.status.cells?.[0]).to.include({
        node: 'gpu-node-7',
        phase: 'Ready',
        systemUUID: 'AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE',
      });
    });

    it('boots from the rendered Secret with an Opaque bootstrap', () => {
      const pool = clusterApiPool({
        bootstrap: { provider: 'Opaque', joinSecretRef: { name: 'cell-join' } },
      });
      delete pool.spec.provisioner.clusterAPI?.bootstrapConfigTemplateRef;
      const world = new World(pool, [...capiTemplates(), joinSecret(), consumerNamespace()]);
      world.sync(NOW);
      const machine = world.ofKind('Machine')[0];
      expect(specOf(machine)).to.have.deep.nested.property('bootstrap', {
        dataSecretName: 'a100-capi-0-0-user-data',
      });
      const secret = world.ofKind<SecretObject>('Secret')[0];
      expect(Object.keys(secret?.data ?? {})).to.deep.equal(['value']);
    });
  });

  describe('observation and determinism', () => {
    it('answers byte-identical status for the same request and clock', () => {
      const world = readyPool(withAutoscaling(kubeVirtPool(), { minReplicas: 1, maxReplicas: 3 }), [
        'a100-0',
        'a100-1',
      ]);
      world.pods = [gpuPod('p', { nodeName: 'a100-0-0' }), gpuPod('q')];
      const request = world.request();
      const a = JSON.stringify(syncGPUCellPool(structuredClone(request), CONFIG, at(99)));
      const b = JSON.stringify(syncGPUCellPool(structuredClone(request), CONFIG, at(99)));
      expect(a).to.equal(b);
      // And once settled, a later sync over the same objects changes nothing in status.
      world.pods = [gpuPod('p', { nodeName: 'a100-0-0' })];
      world.sync(at(100));
      const first = JSON.stringify(world.status);
      world.sync(at(160));
      expect(JSON.stringify(world.status)).to.equal(first);
    });

    it('takes its machines back as cells when the status was lost, instead of deleting them', () => {
      const world = readyPool(kubeVirtPool({ replicas: 2 }), ['a100-0', 'a100-1']);
      world.remove('VirtualMachine', 'a100-1-0');
      world.sync(at(20)); // a100-1 gets incarnation 1
      world.join('a100-1');
      world.sync(at(30));
      const before = world.status.cells;
      world.pool.status = {};
      const response = world.sync(at(40));
      expect(
        world.status.cells?.map((cell) => [cell.name, cell.vm, cell.node, cell.phase]),
      ).to.deep.equal(before?.map((cell) => [cell.name, cell.vm, cell.node, 'Ready']));
      expect(response.children.filter((child) => child.kind === 'Node')).to.have.length(2);
    });

    it('keeps every child and the status when Metacontroller sent no Nodes', () => {
      const world = readyPool(kubeVirtPool({ replicas: 1 }), ['a100-0']);
      const children = childrenOf([...world.children.values()], [CHILD_TYPES.node]);
      const response = syncGPUCellPool(
        syncRequest(world.pool, children, relatedOf(world.pool, related())),
        CONFIG,
        at(30),
      );
      expect(response.children.map((child) => child.kind).sort()).to.deep.equal([
        'Secret',
        'VirtualMachine',
      ]);
      const status = response.status as GPUCellPool['status'];
      expect(status?.cells).to.deep.equal(world.status.cells);
      expect(status?.conditions?.find((c) => c.type === 'Ready')).to.include({
        reason: 'NotObserved',
      });
    });
  });

  describe('finalize', () => {
    it('retires every cell, waits for consumer pods, and finishes when nothing is left', () => {
      const world = readyPool(kubeVirtPool({ replicas: 1 }), ['a100-0']);
      world.pods = [gpuPod('train', { nodeName: 'a100-0-0' })];
      world.pool.metadata.deletionTimestamp = at(20).toISOString();
      const response = world.finalize(at(20));
      expect(response.finalized).to.equal(false);
      expect(world.phases()).to.deep.equal({ 'a100-0': 'Retiring' });
      expect(world.condition('Ready')).to.include({ reason: 'Deleting' });
      world.pods = [];
      // VM and Secret go first, then the Node, then the cell: finalized once nothing is left.
      const finalized = [0, 1, 2].map((step) => world.finalize(at(30 + step)).finalized);
      expect(finalized).to.deep.equal([false, false, true]);
      expect(world.children.size).to.equal(0);
      expect(world.status.cells).to.deep.equal([]);
    });

    it('finishes at once with kubecell.io/skip-cleanup=true', () => {
      const world = readyPool(kubeVirtPool({ replicas: 1 }), ['a100-0']);
      world.pool.metadata.annotations = { 'kubecell.io/skip-cleanup': 'true' };
      const response = finalizeGPUCellPool(world.request(true), CONFIG, at(20));
      expect(response.finalized).to.equal(true);
    });
  });
});

describe('GPUCellPool customize', () => {
  it('asks for the join Secret, the claim template, all pods and the consumer namespaces', () => {
    const rules = gpuCellPoolRelatedResources(kubeVirtPool(), CONFIG);
    expect(rules).to.deep.equal([
      { apiVersion: 'v1', resource: 'secrets', namespace: NAMESPACE, names: ['cell-join'] },
      {
        apiVersion: 'resource.k8s.io/v1',
        resource: 'resourceclaimtemplates',
        namespace: NAMESPACE,
        names: ['a100-vfio'],
      },
      { apiVersion: 'v1', resource: 'pods', labelSelector: {} },
      {
        apiVersion: 'v1',
        resource: 'namespaces',
        labelSelector: { matchLabels: { 'kubecell.io/host-namespace': 'true' } },
      },
    ]);
  });

  it('asks for the Cluster API templates and the clones labelled with the pool, no claim', () => {
    const rules = gpuCellPoolRelatedResources(clusterApiPool(), CONFIG);
    expect(rules.map((rule) => `${rule.apiVersion} ${rule.resource}`)).to.deep.equal([
      'v1 pods',
      'v1 namespaces',
      'bootstrap.cluster.x-k8s.io/v1beta2 kubeadmconfigtemplates',
      'bootstrap.cluster.x-k8s.io/v1beta2 kubeadmconfigs',
      'infrastructure.cluster.x-k8s.io/v1alpha1 kubevirtmachinetemplates',
      'infrastructure.cluster.x-k8s.io/v1alpha1 kubevirtmachines',
    ]);
    expect(rules[3]).to.deep.include({
      labelSelector: { matchLabels: { 'kubecell.io/pool': 'a100-capi' } },
    });
  });

  it('uses the configured consumer namespace selector', () => {
    const config = loadGPUCellPoolConfig({
      KUBECELL_GPUCELLPOOL_CONSUMER_NAMESPACE_SELECTOR: 'team=gpu,tier=prod',
    });
    const rules = gpuCellPoolRelatedResources(kubeVirtPool(), config);
    expect(rules.find((rule) => rule.resource === 'namespaces')).to.deep.include({
      labelSelector: { matchLabels: { team: 'gpu', tier: 'prod' } },
    });
  });
});

describe('GPUCellPool settings', () => {
  it('refuses a malformed selector or resource, naming the variable', () => {
    expect(() =>
      loadGPUCellPoolConfig({ KUBECELL_GPUCELLPOOL_CONSUMER_NAMESPACE_SELECTOR: 'a in (b)' }),
    ).to.throw('KUBECELL_GPUCELLPOOL_CONSUMER_NAMESPACE_SELECTOR');
    expect(() => loadGPUCellPoolConfig({ KUBECELL_GPUCELLPOOL_GPU_RESOURCE: 'gpu' })).to.throw(
      'KUBECELL_GPUCELLPOOL_GPU_RESOURCE',
    );
    expect(loadGPUCellPoolConfig({}).gpuResource).to.equal('nvidia.com/gpu');
  });
});
