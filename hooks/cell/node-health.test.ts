// A Cell reads its GPUCellPool's health marks on profile Nodes (observe-nodes.ts) as untrusted
// bytes: status.nodes[].health/healthReason, the NodesHealthy condition, the liveness record's
// unhealthyNodes; the same bytes for the same inputs; the remote agent's report carries them.
import { expect } from 'chai';
import { cellLivenessRecord, readCellLivenessRecord } from '../api/cell-liveness-record.js';
import type { CellStatus } from '../generated/types/index.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { serializeCellReport } from '../remote/report.js';
import { clusterReport } from './cluster-report.js';
import { DEFAULT_CELL_CONFIG } from './config.js';
import { observeCluster } from './observe.js';
import { syncCell } from './sync.js';
import {
  NOW,
  agentWork,
  cell,
  conditionOf,
  gpuNode,
  lease,
  managedCluster,
  readyProvider,
  relatedOf,
  remoteCell,
  remoteRelatedOf,
  statusOf,
  syncRequest,
} from './testing.js';

const HEALTH = 'kubecell.io/cell-health';
const REASON = 'kubecell.io/cell-health-reason';

const marked = (health: string, reason: string) => ({ [HEALTH]: health, [REASON]: reason });

function cluster(...nodes: KubernetesObject[]): KubernetesObject[] {
  return [managedCluster(), lease(10), ...nodes, ...readyProvider()];
}

function entry(status: CellStatus, name: string) {
  return status.nodes?.find((node) => node.name === name);
}

