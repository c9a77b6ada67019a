import { createHash } from 'node:crypto';
import { expect } from 'chai';
import type { Cell, CellStatus } from '../generated/types/index.js';
import { validateCell } from '../generated/validators.js';
import type { Node } from '../kube/objects.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { DEFAULT_CELL_CONFIG } from './config.js';
import { syncCell } from './sync.js';
import {
  NOW,
  cell,
  conditionOf,
  gpuNode,
  healthy,
  hostNamespace,
  lease,
  managedCluster,
  node,
  pod,
  readyProvider,
  relatedOf,
  statusOf,
  syncRequest,
} from './testing.js';

const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
const fedBack = (status: CellStatus): Cell => ({ ...cell(), status });
const base = (): KubernetesObject[] => [managedCluster(), lease(10), ...readyProvider()];

/** The documented labelHash: SHA-256 over the sorted `key=value\n` lines, first 16 hex digits. */
function expectedLabelHash(labels: Record<string, string>): string {
  const lines = Object.keys(labels)
    .sort()
    .map((key) => `${key}=${labels[key]}\n`)
    .join('');
  return createHash('sha256').update(lines).digest('hex').slice(0, 16);
}

describe('Cell per-Node detail (status.nodes and storageInventory.perNode)', () => {
  it('lists each profile Node with its capacity, allocatable and the requests of its pods', () => {
    const n1 = gpuNode('n1');
    n1.status = { ...n1.status, capacity: { cpu: '34', memory: '264Gi', 'nvidia.com/gpu': '4' } };
    const status = statusOf(cell(), [
      ...base(),
      n1,
      hostNamespace('tenant-a'),
      pod('running', 'tenant-a', 'n1', [{ cpu: '2', 'nvidia.com/gpu': '1' }], {
        init: [{ cpu: '3' }],
      }),
      // Pods of any namespace take the Node's capacity.
      pod('system', 'kube-system', 'n1', [{ cpu: '500m', memory: '1Gi' }]),
      pod('starting', 'tenant-a', 'n1', [{ cpu: '1' }], { phase: 'Pending' }),
      pod('done', 'tenant-a', 'n1', [{ cpu: '8' }], { phase: 'Succeeded' }),
      pod('failed', 'tenant-a', 'n1', [{ cpu: '8' }], { phase: 'Failed' }),
      pod('unbound', 'tenant-a', undefined, [{ cpu: '16' }]),
    ]);
    expect(status.nodes).to.deep.equal([
      {
        name: 'n1',
        profile: 'a100',
        ready: true,
        labelHash: expectedLabelHash({
          'kubecell.io/machine-profile': 'a100',
          'kubernetes.io/hostname': 'n1',
        }),
        capacity: { cpu: '34', memory: '264Gi', 'nvidia.com/gpu': '4' },
        allocatable: { cpu: '32', memory: '256Gi', 'nvidia.com/gpu': '4' },
        activeRequested: { cpu: '3500m', memory: '1Gi', 'nvidia.com/gpu': '1' },
        pendingRequested: { cpu: '1' },
        observedAt: '2026-11-30T12:00:00Z',
      },
    ]);
    expect(status.nodes?.[0]?.observedAt).to.equal(status.observedAt);
  });

  it('says why a Node is not Ready, sorted, and lists Nodes of the profile only, by name', () => {
    const sick = gpuNode('n0', {}, { ready: false, unschedulable: true });
    sick.status?.conditions?.push({ type: 'MemoryPressure', status: 'True' });
    const status = statusOf(cell(), [
      ...base(),
      gpuNode('n2'),
      sick,
      gpuNode('cpu-1', {}, { profile: 'cpu-only' }),
      gpuNode('n1'),
    ]);
    expect(status.nodes?.map((entry) => entry.name)).to.deep.equal(['n0', 'n1', 'n2']);
    expect(status.nodes?.[0]).to.deep.include({
      ready: false,
      readinessReasons: ['KubeletNotReady', 'MemoryPressure', 'Unschedulable'],
    });
    // A Ready Node without pods: no empty request maps, no empty reason list (absent means none).
    expect(status.nodes?.[1]).to.have.all.keys(
      'name',
      'profile',
      'ready',
      'labelHash',
      'capacity',
      'allocatable',
      'observedAt',
    );
  });

  it('writes quantities anew from their parsed values', () => {
    const status = statusOf(cell(), [
      ...base(),
      node('n1', { cpu: '4000m', memory: '1024Mi', 'nvidia.com/gpu': '4' }),
    ]);
    expect(status.nodes?.[0]?.allocatable).to.deep.equal({
      cpu: '4',
      memory: '1Gi',
      'nvidia.com/gpu': '4',
    });
  });

  it('changes labelHash when a label changes, and only then', () => {
    const hashOf = (labels: Record<string, string>) => {
      const n1 = gpuNode('n1');
      n1.metadata.labels = labels;
      return statusOf(cell(), [...base(), n1]).nodes?.[0]?.labelHash;
    };
    const labels = { 'kubecell.io/machine-profile': 'a100', zone: 'a', rack: 'r1' };
    const reordered = { rack: 'r1', zone: 'a', 'kubecell.io/machine-profile': 'a100' };
    expect(hashOf(labels)).to.equal(expectedLabelHash(labels));
    expect(hashOf(reordered)).to.equal(hashOf(labels));
    expect(hashOf({ ...labels, zone: 'b' })).not.to.equal(hashOf(labels));
  });

  it('lists every profile Node’s TopoLVM free capacity and the PersistentVolumes on it', () => {
    const annotated = {
      'capacity.topolvm.io/00default': '100Gi',
      'capacity.topolvm.io/ssd': '50Gi',
    };
    const volume = (name: string, size: string, on: string) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name },
      spec: {
        capacity: { storage: size },
        csi: { driver: 'topolvm.io' },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              {
                matchExpressions: [
                  { key: 'topology.topolvm.io/node', operator: 'In', values: [on] },
                ],
              },
            ],
          },
        },
      },
    });
    const status = statusOf(cell(), [
      ...base(),
      gpuNode('n1', {}, { annotations: annotated }),
      gpuNode('n2'),
      gpuNode('n3', {}, { annotations: annotated, ready: false }),
      volume('pv1', '500Gi', 'n1'),
      volume('pv2', '1Ti', 'n1'),
      volume('pv3', '10Gi', 'n3'),
    ]);
    expect(status.storageInventory?.perNode).to.deep.equal([
      { node: 'n1', freeCapacity: '150Gi', allocatedPV: '1524Gi' },
      { node: 'n2', allocatedPV: '0' },
      { node: 'n3', freeCapacity: '150Gi', allocatedPV: '10Gi' },
    ]);
  });

  it('says every Node is listed: NodeDetailTruncated False, nodeCount.omitted 0', () => {
    const status = statusOf(cell(), healthy());
    expect(status.nodeCount).to.deep.equal({ total: 2, ready: 2, omitted: 0 });
    expect(conditionOf(status, 'NodeDetailTruncated')).to.include({
      status: 'False',
      reason: 'NodeDetailComplete',
      message: 'status.nodes lists every profile Node (2)',
    });
    expect(status.phase).to.equal('Ready');
    expect(validateCell(fedBack(status)), JSON.stringify(validateCell.errors)).to.equal(true);
  });

  it('holds a change to a Node’s pod requests alone until the next renewal is due, but writes it at once with any other change', () => {
    const first = statusOf(cell(), healthy());
    const started = [
      ...healthy(),
      hostNamespace('tenant-a'),
      pod('p1', 'tenant-a', 'n1', [{ 'nvidia.com/gpu': '1' }], { phase: 'Pending' }),
    ];
    const held = syncCell(
      syncRequest(fedBack(first), relatedOf(started)),
      DEFAULT_CELL_CONFIG,
      at(10),
    );
    expect(held.status, 'the previous status').to.deep.equal(first);
    // The 60-s lease was renewed 10 s before NOW: its next renewal is due by NOW + 80 s.
    expect(held.resyncAfterSeconds, 'a sync when the hold ends').to.equal(70);
    const written = statusOf(fedBack(first), started, [], at(80));
    expect(written.nodes?.[0]?.pendingRequested).to.deep.equal({ 'nvidia.com/gpu': '1' });
    expect(written.observedAt).to.equal('2026-11-30T12:01:20Z');
    // The same pod, and n2 NotReady: the Node is news, and the pod goes with it.
    const n2Down = [
      ...started.filter((o) => o.metadata.name !== 'n2'),
      gpuNode('n2', {}, { ready: false }),
    ];
    const both = statusOf(fedBack(first), n2Down, [], at(10));
    expect(both.observedAt).to.equal('2026-11-30T12:00:10Z');
    expect(both.nodes?.map((entry) => entry.ready)).to.deep.equal([true, false]);
    expect(both.nodes?.[0]?.pendingRequested).to.deep.equal({ 'nvidia.com/gpu': '1' });
  });
});

