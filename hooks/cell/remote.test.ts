import { expect } from 'chai';
import type { CellStatus } from '../generated/types/index.js';
import { TYPE_KEYS } from '../kube/objects.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { MANIFEST_WORK_TYPE_KEY } from '../remote/manifest-work.js';
import { parseCellReport, serializeCellReport } from '../remote/report.js';
import { clusterReport } from './cluster-report.js';
import { DEFAULT_CELL_CONFIG } from './config.js';
import { cellRelatedResources } from './customize.js';
import { observeCluster } from './observe.js';
import { syncCell } from './sync.js';
import {
  NOW,
  agentWork,
  cell,
  conditionOf,
  gpuNode,
  healthy,
  hostNamespace,
  lease,
  managedCluster,
  pod,
  relatedOf,
  remoteCell,
  remoteRelatedOf,
  resolvedVirtualCluster,
  statusOf,
  syncRequest,
} from './testing.js';

const config = DEFAULT_CELL_CONFIG;

/** What the cell agent would report at `at` from `objects` on its cluster. */
function reportFrom(objects: KubernetesObject[], at = NOW): string {
  const observation = observeCluster(relatedOf(objects), 'a100', config);
  return serializeCellReport(clusterReport('a100', observation, at));
}

function remoteStatus(hub: KubernetesObject[], omit: string[] = [], now = NOW): CellStatus {
  return syncCell(syncRequest(remoteCell(), remoteRelatedOf(hub, omit)), config, now)
    .status as CellStatus;
}

/** A managed cluster with work on it: pods, a pending pod, TopoLVM, a NodePort. */
function busyCluster(): KubernetesObject[] {
  return [
    ...healthy(),
    gpuNode('n3', {}, { ready: false, address: '10.0.0.3' }),
    gpuNode('n4', {}, { address: '10.0.0.4', annotations: { 'capacity.topolvm.io/ssd': '1Ti' } }),
    hostNamespace('tenant-a'),
    pod('p1', 'tenant-a', 'n1', [{ cpu: '2', 'nvidia.com/gpu': '1' }]),
    pod('p2', 'tenant-a', undefined, [{ 'nvidia.com/gpu': '2', 'example.com/fpga': '1' }]),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'k3k-team-a-service', namespace: 'tenant-a' },
      spec: { type: 'NodePort', ports: [{ port: 443, nodePort: 30443 }] },
    } as KubernetesObject,
  ];
}

/** The hub's part of a ManifestWork Cell: its joined ManagedCluster, the Lease, and `objects`. */
function live(...objects: KubernetesObject[]): KubernetesObject[] {
  return [managedCluster(), lease(10), ...objects];
}

const VC = resolvedVirtualCluster('vc1', 'tenant-a', { 'requests.nvidia.com/gpu': '5' });

