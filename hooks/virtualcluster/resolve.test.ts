// VirtualCluster resolution: the feasibility evaluation, the snapshot and its endpoint address.
import { expect } from 'chai';
import { chooseEndpoint, isOlder } from './resolve.js';
import {
  acceptedRelated,
  cell,
  condition,
  hostNamespace,
  LATER,
  node,
  smallClass,
  statusOf,
  runSync,
  VC_UID,
  virtualCluster,
  withStatus,
} from './testing.js';

describe('VirtualCluster controller', () => {
  describe('creation', () => {
    it('stays Pending with the feasibility report and a resync when the placement is rejected', () => {
      const staleCell = cell();
      staleCell.status!.managedCluster!.leaseFresh = false;
      const response = runSync(virtualCluster(), [
        staleCell,
        smallClass(),
        hostNamespace(),
        node('node-a', '10.0.12.7'),
      ]);
      const status = statusOf(response);
      expect(status.phase).to.equal('Pending');
      expect(status.resolved).to.equal(undefined);
      expect(response.children).to.deep.equal([]);
      expect(response.resyncAfterSeconds).to.equal(30);
      const live = status.feasibilityChecks?.find((check) => check.name === 'CellLive');
      expect(live).to.deep.include({ result: 'Fail', reason: 'LeaseStale' });
      expect(condition(response, 'Feasible')).to.deep.include({
        status: 'False',
        reason: 'Rejected',
      });
      expect(condition(response, 'Resolved')).to.deep.include({
        status: 'False',
        reason: 'FeasibilityRejected',
      });
      expect(condition(response, 'Ready')).to.deep.include({ status: 'False', reason: 'Pending' });
    });

    it('stays Pending (Unknown) while the class is not found or the Cell has no status', () => {
      const noStatus = cell();
      delete noStatus.status;
      const unknown = runSync(virtualCluster(), [noStatus, smallClass(), hostNamespace()]);
      expect(statusOf(unknown).phase).to.equal('Pending');
      expect(condition(unknown, 'Feasible')).to.deep.include({
        status: 'Unknown',
        reason: 'Unknown',
      });
      const noClass = runSync(virtualCluster(), [cell(), hostNamespace()]);
      expect(statusOf(noClass).phase).to.equal('Pending');
      expect(statusOf(noClass).feasibilityChecks?.[1]).to.deep.include({
        name: 'ClassFound',
        result: 'Fail',
      });
    });

    it('writes the snapshot once accepted, with the fields DESIGN names, and renders the children', () => {
      const response = runSync(virtualCluster());
      const status = statusOf(response);
      expect(status.phase).to.equal('Provisioning');
      expect(status.resolved).to.deep.equal({
        cell: {
          name: 'cell1',
          uid: 'cell1-uid',
          managedClusterName: 'cell1',
          machineProfile: {
            name: 'a100',
            devices: [{ name: 'gpu', resourceName: 'nvidia.com/gpu' }],
          },
        },
        class: {
          name: 'small',
          uid: 'small-uid',
          storageClassName: 'topolvm-provisioner',
          entitlement: {
            workloadHard: {
              persistentvolumeclaims: '10',
              pods: '50',
              'requests.cpu': '4',
              'requests.memory': '16Gi',
              'requests.nvidia.com/gpu': '2',
              'requests.storage': '100Gi',
            },
          },
        },
        hostNamespace: 'tenant-a',
        endpointAddress: chooseEndpoint(
          [node('node-a', '10.0.12.7'), node('node-b', '10.0.12.8')],
          'a100',
          VC_UID,
        )?.address,
        resolvedAt: '2026-11-30T00:00:00Z',
      });
      expect(response.children.map((c) => `${c.kind}/${c.metadata.name}`)).to.deep.equal([
        'Cluster/team-a',
        'ResourceQuota/kubecell-team-a-quota',
        'LimitRange/kubecell-team-a-defaults',
        'Service/kubecell-team-a-api',
      ]);
      for (const child of response.children) {
        expect(child.metadata.namespace).to.equal('tenant-a');
      }
      expect(condition(response, 'Resolved')).to.deep.include({ status: 'True' });
      expect(response.resyncAfterSeconds).to.equal(30);
    });

    it('stays Pending with NoEndpointAddress when no Ready, schedulable profile Node has an InternalIP', () => {
      const response = runSync(virtualCluster(), [
        cell(),
        smallClass(),
        hostNamespace(),
        node('node-a', '10.0.12.7', { ready: false }),
        node('node-b', '10.0.12.8', { unschedulable: true }),
        node('node-c', '10.0.99.1', { profile: 'h100' }),
      ]);
      expect(statusOf(response).phase).to.equal('Pending');
      expect(condition(response, 'Feasible')).to.deep.include({ status: 'True' });
      expect(condition(response, 'Resolved')).to.deep.include({ reason: 'NoEndpointAddress' });
      expect(response.children).to.deep.equal([]);
    });
  });

  describe('the endpoint address rule', () => {
    const nodes = [
      node('node-c', '10.0.0.3'),
      node('node-a', '10.0.0.1'),
      node('node-b', '10.0.0.2'),
      node('node-x', '10.0.0.9', { ready: false }),
      node('node-y', '10.0.0.8', { unschedulable: true }),
      node('node-z', '10.0.0.7', { profile: 'other' }),
    ];

    it('is deterministic and ignores Nodes that are not Ready, cordoned or of another profile', () => {
      const picks = new Set<string>();
      for (let i = 0; i < 50; i += 1) {
        const choice = chooseEndpoint(nodes, 'a100', `uid-${i}`);
        expect(choice).to.deep.equal(chooseEndpoint([...nodes].reverse(), 'a100', `uid-${i}`));
        picks.add(choice?.address ?? '');
      }
      expect([...picks].sort()).to.deep.equal(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
    });

    it('takes the first InternalIP of the chosen Node', () => {
      const dual = node('node-a', '10.0.0.1');
      dual.status!.addresses = [
        { type: 'ExternalIP', address: '203.0.113.5' },
        { type: 'InternalIP', address: '10.0.0.1' },
        { type: 'InternalIP', address: 'fd00::1' },
      ];
      expect(chooseEndpoint([dual], 'a100', 'x')).to.deep.equal({
        node: 'node-a',
        address: '10.0.0.1',
      });
    });
  });

  describe('one VirtualCluster per namespace', () => {
    const older = virtualCluster({
      name: 'first',
      uid: 'first-uid',
      created: '2026-11-01T00:00:00Z',
    });
    const newer = virtualCluster({
      name: 'second',
      uid: 'second-uid',
      created: '2026-11-02T00:00:00Z',
    });

    it('fails the newer one and lets the older one resolve', () => {
      const forNewer = runSync(newer, [...acceptedRelated(), older]);
      expect(statusOf(forNewer).phase).to.equal('Failed');
      expect(condition(forNewer, 'Ready')).to.deep.include({
        status: 'False',
        reason: 'NamespaceOccupied',
      });
      expect(statusOf(forNewer).resolved).to.equal(undefined);
      expect(forNewer.children).to.deep.equal([]);
      expect(
        statusOf(forNewer).feasibilityChecks?.find((c) => c.name === 'NamespaceAvailable'),
      ).to.deep.include({ result: 'Fail', reason: 'NamespaceOccupied' });

      const forOlder = runSync(older, [...acceptedRelated(), newer]);
      expect(statusOf(forOlder).phase).to.equal('Provisioning');
      expect(statusOf(forOlder).resolved).to.not.equal(undefined);
    });

    it('waits Pending (not Failed) while the older one is being deleted', () => {
      const leaving = structuredClone(older);
      leaving.metadata.deletionTimestamp = '2026-11-29T23:00:00Z';
      const response = runSync(newer, [...acceptedRelated(), leaving]);
      expect(statusOf(response).phase).to.equal('Pending');
      expect(
        statusOf(response).feasibilityChecks?.find((c) => c.name === 'NamespaceAvailable'),
      ).to.deep.include({ result: 'Fail', reason: 'NamespaceOccupied' });
      const gone = runSync(withStatus(newer, response.status), acceptedRelated());
      expect(statusOf(gone).phase).to.equal('Provisioning');
    });

    it('compares creationTimestamp, then name', () => {
      const a = virtualCluster({ name: 'a', created: '2026-11-02T00:00:00Z' });
      const b = virtualCluster({ name: 'b', created: '2026-11-02T00:00:00Z' });
      expect(isOlder(a, b)).to.equal(true);
      expect(isOlder(b, a)).to.equal(false);
      expect(isOlder(older, a)).to.equal(true);
    });

    it('stays Failed after the older one is gone and after re-applying (a new generation)', () => {
      const failed = runSync(newer, [...acceptedRelated(), older]);
      const again = runSync(
        withStatus({ ...newer, metadata: { ...newer.metadata, generation: 2 } }, failed.status),
        acceptedRelated(),
        [],
        LATER,
      );
      expect(statusOf(again).phase).to.equal('Failed');
      expect(statusOf(again).resolved).to.equal(undefined);
      expect(again.children).to.deep.equal([]);
      expect(condition(again, 'Ready')).to.deep.include({ reason: 'NamespaceOccupied' });
    });
  });
});