/** A GPU Node of the usual shape: 6 resources, capacity above allocatable, TopoLVM, an address. */
function largeGpuNode(index: number): Node {
  const name = `gpu-${String(index).padStart(5, '0')}.a100.cluster.example`;
  const allocatable = {
    cpu: '126',
    memory: '1007Gi',
    'nvidia.com/gpu': '8',
    'ephemeral-storage': '3350Gi',
    pods: '110',
    'hugepages-1Gi': '0',
  };
  const built = gpuNode(name, allocatable, {
    address: `10.${Math.floor(index / 256)}.${index % 256}.10`,
    annotations: { 'capacity.topolvm.io/00default': '3Ti' },
  });
  built.status = {
    ...built.status,
    capacity: { ...allocatable, cpu: '128', memory: '1031Gi', 'ephemeral-storage': '3500Gi' },
  };
  return built;
}

/** Two pods on each Node: one Running, one bound and not Running yet. */
function podsOn(nodeName: string): KubernetesObject[] {
  return [
    pod(`${nodeName}-train`, 'tenant-a', nodeName, [
      { cpu: '32', memory: '256Gi', 'nvidia.com/gpu': '4' },
    ]),
    pod(
      `${nodeName}-next`,
      'tenant-a',
      nodeName,
      [{ cpu: '8', memory: '64Gi', 'nvidia.com/gpu': '2' }],
      {
        phase: 'Pending',
      },
    ),
  ];
}

