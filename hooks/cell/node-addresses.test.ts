// Issue 23: a Node address that is not an IP address never reaches a Cell's status, whether the
// Cell reads its Nodes (Local) or its cell agent reports them (ManifestWork); the Cell names the
// Nodes left out, never their addresses, and the status stays one the CRD accepts.
import { expect } from 'chai';
import request from 'supertest';
import { productApp } from '../controllers/testing.js';
import type { Cell, CellStatus } from '../generated/types/index.js';
import { validateCell } from '../generated/validators.js';
import { HOSTILE_ADDRESSES, HOSTILE_BYTES, PROXY_INJECTION } from '../kube/testing.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { parseCellReport, serializeCellReport } from '../remote/report.js';
import { clusterReport } from './cluster-report.js';
import { DEFAULT_CELL_CONFIG } from './config.js';
import { observeCluster } from './observe.js';
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
import { syncCell } from './sync.js';

const config = DEFAULT_CELL_CONFIG;

function cluster(addresses: Record<string, string>): KubernetesObject[] {
  return [
    managedCluster(),
    lease(10),
    ...readyProvider(),
    ...Object.entries(addresses).map(([name, address]) => gpuNode(name, {}, { address })),
  ];
}

function asCell(status: CellStatus): Cell {
  return { ...cell(), status };
}

function remoteStatus(report: string): CellStatus {
  const related = remoteRelatedOf([managedCluster(), lease(10), agentWork(report)]);
  return syncCell(syncRequest(remoteCell(), related), config, NOW).status as CellStatus;
}

/** What the cell agent reports from `objects` on its cluster. */
function agentReport(objects: KubernetesObject[]): string {
  const observation = observeCluster(relatedOf(objects), 'a100', config);
  return serializeCellReport(clusterReport('a100', observation, NOW));
}

describe('Cell Node addresses that are not IP addresses (issue 23)', () => {
  it('leaves each out of status.nodeAddresses and names its Node, never its address', () => {
    for (const hostile of [...HOSTILE_ADDRESSES, 'node-9.example.com']) {
      const objects = cluster({ n1: '10.0.0.1', n2: hostile, n3: 'fd00::3' });
      const status = statusOf(cell(), objects);
      expect(status.nodeAddresses, JSON.stringify(hostile)).to.deep.equal([
        { node: 'n1', address: '10.0.0.1' },
        { node: 'n3', address: 'fd00::3' },
      ]);
      expect(conditionOf(status, 'NodeAddressesValid')).to.include({
        status: 'False',
        reason: 'NodeAddressInvalid',
      });
      expect(conditionOf(status, 'NodeAddressesValid')?.message).to.match(
        /^left out of status\.nodeAddresses, so no VirtualCluster takes them as its endpoint: 1 Ready, schedulable profile Node\(s\) whose InternalIP is not an IPv4 or IPv6 address \(no brackets, no zone\): n2\. Correct/,
      );
      expect(JSON.stringify(status)).not.to.match(HOSTILE_BYTES);
      // Informational: the other Nodes still serve.
      expect(status.phase).to.equal('Ready');
      expect(validateCell(asCell(status)), JSON.stringify(validateCell.errors)).to.equal(true);
      expect(JSON.stringify(statusOf(cell(), objects))).to.equal(JSON.stringify(status));
    }
  });

  it('says every address is one on a Cell whose Nodes list IP addresses', () => {
    const status = statusOf(cell(), cluster({ n1: '10.0.0.1', n2: 'fd00::2' }));
    expect(conditionOf(status, 'NodeAddressesValid')).to.include({
      status: 'True',
      reason: 'NodeAddressesValid',
    });
  });

  it('counts every refused Node, names ten, and gives the 16 slots to Nodes with an IP', () => {
    const addresses: Record<string, string> = {};
    for (let i = 0; i < 20; i++) addresses[`a${String(i).padStart(2, '0')}`] = `bad ${i}`;
    for (let i = 0; i < 18; i++) addresses[`n${String(i).padStart(2, '0')}`] = `10.0.1.${i}`;
    const status = statusOf(cell(), cluster(addresses));
    expect(status.nodeAddresses?.map((entry) => entry.node)).to.deep.equal(
      Array.from({ length: 16 }, (_, i) => `n${String(i).padStart(2, '0')}`),
    );
    const message = conditionOf(status, 'NodeAddressesValid')?.message ?? '';
    expect(message).to.include(
      '20 Ready, schedulable profile Node(s) whose InternalIP is not an IPv4 or IPv6 address (no brackets, no zone): a00, a01, a02, a03, a04, a05, a06, a07, a08, a09 and 10 more.',
    );
  });

  it('answers 200 over HTTP with a status the CRD accepts, for the injection of the finding', async () => {
    const { app } = await productApp(NOW);
    const related = relatedOf(cluster({ n1: PROXY_INJECTION, n2: '10.0.0.2' }));
    const response = await request(app)
      .post('/hooks/cell/sync')
      .send({ parent: cell(), children: {}, related, finalizing: false })
      .expect(200);
    const status = response.body.status as CellStatus;
    expect(status.nodeAddresses).to.deep.equal([{ node: 'n2', address: '10.0.0.2' }]);
    expect(response.text).not.to.match(HOSTILE_BYTES);
    expect(validateCell(asCell(status))).to.equal(true);
  });
});

