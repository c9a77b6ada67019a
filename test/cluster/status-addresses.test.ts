// Issue 23, at the apiserver: the CRDs refuse a status address that is not an IP address (a
// Cell's status.nodeAddresses) or an IP address or DNS-1123 hostname (a VirtualCluster's
// status.endpoint and status.resolved.endpointAddress share the definition), whoever writes the
// status. The formats are the apiserver's own (kube-openapi strfmt: ipv4 with Go's
// ParseIPSloppy, ipv6 with net.ParseIP, which refuses a zone), the hostname branch a pattern.
// The status patches are server-side dry-runs, so the controllers of the shared cluster, which
// write these statuses too, are not disturbed.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { HOSTILE_ADDRESSES } from '../../hooks/kube/testing.js';
import type { ControlPlane } from '../../harness/cluster/control-plane.js';
import { applyObject, installKubeCellApi } from '../../harness/cluster/kubecell.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getCluster } from './shared-cluster.js';

const RUN = randomBytes(3).toString('hex');
const CELL = `addr-cell-${RUN}`;
const VC = `addr-vc-${RUN}`;
const VC_NAMESPACE = 'tenant-a';

describe('status addresses the CRDs refuse (real apiserver, issue 23)', function () {
  let cluster: ControlPlane;

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    cluster = await getCluster();
    await installKubeCellApi(cluster);
    const object = (kind: string, name: string, namespace: string, spec: object) => ({
      apiVersion: 'kubecell.io/v1alpha1',
      kind,
      metadata: { name, namespace },
      spec,
    });
    await applyObject(
      cluster,
      object('Cell', CELL, 'kubecell-system', {
        managedClusterRef: { name: CELL },
        machineProfile: { name: 'a100' },
      }),
    );
    await applyObject(
      cluster,
      object('VirtualCluster', VC, VC_NAMESPACE, {
        cellRef: { name: CELL },
        classRef: { name: 'small' },
      }),
    );
  });

  after(async function () {
    this.timeout(60_000);
    await cluster?.kubectl(['delete', 'cell', CELL, '-n', 'kubecell-system', '--wait=false']);
    await cluster?.kubectl(['delete', 'virtualcluster', VC, '-n', VC_NAMESPACE, '--wait=false']);
  });

  /** A server-side dry-run of a merge patch of the status: the apiserver's answer. */
  const patchStatus = (resource: string, name: string, namespace: string, status: unknown) =>
    cluster.kubectl([
      'patch',
      resource,
      name,
      '-n',
      namespace,
      '--subresource=status',
      '--type=merge',
      '--dry-run=server',
      '-p',
      JSON.stringify({ status }),
    ]);

  it('Cell: status.nodeAddresses[].address takes IPv4 and IPv6 addresses only', async function () {
    this.timeout(120_000);
    for (const address of ['10.0.0.7', 'fd00::7']) {
      const result = await patchStatus('cell', CELL, 'kubecell-system', {
        nodeAddresses: [{ node: 'n1', address }],
      });
      expect(result.code, `${address}: ${result.stderr}`).to.equal(0);
    }
    for (const address of [...HOSTILE_ADDRESSES, 'node-1.example.com']) {
      const result = await patchStatus('cell', CELL, 'kubecell-system', {
        nodeAddresses: [{ node: 'n1', address }],
      });
      expect(result.code, `${JSON.stringify(address)} was accepted`).to.not.equal(0);
      expect(result.stderr).to.contain('status.nodeAddresses[0].address');
    }
  });

  it('VirtualCluster: status.endpoint.address takes IP addresses and DNS-1123 hostnames only', async function () {
    this.timeout(120_000);
    for (const address of ['10.0.0.7', 'fd00::7', 'api.cell1.example.com']) {
      const result = await patchStatus('virtualcluster', VC, VC_NAMESPACE, {
        endpoint: { address, port: 31234 },
      });
      expect(result.code, `${address}: ${result.stderr}`).to.equal(0);
    }
    for (const address of HOSTILE_ADDRESSES) {
      const result = await patchStatus('virtualcluster', VC, VC_NAMESPACE, {
        endpoint: { address, port: 31234 },
      });
      expect(result.code, `${JSON.stringify(address)} was accepted`).to.not.equal(0);
      expect(result.stderr).to.contain('status.endpoint.address');
    }
  });
});