function largeCell(count: number): CellStatus {
  const nodes = Array.from({ length: count }, (_, i) => largeGpuNode(i));
  return statusOf(cell(), [
    ...base(),
    hostNamespace('tenant-a'),
    ...nodes,
    ...nodes.flatMap((n) => podsOn(n.metadata.name)),
  ]);
}

const MIB = 1024 * 1024;

describe('Cell per-Node detail past its size bound (NodeDetailTruncated)', function () {
  // Two syncs of up to 2,500 Nodes and 5,000 pods: seconds on a busy 2-core machine.
  this.timeout(120_000);

  it('leaves out the last Nodes by name, counts them, and keeps the status under 1 MiB', () => {
    const total = 2500;
    const status = largeCell(total);
    const listed = status.nodes?.length ?? 0;
    const omitted = status.nodeCount?.omitted ?? 0;
    expect(omitted).to.be.greaterThan(0);
    expect(listed + omitted).to.equal(total);
    expect(status.nodeCount).to.include({ total, ready: total });
    const names = Array.from({ length: total }, (_, i) => largeGpuNode(i).metadata.name).sort();
    expect(status.nodes?.map((entry) => entry.name)).to.deep.equal(names.slice(0, listed));
    expect(status.storageInventory?.perNode?.map((entry) => entry.node)).to.deep.equal(
      names.slice(0, listed),
    );
    expect(conditionOf(status, 'NodeDetailTruncated')).to.include({
      status: 'True',
      reason: 'NodeDetailTruncated',
    });
    expect(conditionOf(status, 'NodeDetailTruncated')?.message).to.match(
      new RegExp(
        `^status\\.nodes lists the first ${listed} of ${total} profile Nodes by name: .*nodeCount\\.omitted counts the other ${omitted}, and the inventory still counts them`,
      ),
    );
    // The totals still count every Node: 8 GPUs each, 4 + 2 requested on each.
    expect(status.inventory?.['nvidia.com/gpu']).to.include({
      allocatable: '20k',
      requested: '15k',
    });
    expect(status.phase, 'informational').to.equal('Ready');
    const bytes = Buffer.byteLength(JSON.stringify(status));
    expect(bytes).to.be.lessThan(MIB);
    expect(validateCell(fedBack(status)), JSON.stringify(validateCell.errors)).to.equal(true);

    // One Node fewer than where truncation starts: every Node is listed.
    const whole = largeCell(listed);
    expect(whole.nodeCount?.omitted).to.equal(0);
    expect(whole.nodes).to.have.length(listed);
    expect(conditionOf(whole, 'NodeDetailTruncated')?.reason).to.equal('NodeDetailComplete');

    // JSON leaves out members whose value is undefined.
    const withoutDetail = Buffer.byteLength(
      JSON.stringify({
        ...whole,
        nodes: undefined,
        storageInventory: { ...whole.storageInventory, perNode: undefined },
      }),
    );
    const wholeBytes = Buffer.byteLength(JSON.stringify(whole));
    const perNode = (wholeBytes - withoutDetail) / listed;
    console.log(
      `      [measured] per-Node detail: ${perNode.toFixed(1)} bytes of status JSON per Node (nodes[] entry + perNode entry, observedAt included); ` +
        `truncation starts at ${listed + 1} Nodes (${listed} listed); status ${wholeBytes} bytes at ${listed} Nodes, ${bytes} bytes at ${total} Nodes (${omitted} omitted)`,
    );
  });
});
