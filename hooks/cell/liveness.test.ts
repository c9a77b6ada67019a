import { expect } from 'chai';
import {
  cell,
  conditionOf,
  gpuNode,
  healthy,
  lease,
  managedCluster,
  readyProvider,
  statusOf,
} from './testing.js';

describe('Cell liveness (from the ManagedCluster, as OCM judges the lease)', () => {
  it('is Ready with a joined cluster whose lease OCM finds renewed, observed inventory and ready provider', () => {
    const status = statusOf(cell(), healthy());
    expect(status.phase).to.equal('Ready');
    expect(conditionOf(status, 'Ready')).to.include({ status: 'True', reason: 'Ready' });
    expect(conditionOf(status, 'LeaseFresh')).to.include({
      status: 'True',
      reason: 'LeaseRenewed',
    });
    expect(status.managedCluster).to.deep.equal({
      name: 'cluster1',
      uid: 'mc-uid-1',
      joined: true,
      available: true,
      leaseFresh: true,
    });
    expect(status.provider).to.include({
      k3kVersion: 'v1.1.0',
      controllerReady: true,
      topolvmReady: true,
    });
  });

  it('is Degraded once OCM sets Available to Unknown with reason ManagedClusterLeaseUpdateStopped', () => {
    const status = statusOf(cell(), [
      managedCluster('mc-uid-1', 'leaseStale'),
      gpuNode('n1'),
      ...readyProvider(),
    ]);
    expect(status.phase).to.equal('Degraded');
    expect(status.managedCluster).to.include({ available: false, leaseFresh: false });
    expect(conditionOf(status, 'LeaseFresh')).to.include({ status: 'False', reason: 'LeaseStale' });
    expect(conditionOf(status, 'Ready')).to.include({ status: 'False', reason: 'LeaseStale' });
  });

  it('counts a lease fresh while Available is reported otherwise, even False or Unknown for another reason', () => {
    const unavailable = statusOf(cell(), [
      managedCluster('mc-uid-1', false),
      gpuNode('n1'),
      ...readyProvider(),
    ]);
    expect(unavailable.managedCluster).to.include({ available: false, leaseFresh: true });
    expect(conditionOf(unavailable, 'Available')).to.include({ status: 'False' });
    expect(unavailable.phase, 'Available is informational').to.equal('Ready');
  });

  it('says nothing of the lease while Available is not reported: LeaseFresh Unknown, Degraded', () => {
    const status = statusOf(cell(), [
      managedCluster('mc-uid-1', 'unreported'),
      gpuNode('n1'),
      ...readyProvider(),
    ]);
    expect(status.managedCluster).not.to.have.property('leaseFresh');
    expect(conditionOf(status, 'LeaseFresh')).to.include({
      status: 'Unknown',
      reason: 'AvailableNotReported',
    });
    expect(status.phase).to.equal('Degraded');
  });

  it('never reads the Lease: a related Lease, however old or recent, changes nothing', () => {
    const without = JSON.stringify(statusOf(cell(), healthy()));
    expect(JSON.stringify(statusOf(cell(), [...healthy(), lease(3600)]))).to.equal(without);
    expect(JSON.stringify(statusOf(cell(), [...healthy(), lease(1)]))).to.equal(without);
  });

  it('is Pending when the ManagedCluster is absent or not accepted', () => {
    const absent = statusOf(cell(), [gpuNode('n1'), ...readyProvider()]);
    expect(absent.phase).to.equal('Pending');
    expect(conditionOf(absent, 'Joined')).to.include({ reason: 'ManagedClusterNotFound' });
    expect(conditionOf(absent, 'LeaseFresh')).to.include({
      status: 'Unknown',
      reason: 'AvailableNotReported',
    });
    const notAccepted = managedCluster();
    notAccepted.spec.hubAcceptsClient = false;
    const status = statusOf(cell(), [notAccepted, gpuNode('n1'), ...readyProvider()]);
    expect(conditionOf(status, 'Joined')?.reason).to.equal('ManagedClusterNotAccepted');
  });

  it('is Failed when the ManagedCluster UID changes, until the operator accepts the new UID', () => {
    const first = statusOf(cell(), healthy());
    const replaced = [managedCluster('mc-uid-2'), gpuNode('n1'), ...readyProvider()];
    const seen = { ...cell(), status: first };
    const failed = statusOf(seen, replaced);
    expect(failed.phase).to.equal('Failed');
    expect(conditionOf(failed, 'Ready')?.reason).to.equal('ManagedClusterReplaced');
    expect(failed.managedCluster?.uid, 'the first UID stays recorded').to.equal('mc-uid-1');
    // Absent for a while: the recorded UID is kept, so the replacement is still caught later.
    const whileAbsent = statusOf({ ...cell(), status: failed }, readyProvider());
    expect(whileAbsent.managedCluster?.uid).to.equal('mc-uid-1');
    const accepted = cell({
      annotations: { 'kubecell.io/accept-managed-cluster-uid': 'mc-uid-2' },
    });
    const recovered = statusOf({ ...accepted, status: failed }, replaced);
    expect(recovered.phase).to.equal('Ready');
    expect(recovered.managedCluster?.uid).to.equal('mc-uid-2');
  });
});
