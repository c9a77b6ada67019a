// VirtualCluster resolution: the feasibility evaluation, the snapshot and its endpoint address.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import type { CellNodeAddress } from '../generated/types/index.js';
import { InvalidHookInputError } from '../metacontroller/invalid-input.js';
import { chooseEndpoint, isOlder } from './resolve.js';
import {
  acceptedRelated,
  cell,
  condition,
  hostNamespace,
  LATER,
  NODE_ADDRESSES,
  smallClass,
  statusOf,
  runSync,
  syncRequest,
  validatedSync,
  VC_UID,
  virtualCluster,
  withStatus,
} from './testing.js';

describe('VirtualCluster controller', () => {
  describe('creation', () => {
    it('stays Pending with the feasibility report and a resync when the placement is rejected', () => {
      const staleCell = cell();
      staleCell.status!.managedCluster!.leaseFresh = false;
      const response = runSync(virtualCluster(), [staleCell, smallClass(), hostNamespace()]);
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
        result: 'Unknown',
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
        endpointAddress: chooseEndpoint(NODE_ADDRESSES, VC_UID)?.address,
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

    it('stays Pending with NoEndpointAddress while the Cell publishes no Node address', () => {
      for (const addresses of [[], undefined]) {
        const bare = cell({ addresses: addresses ?? [] });
        if (addresses === undefined) delete bare.status!.nodeAddresses;
        const response = runSync(virtualCluster(), [bare, smallClass(), hostNamespace()]);
        expect(statusOf(response).phase).to.equal('Pending');
        expect(condition(response, 'Feasible')).to.deep.include({ status: 'True' });
        expect(condition(response, 'Resolved')).to.deep.include({
          reason: 'NoEndpointAddress',
          message:
            "The Cell's status.nodeAddresses lists no usable address: no Ready, schedulable Node labelled kubecell.io/machine-profile=a100 has an InternalIP that is an IP address (the Cell's NodeAddressesValid condition names those whose is not), so there is no address for the API endpoint yet.",
        });
        expect(response.children).to.deep.equal([]);
      }
    });
  });

  describe('the endpoint address rule', () => {
    const addresses: CellNodeAddress[] = [
      { node: 'node-c', address: '10.0.0.3' },
      { node: 'node-a', address: '10.0.0.1' },
      { node: 'node-b', address: '10.0.0.2' },
    ];

    it('is deterministic whatever the order the Cell lists its Nodes in, and spreads over all of them', () => {
      const picks = new Set<string>();
      for (let i = 0; i < 50; i += 1) {
        const choice = chooseEndpoint(addresses, `uid-${i}`);
        expect(choice).to.deep.equal(chooseEndpoint([...addresses].reverse(), `uid-${i}`));
        picks.add(choice?.address ?? '');
      }
      expect([...picks].sort()).to.deep.equal(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
    });

    it('takes index sha256(uid) mod n of the addresses sorted by Node name, as the rule over the Nodes did', () => {
      const sorted = ['node-a', 'node-b', 'node-c'];
      for (let i = 0; i < 20; i += 1) {
        const digest = createHash('sha256').update(`uid-${i}`).digest();
        const index = Number(digest.readBigUInt64BE(0) % 3n);
        expect(chooseEndpoint(addresses, `uid-${i}`)?.node).to.equal(sorted[index]);
      }
    });

    it('skips an entry whose address is empty; a Cell listing one without a Node name is refused', () => {
      const odd = [
        { node: 'node-a', address: '' },
        { node: 'node-c', address: '10.0.0.3' },
      ];
      expect(chooseEndpoint(odd, 'x')).to.deep.equal({ node: 'node-c', address: '10.0.0.3' });
      expect(chooseEndpoint(odd.slice(0, 1), 'x')).to.equal(undefined);
      // The Cell's schema requires both (the validation layer answers 400 naming the field).
      const nameless = cell({ addresses: [{ node: '', address: '10.0.0.5' }] });
      expect(() => validatedSync(syncRequest(virtualCluster(), [nameless, smallClass()])))
        .to.throw(InvalidHookInputError)
        .with.property('message')
        .that.includes('status.nodeAddresses[0].node');
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
