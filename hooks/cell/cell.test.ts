import { expect } from 'chai';
import type { CellStatus } from '../generated/types/index.js';
import { TYPE_KEYS } from '../kube/objects.js';
import { DEFAULT_CELL_CONFIG } from './config.js';
import { finalizeCell, syncCell } from './sync.js';
import {
  NOW,
  cell,
  conditionOf as condition,
  gpuNode,
  healthy,
  hostNamespace,
  lease,
  managedCluster,
  pod,
  readyProvider,
  relatedOf,
  resolvedVirtualCluster,
  statusOf,
  syncRequest,
} from './testing.js';

const config = DEFAULT_CELL_CONFIG;

describe('Cell sync', () => {
  it('is Provisioning until the provider baseline is ready, naming what is missing', () => {
    const status = statusOf(cell(), [managedCluster(), lease(10), gpuNode('n1')]);
    expect(status.phase).to.equal('Provisioning');
    expect(condition(status, 'ProviderReady')?.message).to.equal(
      'not ready: k3k namespace, k3k CRDs, k3k controller, CNI DaemonSet, TopoLVM node DaemonSet',
    );
  });

  it('sums inventory over Ready profile Nodes, with init containers, overhead and pending demand', () => {
    const objects = [
      ...healthy(),
      gpuNode('n3', {}, { ready: false }),
      hostNamespace('tenant-a'),
      // max(init 3 cpu, containers 1+1 cpu) = 3 cpu, plus 250m overhead
      pod('p1', 'tenant-a', 'n1', [{ cpu: '1', 'nvidia.com/gpu': '1' }, { cpu: '1' }], {
        init: [{ cpu: '3' }],
        overhead: { cpu: '250m' },
      }),
      // another namespace on a profile Node still takes capacity
      pod('p2', 'kube-system', 'n2', [{ cpu: '500m', memory: '1Gi' }]),
      // terminal pods hold nothing
      pod('p3', 'tenant-a', 'n2', [{ cpu: '8' }], { phase: 'Succeeded' }),
      // unscheduled pod in a host namespace is pending demand
      pod('p4', 'tenant-a', undefined, [{ 'nvidia.com/gpu': '2' }]),
      // unscheduled pod elsewhere is not
      pod('p5', 'other', undefined, [{ 'nvidia.com/gpu': '1' }]),
      // a pod on a Node that is not a profile Node
      pod('p6', 'tenant-a', 'elsewhere', [{ cpu: '4' }]),
      resolvedVirtualCluster('vc1', 'tenant-a', {
        'requests.nvidia.com/gpu': '5',
        'requests.cpu': '2',
        'limits.cpu': '9',
      }),
    ];
    const status = statusOf(cell(), objects);
    expect(status.inventory?.['cpu']).to.deep.equal({
      capacity: '64',
      allocatable: '64',
      requested: '3750m',
      pending: '0',
      committed: '2',
      availableEstimate: '60250m',
    });
    // GPUs: requested 1, pending 2 → demand 3; committed 5 wins
    expect(status.inventory?.['nvidia.com/gpu']).to.deep.equal({
      capacity: '8',
      allocatable: '8',
      requested: '1',
      pending: '2',
      committed: '5',
      availableEstimate: '3',
    });
    expect(status.nodeCount).to.deep.equal({ total: 3, ready: 2, omitted: 0 });
    expect(status.notReadyNodes).to.deep.equal([{ name: 'n3', reasons: ['KubeletNotReady'] }]);
    expect(status.resolvedBy).to.equal(1);
  });

  it('publishes the InternalIPs of Ready, schedulable profile Nodes by name, and every profile Node', () => {
    const status = statusOf(cell(), [
      managedCluster(),
      lease(10),
      ...readyProvider(),
      gpuNode('n2', {}, { address: '10.0.0.2' }),
      gpuNode('n1', {}, { address: '10.0.0.1' }),
      gpuNode('n3', {}, { address: '10.0.0.3', ready: false }),
      gpuNode('n4', {}, { address: '10.0.0.4', unschedulable: true }),
      gpuNode('n5'),
      gpuNode('other', {}, { address: '10.0.9.9', profile: 'cpu-only' }),
    ]);
    expect(status.nodeAddresses).to.deep.equal([
      { node: 'n1', address: '10.0.0.1' },
      { node: 'n2', address: '10.0.0.2' },
    ]);
    expect(status.nodeCount, 'the other profile is not counted').to.deep.equal({
      total: 5,
      ready: 4,
      omitted: 0,
    });
    const listed = ['n1', 'n2', 'n3', 'n4', 'n5'];
    expect(
      status.nodes?.map((entry) => entry.name),
      'sorted by name',
    ).to.deep.equal(listed);
    expect(status.storageInventory?.perNode?.map((entry) => entry.node)).to.deep.equal(listed);
    expect(status.nodes?.map((entry) => entry.ready)).to.deep.equal([
      true,
      true,
      false,
      true,
      true,
    ]);
  });

  it('keeps the first 16 Node addresses and not-Ready Nodes by name, counting and listing all', () => {
    const names = Array.from({ length: 20 }, (_, i) => `n${String(i).padStart(2, '0')}`);
    const status = statusOf(cell(), [
      managedCluster(),
      lease(10),
      ...readyProvider(),
      ...names.map((name, i) => gpuNode(name, {}, { address: `10.0.0.${i}` })),
      ...names.map((name) => gpuNode(`x-${name}`, {}, { ready: false })),
    ]);
    expect(status.nodeCount).to.deep.equal({ total: 40, ready: 20, omitted: 0 });
    expect(status.nodes, 'status.nodes is not bounded to 16').to.have.length(40);
    expect(
      status.nodes?.filter((entry) => !entry.ready).map((entry) => entry.readinessReasons),
    ).to.deep.equal(names.map(() => ['KubeletNotReady']));
    expect(status.nodeAddresses?.map((entry) => entry.node)).to.deep.equal(names.slice(0, 16));
    expect(status.notReadyNodes?.map((entry) => entry.name)).to.deep.equal(
      names.slice(0, 16).map((name) => `x-${name}`),
    );
  });

  it('knows TopoLVM free space only when every Ready profile Node reports it, never from PVs', () => {
    const annotated = {
      'capacity.topolvm.io/00default': '100Gi',
      'capacity.topolvm.io/ssd': '50Gi',
    };
    const pv = {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pv1' },
      spec: {
        capacity: { storage: '500Gi' },
        csi: { driver: 'topolvm.io' },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              {
                matchExpressions: [
                  { key: 'topology.topolvm.io/node', operator: 'In', values: ['n1'] },
                ],
              },
            ],
          },
        },
      },
    };
    const base = [managedCluster(), ...readyProvider(), pv];
    const known = statusOf(cell(), [
      ...base,
      gpuNode('n1', {}, { annotations: annotated }),
      gpuNode('n2', {}, { annotations: annotated }),
    ]);
    expect(known.storageInventory).to.deep.include({
      freeCapacity: '300Gi',
      freeCapacityKnown: true,
      freeCapacitySource: 'TopoLVMNodeAnnotations',
      allocatedPV: '500Gi',
    });
    const unknown = statusOf(cell(), [
      ...base,
      gpuNode('n1', {}, { annotations: annotated }),
      gpuNode('n2'),
    ]);
    expect(unknown.storageInventory?.freeCapacityKnown).to.equal(false);
    expect(unknown.storageInventory?.freeCapacitySource).to.equal('None');
    expect(unknown.storageInventory).not.to.have.property('freeCapacity');
    expect(unknown.storageInventory?.allocatedPV, 'PVs still reported as allocated').to.equal(
      '500Gi',
    );
  });

  it('reports CapabilityMismatch when a declared device is not allocatable anywhere', () => {
    const ascend = cell();
    ascend.spec.machineProfile.devices = [{ name: 'npu', resourceName: 'huawei.com/Ascend910B3' }];
    const status = statusOf(ascend, healthy());
    expect(condition(status, 'CapabilityMismatch')).to.include({
      status: 'True',
      reason: 'DeviceNotOffered',
    });
    expect(condition(status, 'CapabilityMismatch')?.message).to.contain(
      'npu (huawei.com/Ascend910B3)',
    );
    expect(condition(statusOf(cell(), healthy()), 'CapabilityMismatch')?.status).to.equal('False');
  });

  it('is Degraded and says which inventory source was not observed', () => {
    const status = statusOf(cell(), healthy(), [TYPE_KEYS.pod]);
    expect(status.phase).to.equal('Degraded');
    expect(condition(status, 'InventoryFresh')).to.include({
      status: 'False',
      message: 'not observed: Pods',
    });
  });

  it('counts allocated NodePorts', () => {
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's', namespace: 'tenant-a' },
      spec: {
        type: 'NodePort',
        ports: [
          { port: 6443, nodePort: 31000 },
          { port: 80, nodePort: 31001 },
        ],
      },
    };
    expect(statusOf(cell(), [...healthy(), service]).nodePorts).to.include({
      allocated: 2,
      fresh: true,
    });
  });

  it('gives byte-identical status for the same request and clock, and keeps transition times', () => {
    const request = syncRequest(cell(), relatedOf(healthy()));
    const first = JSON.stringify(syncCell(request, config, NOW));
    expect(JSON.stringify(syncCell(request, config, NOW))).to.equal(first);
    const status = syncCell(request, config, NOW).status as CellStatus;
    const later = new Date(NOW.getTime() + 20_000);
    const next = statusOf({ ...cell(), status }, healthy(), [], later);
    expect(condition(next, 'Ready')?.lastTransitionTime).to.equal(
      condition(status, 'Ready')?.lastTransitionTime,
    );
  });
});

