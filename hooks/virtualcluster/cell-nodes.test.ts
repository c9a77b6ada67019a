// CellNodesHealthy: a VirtualCluster is told which Nodes of its Cell their GPUCellPool judged
// unhealthy, from the Cell before resolution and from the Cell's liveness record after it, and
// again when they recover; informational (Ready and the phase do not change).
import { expect } from 'chai';
import { cellLivenessRecord } from '../api/cell-liveness-record.js';
import type { Cell, CellNode } from '../generated/types/index.js';
import { TYPE_KEYS } from '../kube/objects.js';
import { toObjectMap, type KubernetesObject } from '../metacontroller/protocol.js';
import { syncVirtualCluster } from './sync.js';
import {
  CONFIG,
  LATER,
  cell,
  condition,
  hostNamespace,
  resolvedWorld,
  runSync,
  smallClass,
  statusOf,
  syncRequest,
  virtualCluster,
} from './testing.js';

/** cell() listing `nodes` in its status. */
function cellWith(nodes: CellNode[]): Cell {
  const source = cell();
  source.status = { ...source.status, nodes };
  return source;
}

const bad = (name: string, health: 'Unhealthy' | 'Remediating', reason: string): CellNode =>
  ({ name, ready: true, health, healthReason: reason }) as CellNode;
const good = (name: string): CellNode => ({ name, ready: true });

/** A resolved VirtualCluster's sync that reads only the record (the Cell not related). */
function fromRecord(record: KubernetesObject) {
  const { vc, children } = resolvedWorld();
  const request = syncRequest(vc, [smallClass(), hostNamespace()], children);
  delete request.related[TYPE_KEYS.cell];
  request.related[TYPE_KEYS.configMap] = toObjectMap([record])[TYPE_KEYS.configMap] ?? {};
  return syncVirtualCluster(request, CONFIG, LATER);
}

const recordOf = (source: Cell) =>
  cellLivenessRecord(source, source.status ?? {}) as unknown as KubernetesObject;

describe('VirtualCluster CellNodesHealthy', () => {
  it('before resolution, from the Cell: True, False naming the Nodes, listed after CellLive', () => {
    const healthy = runSync(virtualCluster(), [
      cellWith([good('n1')]),
      smallClass(),
      hostNamespace(),
    ]);
    expect(condition(healthy, 'CellNodesHealthy')).to.include({
      status: 'True',
      reason: 'CellNodesHealthy',
      message: 'Every Node of Cell cell1 is healthy (none is marked unhealthy by its GPUCellPool).',
    });
    const types = statusOf(healthy).conditions?.map((c) => c.type);
    expect(types?.slice(-3)).to.deep.equal(['CellLive', 'CellNodesHealthy', 'Ready']);

    const unhealthy = runSync(virtualCluster(), [
      cellWith([good('n1'), bad('n2', 'Remediating', 'UnhealthyNode')]),
      smallClass(),
      hostNamespace(),
    ]);
    expect(condition(unhealthy, 'CellNodesHealthy')).to.include({
      status: 'False',
      reason: 'CellNodesUnhealthy',
    });
    expect(condition(unhealthy, 'CellNodesHealthy')?.message).to.match(
      /^1 Node\(s\) of Cell cell1 are unhealthy or being replaced: n2 \(UnhealthyNode, being replaced\)\. .*without evicting pods/,
    );
  });

  it('after resolution, from the record: False naming the Nodes, True once they recover; Ready stays', () => {
    const sick = cellWith([
      bad('n2', 'Unhealthy', 'MachineFailed'),
      bad('n1', 'Unhealthy', 'NodeDeleted'),
    ]);
    const during = fromRecord(recordOf(sick));
    expect(condition(during, 'CellNodesHealthy')).to.include({
      status: 'False',
      reason: 'CellNodesUnhealthy',
    });
    expect(condition(during, 'CellNodesHealthy')?.message).to.include(
      '2 Node(s) of Cell cell1 are unhealthy or being replaced: n1 (NodeDeleted), n2 (MachineFailed).',
    );
    expect(condition(during, 'CellLive')).to.include({ status: 'True' });

    const after = fromRecord(recordOf(cellWith([good('n1'), good('n3')])));
    expect(condition(after, 'CellNodesHealthy')).to.include({ status: 'True' });
    // Informational: the phase and Ready are the same either way.
    expect(statusOf(during).phase).to.equal(statusOf(after).phase);
    expect(condition(during, 'Ready')).to.deep.equal(condition(after, 'Ready'));
  });

  it('names 8 Nodes and counts the others, with the record’s count', () => {
    const nodes = Array.from({ length: 20 }, (_, i) =>
      bad(`n${String(i).padStart(2, '0')}`, 'Unhealthy', 'UnhealthyNode'),
    );
    const message = condition(fromRecord(recordOf(cellWith(nodes))), 'CellNodesHealthy')?.message;
    expect(message).to.include('20 Node(s) of Cell cell1 are unhealthy or being replaced:');
    expect(message).to.include('n07 (UnhealthyNode) and 12 more.');
  });

  it('is Unknown for a record an older controller wrote, and CellLive stays True', () => {
    const older = recordOf(cellWith([good('n1')])) as KubernetesObject & {
      data: Record<string, string>;
    };
    delete older.data['unhealthyNodes'];
    const response = fromRecord(older);
    expect(condition(response, 'CellNodesHealthy')).to.include({
      status: 'Unknown',
      reason: 'CellNodeHealthNotRecorded',
    });
    expect(condition(response, 'CellLive')).to.include({ status: 'True', reason: 'LeaseFresh' });
  });

  it('is Unknown, with CellLive Unknown, for a forged unhealthyNodes', () => {
    const forged = recordOf(cellWith([good('n1')])) as KubernetesObject & {
      data: Record<string, string>;
    };
    forged.data['unhealthyNodes'] = 'n1=Unhealthy:<b>pwned</b>';
    const response = fromRecord(forged);
    expect(condition(response, 'CellNodesHealthy')).to.include({
      status: 'Unknown',
      reason: 'CellNodesUnknown',
    });
    expect(condition(response, 'CellLive')?.message).to.include('unexpected data.unhealthyNodes');
    expect(JSON.stringify(statusOf(response))).not.to.include('pwned');
  });

  it('answers the same bytes for the same record', () => {
    const record = recordOf(cellWith([bad('n1', 'Remediating', 'UnhealthyNode')]));
    expect(JSON.stringify(fromRecord(record))).to.equal(JSON.stringify(fromRecord(record)));
  });
});