describe('reported Node addresses on a ManifestWork Cell (issue 23)', () => {
  it('the agent leaves them out and reports the Nodes; the hub names them as reported', () => {
    const objects = cluster({ n1: '10.0.0.1', n2: PROXY_INJECTION, n3: 'fe80::1%eth0' });
    const report = agentReport(objects);
    expect(report).not.to.match(HOSTILE_BYTES);
    expect(parseCellReport(report)).to.deep.include({
      nodeAddresses: [{ node: 'n1', address: '10.0.0.1' }],
      refusedNodeAddresses: { count: 2, nodes: ['n2', 'n3'] },
    });
    const remote = remoteStatus(report);
    const local = statusOf(cell(), objects);
    expect(remote.nodeAddresses).to.deep.equal(local.nodeAddresses);
    expect(conditionOf(remote, 'NodeAddressesValid')).to.include({
      status: 'False',
      reason: 'NodeAddressInvalid',
    });
    expect(conditionOf(remote, 'NodeAddressesValid')?.message).to.include(
      '2 Ready, schedulable profile Node(s) (as the cell agent reports them) whose InternalIP is not an IPv4 or IPv6 address (no brackets, no zone): n2, n3.',
    );
    expect(validateCell(asCell(remote))).to.equal(true);
  });

  it('a report without refusals is the bytes it was before the field existed', () => {
    const report = agentReport(cluster({ n1: '10.0.0.1' }));
    expect(report).not.to.include('refusedNodeAddresses');
  });

  it('refuses a report that carries one, naming the field and not its bytes', () => {
    for (const hostile of HOSTILE_ADDRESSES) {
      const report = JSON.parse(agentReport(cluster({ n1: '10.0.0.1' }))) as {
        nodeAddresses: { node: string; address: string }[];
      };
      report.nodeAddresses.push({ node: 'n2', address: hostile });
      const status = remoteStatus(JSON.stringify(report));
      expect(conditionOf(status, 'InventoryFresh'), JSON.stringify(hostile)).to.include({
        status: 'False',
        reason: 'AgentReportUnparsable',
      });
      const message = conditionOf(status, 'InventoryFresh')?.message ?? '';
      expect(message).to.match(
        /: not a cell agent report: report\.nodeAddresses\[1\]\.address: must be an IPv4 or IPv6 address \(no brackets, no zone\)(; [^;]*more than 64 characters)?$/,
      );
      expect(status.nodeAddresses).to.deep.equal([]);
      expect(JSON.stringify(status)).not.to.match(HOSTILE_BYTES);
      expect(validateCell(asCell(status))).to.equal(true);
    }
  });

  it('refuses a report whose refused Nodes are not Node names', () => {
    const report = JSON.parse(agentReport(cluster({ n1: '10.0.0.1' }))) as Record<string, unknown>;
    report['refusedNodeAddresses'] = { count: 1, nodes: [`n2${PROXY_INJECTION}`] };
    const message = conditionOf(remoteStatus(JSON.stringify(report)), 'InventoryFresh')?.message;
    expect(message).to.match(
      /report\.refusedNodeAddresses\.nodes\[0\]: must be a Node name \(a DNS-1123 subdomain\)$/,
    );
    expect(message).not.to.match(HOSTILE_BYTES);
  });
});