describe('Cell finalize', () => {
  const deleting = () => cell({ deletionTimestamp: '2026-11-30T11:59:00Z' });

  it('waits while a VirtualCluster resolves to the Cell, naming it', () => {
    const response = finalizeCell(
      syncRequest(
        deleting(),
        relatedOf([...healthy(), resolvedVirtualCluster('vc1', 'tenant-a', {})]),
        true,
      ),
      config,
      NOW,
    );
    expect(response.finalized).to.equal(false);
    const status = response.status as CellStatus;
    expect(status.phase).to.equal('Deleting');
    expect(condition(status, 'InUse')).to.include({
      status: 'True',
      message: 'resolved by: tenant-a/vc1',
    });
  });

  it('names at most ten VirtualClusters in InUse: the Cell stays small whatever uses it', () => {
    const users = Array.from({ length: 25 }, (_, i) =>
      resolvedVirtualCluster(`vc${String(i).padStart(2, '0')}`, `tenant-${i}`, {}),
    );
    const response = finalizeCell(
      syncRequest(deleting(), relatedOf([...healthy(), ...users]), true),
      config,
      NOW,
    );
    const status = response.status as CellStatus;
    const message = condition(status, 'InUse')?.message ?? '';
    expect(message.split(', ')).to.have.length(10);
    expect(message).to.match(/ and 15 more$/);
    expect(status.resolvedBy).to.equal(25);
  });

  it('finishes when no VirtualCluster resolves to it', () => {
    const response = finalizeCell(syncRequest(deleting(), relatedOf(healthy()), true), config, NOW);
    expect(response.finalized).to.equal(true);
    // The liveness record goes with it: nothing reads it any more.
    expect(response.children).to.deep.equal([]);
  });

  it('keeps waiting when VirtualClusters could not be observed', () => {
    const response = finalizeCell(
      syncRequest(deleting(), relatedOf(healthy(), [TYPE_KEYS.virtualCluster]), true),
      config,
      NOW,
    );
    expect(response.finalized).to.equal(false);
    // VirtualClusters may still read the liveness record: it is kept while the Cell waits.
    expect(response.children.map((child) => child.metadata.name)).to.deep.equal([
      'kubecell-cell-cell1',
      'kubecell-cell-cell1.status',
    ]);
  });
});