describe('Cell: the health its GPUCellPool marks on profile Nodes', () => {
  it('lists no verdict and NodesHealthy True when no Node is marked', () => {
    const status = statusOf(cell(), cluster(gpuNode('n1'), gpuNode('n2')));
    expect(entry(status, 'n1')).not.to.have.property('health');
    expect(conditionOf(status, 'NodesHealthy')).to.include({
      status: 'True',
      reason: 'NodesHealthy',
    });
    expect(status.phase).to.equal('Ready');
  });

  it('lists the verdict per Node and names the Nodes in NodesHealthy, sorted; the phase stays', () => {
    const status = statusOf(
      cell(),
      cluster(
        gpuNode('n3', {}, { annotations: marked('Remediating', 'UnhealthyNode') }),
        gpuNode('n1', {}, { annotations: marked('Unhealthy', 'MachineFailed') }),
        gpuNode('n2'),
      ),
    );
    expect(entry(status, 'n1')).to.include({ health: 'Unhealthy', healthReason: 'MachineFailed' });
    expect(entry(status, 'n3')).to.include({
      health: 'Remediating',
      healthReason: 'UnhealthyNode',
    });
    expect(entry(status, 'n2')).not.to.have.property('health');
    expect(conditionOf(status, 'NodesHealthy')).to.include({
      status: 'False',
      reason: 'NodesUnhealthy',
    });
    expect(conditionOf(status, 'NodesHealthy')?.message).to.match(
      /^2 profile Node\(s\) marked unhealthy by their GPUCellPool: n1 \(MachineFailed\), n3 \(UnhealthyNode, being replaced\);/,
    );
    expect(status.phase).to.equal('Ready');
  });

  it('names up to 8 Nodes in the message and counts the others', () => {
    const nodes = Array.from({ length: 11 }, (_, i) =>
      gpuNode(
        `n${String(i).padStart(2, '0')}`,
        {},
        { annotations: marked('Unhealthy', 'NodeDeleted') },
      ),
    );
    const message = conditionOf(statusOf(cell(), cluster(...nodes)), 'NodesHealthy')?.message;
    expect(message).to.include('11 profile Node(s)');
    expect(message).to.include('n07 (NodeDeleted) and 3 more;');
    expect(message).not.to.include('n08');
  });

  it('reads forged or partial marks as no verdict, without echoing them', () => {
    const forged: Record<string, string>[] = [
      { [HEALTH]: 'Unhealthy' },
      { [REASON]: 'UnhealthyNode' },
      marked('Healthy', 'NodeHealthy'),
      marked('Unhealthy', 'Evil reason <script>'),
      marked('unhealthy', 'UnhealthyNode'),
      marked('Unhealthy', 'UnhealthyNode '),
    ];
    const status = statusOf(
      cell(),
      cluster(...forged.map((annotations, i) => gpuNode(`n${i}`, {}, { annotations }))),
    );
    for (const node of status.nodes ?? []) expect(node).not.to.have.property('health');
    expect(conditionOf(status, 'NodesHealthy')).to.include({ status: 'True' });
    expect(JSON.stringify(status)).not.to.include('Evil');
  });

  it('answers byte-identical status and record for the same inputs', () => {
    const objects = cluster(
      gpuNode('n1', {}, { annotations: marked('Unhealthy', 'UnhealthyNode') }),
      gpuNode('n2'),
    );
    const sync = () =>
      JSON.stringify(syncCell(syncRequest(cell(), relatedOf(objects)), DEFAULT_CELL_CONFIG, NOW));
    expect(sync()).to.equal(sync());
  });

  it('records the unhealthy Nodes in the liveness record; none is an empty list', () => {
    const parent = cell();
    const status = statusOf(
      parent,
      cluster(
        gpuNode('n2', {}, { annotations: marked('Remediating', 'NodeStartupTimeout') }),
        gpuNode('n1', {}, { annotations: marked('Unhealthy', 'UnhealthyNode') }),
      ),
    );
    const record = cellLivenessRecord(parent, status);
    expect(record.data?.['unhealthyNodes']).to.equal(
      'n1=Unhealthy:UnhealthyNode,n2=Remediating:NodeStartupTimeout',
    );
    expect(readCellLivenessRecord(record)).to.deep.include({
      unhealthyNodes: {
        nodes: [
          { name: 'n1', health: 'Unhealthy', reason: 'UnhealthyNode' },
          { name: 'n2', health: 'Remediating', reason: 'NodeStartupTimeout' },
        ],
        more: 0,
      },
    });
    const healthy = cellLivenessRecord(parent, statusOf(parent, cluster(gpuNode('n1'))));
    expect(healthy.data?.['unhealthyNodes']).to.equal('');
  });

  it('bounds the record at 16 Nodes and counts the others', () => {
    const nodes = Array.from({ length: 20 }, (_, i) =>
      gpuNode(
        `n${String(i).padStart(2, '0')}`,
        {},
        { annotations: marked('Unhealthy', 'NodeDeleted') },
      ),
    );
    const parent = cell();
    const record = cellLivenessRecord(parent, statusOf(parent, cluster(...nodes)));
    const list = record.data?.['unhealthyNodes'] ?? '';
    expect(list.split(',')).to.have.length(17);
    expect(list.endsWith('n15=Unhealthy:NodeDeleted,+4')).to.equal(true);
    expect(readCellLivenessRecord(record)).to.deep.include({
      unhealthyNodes: { nodes: readList(list), more: 4 },
    });
  });

  it('refuses a forged unhealthyNodes in the record, and reads a record without it', () => {
    const parent = cell();
    const record = cellLivenessRecord(parent, statusOf(parent, cluster(gpuNode('n1'))));
    for (const forged of [
      'n1=Unhealthy',
      'n1=Unhealthy:Because',
      'N1=Unhealthy:UnhealthyNode',
      'n2=Unhealthy:UnhealthyNode,n1=Unhealthy:UnhealthyNode',
      'n1=Unhealthy:UnhealthyNode,+3',
      'n1=Unhealthy:UnhealthyNode:x',
      'n1=Unhealthy:UnhealthyNode=',
      ',',
    ]) {
      const edited = { ...record, data: { ...record.data, unhealthyNodes: forged } };
      expect(readCellLivenessRecord(edited), forged).to.deep.equal({
        invalid: 'data.unhealthyNodes',
      });
    }
    const older = { ...record, data: { ...record.data } };
    delete older.data['unhealthyNodes'];
    const read = readCellLivenessRecord(older);
    expect(read).not.to.have.property('invalid');
    expect(read).not.to.have.property('unhealthyNodes');
  });

  it('carries the verdict through the remote cell agent’s report', () => {
    const objects = cluster(
      gpuNode('n1', {}, { annotations: marked('Remediating', 'MachineFailed') }),
      gpuNode('n2', {}, { annotations: marked('Unhealthy', 'Forged') }),
    );
    const observation = observeCluster(relatedOf(objects), 'a100', DEFAULT_CELL_CONFIG);
    const report = serializeCellReport(clusterReport('a100', observation, NOW));
    const hub = [managedCluster(), lease(10), agentWork(report)];
    const status = syncCell(
      syncRequest(remoteCell(), remoteRelatedOf(hub)),
      DEFAULT_CELL_CONFIG,
      NOW,
    ).status as CellStatus;
    expect(entry(status, 'n1')).to.include({
      health: 'Remediating',
      healthReason: 'MachineFailed',
    });
    expect(entry(status, 'n2')).not.to.have.property('health');
    expect(conditionOf(status, 'NodesHealthy')).to.include({ status: 'False' });

    // A report with a value outside the closed sets is not read at all (the report's schema).
    const forged = JSON.parse(report) as { nodes: Record<string, unknown>[] };
    forged.nodes[1] = { ...forged.nodes[1], health: 'Unhealthy', healthReason: 'Forged' };
    const refused = syncCell(
      syncRequest(
        remoteCell(),
        remoteRelatedOf([managedCluster(), lease(10), agentWork(JSON.stringify(forged))]),
      ),
      DEFAULT_CELL_CONFIG,
      NOW,
    ).status as CellStatus;
    expect(conditionOf(refused, 'InventoryFresh')).to.include({ reason: 'AgentReportUnparsable' });
  });
});

function readList(list: string) {
  return list
    .split(',')
    .slice(0, 16)
    .map((item) => {
      const [name = '', verdict = ''] = item.split('=');
      const [health, reason] = verdict.split(':');
      return { name, health, reason };
    });
}
