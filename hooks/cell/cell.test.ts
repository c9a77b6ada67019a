import { expect } from 'chai';
import type { Cell, CellStatus } from '../generated/types/index.js';
import { TYPE_KEYS } from '../kube/objects.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { DEFAULT_CELL_CONFIG } from './config.js';
import { finalizeCell, syncCell } from './sync.js';
import {
  NOW,
  cell,
  hostNamespace,
  lease,
  managedCluster,
  node,
  pod,
  readyProvider,
  relatedOf,
  resolvedVirtualCluster,
  syncRequest,
} from './testing.js';

const config = DEFAULT_CELL_CONFIG;
const gpuNode = (name: string, extra: Record<string, string> = {}, options = {}) =>
  node(name, { cpu: '32', memory: '256Gi', 'nvidia.com/gpu': '4', ...extra }, options);

function statusOf(
  parent: Cell,
  objects: KubernetesObject[],
  omit: string[] = [],
  now = NOW,
): CellStatus {
  return syncCell(syncRequest(parent, relatedOf(objects, omit)), config, now).status as CellStatus;
}

const healthy = (): KubernetesObject[] => [
  managedCluster(),
  lease(10),
  gpuNode('n1'),
  gpuNode('n2'),
  ...readyProvider(),
];

const condition = (status: CellStatus, type: string) =>
  status.conditions?.find((c) => c.type === type);

describe('Cell sync', () => {
  it('is Ready with a fresh lease, joined cluster, observed inventory and ready provider', () => {
    const status = statusOf(cell(), healthy());
    expect(status.phase).to.equal('Ready');
    expect(condition(status, 'Ready')).to.include({ status: 'True', reason: 'Ready' });
    expect(status.managedCluster).to.include({
      name: 'cluster1',
      uid: 'mc-uid-1',
      joined: true,
      leaseFresh: true,
    });
    expect(status.provider).to.include({
      k3kVersion: 'v1.1.0',
      controllerReady: true,
      topolvmReady: true,
    });
  });

  it('is Degraded when the lease is older than 5 lease durations', () => {
    const status = statusOf(cell(), [
      managedCluster(),
      lease(301),
      gpuNode('n1'),
      ...readyProvider(),
    ]);
    expect(status.phase).to.equal('Degraded');
    expect(condition(status, 'LeaseFresh')).to.include({ status: 'False', reason: 'LeaseStale' });
    expect(
      statusOf(cell(), [managedCluster(), lease(299), gpuNode('n1'), ...readyProvider()]).phase,
    ).to.equal('Ready');
  });

  it('stays Degraded with a stale lease even when the ManagedCluster says Available', () => {
    const status = statusOf(cell(), [
      managedCluster('mc-uid-1', true),
      lease(3600),
      gpuNode('n1'),
      ...readyProvider(),
    ]);
    expect(condition(status, 'Available')).to.include({ status: 'True' });
    expect(status.phase).to.equal('Degraded');
  });

  it('is Pending when the ManagedCluster is absent or not accepted', () => {
    const absent = statusOf(cell(), [lease(10), gpuNode('n1'), ...readyProvider()]);
    expect(absent.phase).to.equal('Pending');
    expect(condition(absent, 'Joined')).to.include({ reason: 'ManagedClusterNotFound' });
    const notAccepted = managedCluster();
    notAccepted.spec.hubAcceptsClient = false;
    const status = statusOf(cell(), [notAccepted, lease(10), gpuNode('n1'), ...readyProvider()]);
    expect(condition(status, 'Joined')?.reason).to.equal('ManagedClusterNotAccepted');
  });

  it('is Failed when the ManagedCluster UID changes, until the operator accepts the new UID', () => {
    const first = statusOf(cell(), healthy());
    const replaced = [managedCluster('mc-uid-2'), lease(10), gpuNode('n1'), ...readyProvider()];
    const seen = { ...cell(), status: first };
    const failed = statusOf(seen, replaced);
    expect(failed.phase).to.equal('Failed');
    expect(condition(failed, 'Ready')?.reason).to.equal('ManagedClusterReplaced');
    expect(failed.managedCluster?.uid, 'the first UID stays recorded').to.equal('mc-uid-1');
    // Absent for a while: the recorded UID is kept, so the replacement is still caught later.
    const whileAbsent = statusOf({ ...cell(), status: failed }, [lease(10), ...readyProvider()]);
    expect(whileAbsent.managedCluster?.uid).to.equal('mc-uid-1');
    const accepted = cell({
      annotations: { 'kubecell.io/accept-managed-cluster-uid': 'mc-uid-2' },
    });
    const recovered = statusOf({ ...accepted, status: failed }, replaced);
    expect(recovered.phase).to.equal('Ready');
    expect(recovered.managedCluster?.uid).to.equal('mc-uid-2');
  });

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
    expect(status.nodes?.map((n) => [n.name, n.ready])).to.deep.equal([
      ['n1', true],
      ['n2', true],
      ['n3', false],
    ]);
    expect(status.nodes?.[0]?.activeRequested).to.deep.equal({
      cpu: '3250m',
      'nvidia.com/gpu': '1',
    });
    expect(status.nodes?.[2]?.readinessReasons).to.deep.equal(['KubeletNotReady']);
    expect(status.resolvedBy).to.equal(1);
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
    const base = [managedCluster(), lease(10), ...readyProvider(), pv];
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

  it('resyncs no later than the moment the lease goes stale', () => {
    const response = syncCell(
      syncRequest(
        cell(),
        relatedOf([managedCluster(), lease(295), gpuNode('n1'), ...readyProvider()]),
      ),
      config,
      NOW,
    );
    expect(response.resyncAfterSeconds).to.equal(5);
    expect(
      syncCell(syncRequest(cell(), relatedOf(healthy())), config, NOW).resyncAfterSeconds,
    ).to.equal(30);
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

  it('finishes when no VirtualCluster resolves to it', () => {
    const response = finalizeCell(syncRequest(deleting(), relatedOf(healthy()), true), config, NOW);
    expect(response.finalized).to.equal(true);
    expect(response.children).to.deep.equal([]);
  });

  it('keeps waiting when VirtualClusters could not be observed', () => {
    const response = finalizeCell(
      syncRequest(deleting(), relatedOf(healthy(), [TYPE_KEYS.virtualCluster]), true),
      config,
      NOW,
    );
    expect(response.finalized).to.equal(false);
  });
});