describe('a Cell with delivery ManifestWork (its cluster is reported by the cell agent)', () => {
  it('relates its ManagedCluster, its Lease, VirtualClusters and the agent work, never hub Nodes or pods', () => {
    const rules = cellRelatedResources(remoteCell(), config);
    expect(rules.map((rule) => rule.resource)).to.deep.equal([
      'managedclusters',
      'leases',
      'virtualclusters',
      'manifestworks',
    ]);
    expect(rules[1], 'the Lease is on the hub, whatever the delivery').to.deep.equal({
      apiVersion: 'coordination.k8s.io/v1',
      resource: 'leases',
      namespace: 'cluster1',
      names: ['managed-cluster-lease'],
    });
    expect(rules[3]).to.deep.equal({
      apiVersion: 'work.open-cluster-management.io/v1',
      resource: 'manifestworks',
      namespace: 'cluster1',
      names: ['kubecell-cell-agent'],
    });
    expect(cellRelatedResources(cell(), config).map((rule) => rule.resource)).to.include('nodes');
  });

  it('reports what a Local Cell computes from the same objects, committed entitlements included', () => {
    const objects = busyCluster();
    const local = statusOf(cell(), [...objects, VC]);
    const remote = remoteStatus(live(VC, agentWork(reportFrom(objects))));
    for (const part of [
      'phase',
      'notReadyNodes',
      'nodeAddresses',
      'inventory',
      'nodePorts',
      'provider',
      'resolvedBy',
      'managedCluster',
      'nodes',
      'nodeCount',
      'storageInventory',
    ] as const) {
      expect(remote[part], part).to.deep.equal(local[part]);
    }
    // The per-Node detail travels in the report: every Node, its pods' requests, its storage.
    expect(remote.nodes).to.have.length(4);
    expect(remote.storageInventory?.perNode).to.have.length(4);
    expect(remote.inventory?.['nvidia.com/gpu']).to.include({ pending: '2', committed: '5' });
    expect(remote.nodeCount).to.deep.equal({ total: 4, ready: 3, omitted: 0 });
    expect(conditionOf(remote, 'NodeDetailTruncated')).to.include({
      status: 'False',
      reason: 'NodeDetailComplete',
    });
    expect(conditionOf(remote, 'InventoryFresh')).to.include({
      status: 'True',
      reason: 'InventoryReported',
    });
  });

  it('is Provisioning, InventoryFresh Unknown, until the agent work exists and reports', () => {
    for (const hub of [live(), live(agentWork(undefined))]) {
      const status = remoteStatus(hub);
      expect(status.phase).to.equal('Provisioning');
      expect(conditionOf(status, 'InventoryFresh')).to.include({
        status: 'Unknown',
        reason: 'AgentReportMissing',
      });
      expect(status.nodeCount).to.deep.equal({ total: 0, ready: 0, omitted: 0 });
      expect(status.nodePorts).to.include({ allocated: 0, fresh: false });
      expect(conditionOf(status, 'ProviderReady')?.message).to.equal(
        'not ready: unknown: no readable report from the cell agent',
      );
    }
    expect(conditionOf(remoteStatus(live()), 'InventoryFresh')?.message).to.equal(
      'ManifestWork cluster1/kubecell-cell-agent does not exist yet: the kubecell-delivery controller installs the cell agent on ManagedCluster cluster1',
    );
    expect(
      conditionOf(remoteStatus(live(agentWork(undefined))), 'InventoryFresh')?.message,
    ).to.match(/has not reported machine profile a100 yet \(no feedback "report" of ConfigMap/);
  });

  it('is Degraded, naming the bad field, when the report does not parse', () => {
    const report = JSON.parse(reportFrom(healthy())) as Record<string, unknown>;
    report['nodeCount'] = { total: 'two' };
    const status = remoteStatus(live(agentWork(JSON.stringify(report))));
    expect(status.phase).to.equal('Degraded');
    const fresh = conditionOf(status, 'InventoryFresh');
    expect(fresh).to.include({ status: 'False', reason: 'AgentReportUnparsable' });
    expect(fresh?.message).to.contain('report.nodeCount.total: must be integer, got string');
    const integer = remoteStatus(live(agentWork('1', 'Integer')));
    expect(conditionOf(integer, 'InventoryFresh')?.message).to.match(
      /is of type Integer, not String$/,
    );
  });

  it('refuses a report of another machine profile', () => {
    const report = parseCellReport(reportFrom(healthy()));
    const other = serializeCellReport({ ...report, machineProfile: 'h100' });
    const status = remoteStatus(live(agentWork(other)));
    expect(conditionOf(status, 'InventoryFresh')).to.include({
      status: 'False',
      reason: 'AgentReportUnparsable',
    });
    expect(conditionOf(status, 'InventoryFresh')?.message).to.match(
      /reports machine profile h100, not a100$/,
    );
  });

  it('is Degraded once the report is more than 600 s old, still showing it as not fresh', () => {
    const at = (secondsAgo: number) => new Date(NOW.getTime() - secondsAgo * 1000);
    const hub = (secondsAgo: number) => live(agentWork(reportFrom(busyCluster(), at(secondsAgo))));
    const atLimit = remoteStatus(hub(600));
    expect(atLimit.phase).to.equal('Ready');
    const old = remoteStatus(hub(601));
    expect(old.phase).to.equal('Degraded');
    expect(conditionOf(old, 'InventoryFresh')).to.include({
      status: 'False',
      reason: 'AgentReportOutdated',
      message:
        'the cell agent on ManagedCluster cluster1 last reported machine profile a100 at 2026-11-30T11:49:59Z, more than 600s ago; check Deployment kubecell-system/kubecell-cell-agent there (the last report is shown)',
    });
    expect(old.nodeCount).to.deep.equal(atLimit.nodeCount);
    expect(old.inventory).to.deep.equal(atLimit.inventory);
    expect(old.nodePorts).to.include({ allocated: 1, fresh: false });
    expect(old.storageInventory?.fresh).to.equal(false);
  });

  it('asks for a sync at the instant its report goes outdated when nothing else falls due first, and is Degraded then', () => {
    const reportedAt = (secondsAgo: number) => new Date(NOW.getTime() - secondsAgo * 1000);
    const hub = live(agentWork(reportFrom(busyCluster(), reportedAt(500))));
    // The lease (renewed 10 s ago, 60-s duration) expires in 290 s; the report 100 s from now.
    const first = syncCell(syncRequest(remoteCell(), remoteRelatedOf(hub)), config, NOW);
    expect((first.status as CellStatus).phase).to.equal('Ready');
    expect(first.resyncAfterSeconds).to.equal(100);
    const then = new Date(NOW.getTime() + 100_000 + 5);
    const outdated = syncCell(
      syncRequest({ ...remoteCell(), status: first.status as CellStatus }, remoteRelatedOf(hub)),
      config,
      then,
    );
    expect(conditionOf(outdated.status as CellStatus, 'InventoryFresh')?.reason).to.equal(
      'AgentReportOutdated',
    );
    // A fresh report 10 s old: the lease's expiry (290 s) comes before its limit (590 s).
    const fresh = live(agentWork(reportFrom(busyCluster(), reportedAt(10))));
    expect(
      syncCell(syncRequest(remoteCell(), remoteRelatedOf(fresh)), config, NOW).resyncAfterSeconds,
    ).to.equal(290);
  });

  it('does not change its status when only the report observedAt moves (no idle writes)', () => {
    const first = remoteStatus(live(agentWork(reportFrom(busyCluster()))));
    const later = new Date(NOW.getTime() + 120_000);
    const request = syncRequest(
      { ...remoteCell(), status: first },
      remoteRelatedOf(live(agentWork(reportFrom(busyCluster(), later)))),
    );
    expect(syncCell(request, config, later).status).to.deep.equal(first);
  });

  it('says InventorySourceUnavailable when the work or the VirtualClusters were not delivered', () => {
    const noWorks = remoteStatus(live(), [MANIFEST_WORK_TYPE_KEY]);
    expect(conditionOf(noWorks, 'InventoryFresh')).to.include({
      status: 'False',
      reason: 'InventorySourceUnavailable',
      message: 'not observed: ManifestWork kubecell-cell-agent',
    });
    const noVCs = remoteStatus(live(agentWork(reportFrom(healthy()))), [TYPE_KEYS.virtualCluster]);
    expect(conditionOf(noVCs, 'InventoryFresh')?.message).to.equal('not observed: VirtualClusters');
  });

  it('lists no Node from an agent whose report carries no per-Node detail, and says so', () => {
    const report = JSON.parse(reportFrom(busyCluster())) as Record<string, Record<string, unknown>>;
    delete report['nodes'];
    delete report['storageInventory']?.['perNode'];
    const remote = remoteStatus(live(VC, agentWork(JSON.stringify(report))));
    expect(remote).not.to.have.property('nodes');
    expect(remote.storageInventory).not.to.have.property('perNode');
    expect(remote.nodeCount, 'every Node counts as omitted').to.deep.equal({
      total: 4,
      ready: 3,
      omitted: 4,
    });
    expect(conditionOf(remote, 'NodeDetailTruncated')).to.include({
      status: 'True',
      reason: 'NodeDetailNotReported',
      message:
        "the cell agent's report carries no per-Node detail (an agent older than the hub): status.nodes is absent, nodeCount and the inventory still count all 4 profile Node(s)",
    });
    expect(remote.phase, 'informational').to.equal('Ready');
  });

  it('lists only the reported Nodes, written anew, and refuses a report that carries times or bad names', () => {
    const report = JSON.parse(reportFrom(busyCluster())) as Record<string, Record<string, unknown>>;
    const perNode = report['storageInventory']?.['perNode'] as Record<string, unknown>[];
    perNode.push({ node: 'ghost', freeCapacity: '999Ti', allocatedPV: '0' });
    const nodes = report['nodes'] as unknown as Record<string, Record<string, unknown>>[];
    nodes[0]!['capacity'] = { cpu: '32000m' };
    const status = remoteStatus(live(VC, agentWork(JSON.stringify(report))));
    expect(conditionOf(status, 'InventoryFresh')?.status, 'the report was read').to.equal('True');
    expect(status.storageInventory?.perNode?.map((entry) => entry.node)).not.to.include('ghost');
    expect(status.nodes?.[0]?.capacity, 'quantities in canonical form').to.deep.equal({
      cpu: '32',
    });
    expect(status.storageInventory?.observedAt).to.equal(status.observedAt);

    for (const [change, field] of [
      [
        (r: typeof report) => (r['storageInventory']!['observedAt'] = '2020-01-01T00:00:00Z'),
        'report.storageInventory["observedAt"]: is not a report field',
      ],
      [
        (r: typeof report) => ((r['nodes'] as unknown as { name: string }[])[0]!.name = 'Bad Name'),
        'report.nodes[0].name: must be a Node name',
      ],
    ] as const) {
      const bad = JSON.parse(reportFrom(busyCluster())) as typeof report;
      change(bad);
      const refused = remoteStatus(live(VC, agentWork(JSON.stringify(bad))));
      expect(conditionOf(refused, 'InventoryFresh'), field).to.include({
        status: 'False',
        reason: 'AgentReportUnparsable',
      });
      expect(conditionOf(refused, 'InventoryFresh')?.message, field).to.include(field);
    }
  });

  it('is Degraded when its cluster’s Lease is stale, however fresh the agent’s report', () => {
    const stale = [managedCluster(), lease(400), agentWork(reportFrom(busyCluster()))];
    const status = remoteStatus(stale);
    expect(status.phase).to.equal('Degraded');
    expect(conditionOf(status, 'LeaseFresh')).to.include({ status: 'False', reason: 'LeaseStale' });
    expect(conditionOf(status, 'InventoryFresh')?.status).to.equal('True');
  });

  it('leaves a Local Cell as it was, delivery written out or not', () => {
    const explicit = cell();
    explicit.spec.delivery = 'Local';
    expect(statusOf(explicit, busyCluster())).to.deep.equal(statusOf(cell(), busyCluster()));
  });
});
