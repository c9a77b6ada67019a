import { expect } from 'chai';
import type { Cell, CellStatus } from '../generated/types/index.js';
import { TYPE_KEYS } from '../kube/objects.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { DEFAULT_CELL_CONFIG } from './config.js';
import { LEASE_WATCH_MIN_SECONDS } from './liveness.js';
import { syncCell } from './sync.js';
import {
  NOW,
  cell,
  conditionOf,
  gpuNode,
  healthy,
  lease,
  managedCluster,
  readyProvider,
  relatedOf,
  statusOf,
  syncRequest,
} from './testing.js';

const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
const fedBack = (status: CellStatus): Cell => ({ ...cell(), status });

/** A joined cluster, its Lease as given (none when undefined), Nodes and a ready provider. */
function hub(
  theLease: KubernetesObject | undefined,
  cluster: KubernetesObject = managedCluster(),
): KubernetesObject[] {
  return [cluster, ...(theLease ? [theLease] : []), gpuNode('n1'), ...readyProvider()];
}

/** The ManagedCluster with spec.leaseDurationSeconds as given; unset when undefined. */
function clusterWithLease(seconds: number | undefined): KubernetesObject {
  const cluster = managedCluster();
  const spec: { leaseDurationSeconds?: number } = cluster.spec;
  if (seconds === undefined) delete spec.leaseDurationSeconds;
  else spec.leaseDurationSeconds = seconds;
  return cluster;
}

/** The Lease with spec.renewTime as given. */
function leaseRenewedAt(renewTime: unknown): KubernetesObject {
  return { ...lease(0), spec: { renewTime } } as KubernetesObject;
}

describe('Cell liveness (from the Lease managed-cluster-lease; OCM’s verdict also counts)', () => {
  it('is Ready with a joined cluster whose Lease was renewed, observed inventory and ready provider', () => {
    const status = statusOf(cell(), healthy());
    expect(status.phase).to.equal('Ready');
    expect(conditionOf(status, 'Ready')).to.include({ status: 'True', reason: 'Ready' });
    expect(conditionOf(status, 'LeaseFresh')).to.include({
      status: 'True',
      reason: 'LeaseRenewed',
      message:
        'the Lease managed-cluster-lease in namespace cluster1 was renewed within 5 × leaseDurationSeconds (300 s)',
    });
    expect(status.managedCluster).to.deep.equal({
      name: 'cluster1',
      uid: 'mc-uid-1',
      joined: true,
      available: true,
      leaseFresh: true,
      leaseRenewTime: '2026-11-30T11:59:50.000Z',
      leaseDurationSeconds: 60,
    });
    expect(status.provider).to.include({
      k3kVersion: 'v1.1.0',
      controllerReady: true,
      topolvmReady: true,
    });
  });

  it('is Degraded when the Lease was renewed 400 s ago, although Available still says True', () => {
    const status = statusOf(cell(), hub(lease(400)));
    expect(status.phase).to.equal('Degraded');
    expect(status.managedCluster).to.include({
      available: true,
      leaseFresh: false,
      leaseRenewTime: '2026-11-30T11:53:20.000Z',
    });
    expect(conditionOf(status, 'Available')).to.include({ status: 'True' });
    expect(conditionOf(status, 'LeaseFresh')).to.include({ status: 'False', reason: 'LeaseStale' });
    expect(conditionOf(status, 'LeaseFresh')?.message).to.equal(
      'the Lease managed-cluster-lease in namespace cluster1 was not renewed for 5 × leaseDurationSeconds (300 s), whatever ManagedClusterConditionAvailable says: the registration agent of ManagedCluster cluster1 stopped renewing it, or cannot reach the hub',
    );
    expect(conditionOf(status, 'Ready')).to.include({ status: 'False', reason: 'LeaseStale' });
  });

  it('counts the Lease stale exactly 5 × leaseDurationSeconds after its renewTime', () => {
    expect(statusOf(cell(), hub(lease(299))).managedCluster?.leaseFresh).to.equal(true);
    expect(statusOf(cell(), hub(lease(300))).managedCluster?.leaseFresh).to.equal(false);
  });

  it('judges by the ManagedCluster’s spec.leaseDurationSeconds, 60 s when unset or 0', () => {
    const tenSeconds = clusterWithLease(10);
    expect(statusOf(cell(), hub(lease(49), tenSeconds)).managedCluster).to.include({
      leaseFresh: true,
      leaseDurationSeconds: 10,
    });
    const stale = statusOf(cell(), hub(lease(50), tenSeconds));
    expect(stale.managedCluster?.leaseFresh).to.equal(false);
    expect(conditionOf(stale, 'LeaseFresh')?.message).to.contain('5 × leaseDurationSeconds (50 s)');
    for (const declared of [undefined, 0]) {
      const cluster = clusterWithLease(declared);
      const label = `leaseDurationSeconds ${String(declared)}`;
      expect(statusOf(cell(), hub(lease(299), cluster)).managedCluster, label).to.include({
        leaseFresh: true,
        leaseDurationSeconds: 60,
      });
      expect(statusOf(cell(), hub(lease(300), cluster)).managedCluster?.leaseFresh, label).to.equal(
        false,
      );
    }
  });

  it('takes the stricter verdict: a fresh Lease with OCM’s ManagedClusterLeaseUpdateStopped is stale', () => {
    const status = statusOf(cell(), hub(lease(10), managedCluster('mc-uid-1', 'leaseStale')));
    expect(status.phase).to.equal('Degraded');
    expect(status.managedCluster).to.include({
      available: false,
      leaseFresh: false,
      leaseRenewTime: '2026-11-30T11:59:50.000Z',
    });
    expect(conditionOf(status, 'LeaseFresh')).to.include({
      status: 'False',
      reason: 'LeaseUpdateStopped',
      message:
        "OCM's hub set ManagedClusterConditionAvailable of ManagedCluster cluster1 to Unknown with reason ManagedClusterLeaseUpdateStopped: it found the lease not renewed (the stricter verdict wins)",
    });
    expect(conditionOf(status, 'Ready')).to.include({
      status: 'False',
      reason: 'LeaseUpdateStopped',
    });
  });

  it('never counts a lease fresh from Available=True alone: no Lease, or no renewTime, is LeaseMissing', () => {
    for (const [label, theLease] of [
      ['no Lease', undefined],
      ['no renewTime', { ...lease(0), spec: {} } as KubernetesObject],
    ] as const) {
      const status = statusOf(cell(), hub(theLease));
      expect(status.managedCluster, label).to.include({ available: true, leaseFresh: false });
      expect(status.managedCluster, label).not.to.have.property('leaseRenewTime');
      expect(conditionOf(status, 'LeaseFresh'), label).to.include({
        status: 'False',
        reason: 'LeaseMissing',
        message:
          'the Lease managed-cluster-lease in namespace cluster1 does not exist or has no spec.renewTime: the registration agent has not renewed it since the join',
      });
      expect(status.phase, label).to.equal('Degraded');
    }
  });

  it('reads only managed-cluster-lease in the namespace named after the cluster', () => {
    const elsewhere = { ...lease(0), metadata: { name: 'managed-cluster-lease', namespace: 'x' } };
    const otherName = { ...lease(0), metadata: { name: 'other-lease', namespace: 'cluster1' } };
    const status = statusOf(cell(), [...hub(undefined), elsewhere, otherName]);
    expect(conditionOf(status, 'LeaseFresh')?.reason).to.equal('LeaseMissing');
  });

  it('is Unknown (LeaseNotObserved) and Degraded when the Lease group is not in the request', () => {
    const status = statusOf(cell(), healthy(), [TYPE_KEYS.lease]);
    expect(status.managedCluster).not.to.have.property('leaseFresh');
    expect(status.managedCluster).not.to.have.property('leaseRenewTime');
    expect(conditionOf(status, 'LeaseFresh')).to.include({
      status: 'Unknown',
      reason: 'LeaseNotObserved',
    });
    expect(status.phase).to.equal('Degraded');
  });

  it('treats Available as informational: a fresh Lease with Available False or unreported is Ready', () => {
    for (const available of [false, 'unreported'] as const) {
      const status = statusOf(cell(), hub(lease(10), managedCluster('mc-uid-1', available)));
      expect(status.managedCluster, String(available)).to.include({
        available: false,
        leaseFresh: true,
      });
      expect(conditionOf(status, 'Available'), String(available)).to.include({ status: 'False' });
      expect(status.phase, String(available)).to.equal('Ready');
    }
  });

  it('writes leaseRenewTime anew from the parsed time (milliseconds, UTC), never the Lease’s bytes', () => {
    const renewed = (renewTime: string) =>
      statusOf(cell(), hub(leaseRenewedAt(renewTime))).managedCluster?.leaseRenewTime;
    expect(renewed('2026-11-30T11:59:50.123456789Z')).to.equal('2026-11-30T11:59:50.123Z');
    expect(renewed('2026-11-30T13:59:50+02:00')).to.equal('2026-11-30T11:59:50.000Z');
    for (const bad of [
      'yesterday',
      '2026-11-30T11:59:50Z\nInjected: x',
      '2026-13-45T99:99:99Z',
      42,
    ]) {
      const status = statusOf(cell(), hub(leaseRenewedAt(bad)));
      expect(status.managedCluster, JSON.stringify(bad)).not.to.have.property('leaseRenewTime');
      expect(conditionOf(status, 'LeaseFresh')?.reason, JSON.stringify(bad)).to.equal(
        'LeaseMissing',
      );
      expect(JSON.stringify(status)).not.to.contain('Injected');
    }
  });

  it('once a renewal is overdue, asks for a sync at the instant the lease expires, and is Degraded then without any event', () => {
    // A 10-s lease renewed 25 s before NOW: two renewals missed, stale at NOW + 25 s.
    const objects = hub(lease(25), clusterWithLease(10));
    const first = syncCell(syncRequest(cell(), relatedOf(objects)), DEFAULT_CELL_CONFIG, NOW);
    expect(first.resyncAfterSeconds).to.equal(25);
    expect((first.status as CellStatus).phase).to.equal('Ready');
    const expired = statusOf(fedBack(first.status as CellStatus), objects, [], at(25));
    expect(expired.phase).to.equal('Degraded');
    expect(conditionOf(expired, 'LeaseFresh')?.reason).to.equal('LeaseStale');
  });

  it('while renewals arrive on time, asks for the expiry, but at a short lease no sooner than a minute', () => {
    // Renewed 10 s before NOW with a 10-s lease: on time (OCM renews every 10–12.5 s). The expiry
    // is 40 s away; the Cell looks once a minute, as the 60-s resync period did.
    const onTime = hub(lease(10), clusterWithLease(10));
    const renewed = syncCell(syncRequest(cell(), relatedOf(onTime)), DEFAULT_CELL_CONFIG, NOW);
    expect(renewed.resyncAfterSeconds).to.equal(LEASE_WATCH_MIN_SECONDS);
    // That sync, with no renewal since, finds the lease stale.
    const later = statusOf(fedBack(renewed.status as CellStatus), onTime, [], at(60));
    expect(conditionOf(later, 'LeaseFresh')?.reason).to.equal('LeaseStale');
    // One just past two durations asks for the expiry itself: 50 s after the renewal.
    const overdue = syncCell(
      syncRequest(fedBack(renewed.status as CellStatus), relatedOf(onTime)),
      DEFAULT_CELL_CONFIG,
      at(10),
    );
    expect(overdue.resyncAfterSeconds).to.equal(30);
    // At OCM's default 60-s lease, renewed 10 s ago: the expiry itself, 290 s away.
    const defaultLease = syncCell(
      syncRequest(cell(), relatedOf(hub(lease(10), clusterWithLease(60)))),
      DEFAULT_CELL_CONFIG,
      NOW,
    );
    expect(defaultLease.resyncAfterSeconds).to.equal(290);
  });

  it('costs an idle Cell at most one sync a minute beside its renewals, and one per expiry period at OCM’s default lease', () => {
    // Metacontroller's delaying queue keeps the earliest instant asked of a Cell and fires it
    // whatever came between (client-go util/workqueue/delaying_queue.go): the syncs it fires are
    // the Cell's cost beside its renewals. OCM renews every duration plus up to 25 % jitter.
    const timerSyncsPerMinute = (duration: number): number => {
      const renewals = [0];
      for (let i = 1; i < 60; i++)
        renewals.push((renewals.at(-1) as number) + duration * (1 + (i % 6) * 0.05));
      const end = renewals.at(-1) as number;
      let status: CellStatus | undefined;
      let waiting = Infinity;
      let fired = 0;
      const sync = (seconds: number, renewedAt: number) => {
        const objects = hub(lease(-renewedAt), clusterWithLease(duration));
        const answer = syncCell(
          syncRequest(status ? fedBack(status) : cell(), relatedOf(objects)),
          DEFAULT_CELL_CONFIG,
          at(seconds),
        );
        status = answer.status as CellStatus;
        const asked = seconds + (answer.resyncAfterSeconds ?? Infinity);
        waiting = Math.min(waiting, asked);
      };
      renewals.forEach((renewedAt, i) => {
        sync(renewedAt + 0.2, renewedAt);
        const next = renewals[i + 1] ?? end;
        while (waiting < next) {
          const due = waiting;
          waiting = Infinity;
          fired++;
          sync(due, renewedAt);
        }
      });
      return fired / (end / 60);
    };
    // The 60-s resync period cost 1 a minute at any lease.
    expect(timerSyncsPerMinute(10), '10-s lease').to.be.at.most(1);
    expect(timerSyncsPerMinute(60), '60-s lease').to.be.at.most(60 / 225);
  });

  it('is Ready again once the Lease is renewed', () => {
    const stale = statusOf(cell(), hub(lease(400)));
    const renewed = statusOf(fedBack(stale), hub(lease(-5)), [], at(5));
    expect(renewed.phase).to.equal('Ready');
    expect(renewed.managedCluster).to.include({
      leaseFresh: true,
      leaseRenewTime: '2026-11-30T12:00:05.000Z',
    });
    expect(conditionOf(renewed, 'LeaseFresh')).to.include({
      status: 'True',
      lastTransitionTime: '2026-11-30T12:00:05Z',
    });
  });

  it('is Pending when the ManagedCluster is absent or not accepted', () => {
    const absent = statusOf(cell(), [gpuNode('n1'), ...readyProvider()]);
    expect(absent.phase).to.equal('Pending');
    expect(conditionOf(absent, 'Joined')).to.include({ reason: 'ManagedClusterNotFound' });
    expect(conditionOf(absent, 'LeaseFresh')).to.include({
      status: 'False',
      reason: 'LeaseMissing',
      message: 'ManagedCluster cluster1 does not exist on the hub: no lease to judge',
    });
    const notAccepted = managedCluster();
    notAccepted.spec.hubAcceptsClient = false;
    const status = statusOf(cell(), hub(lease(10), notAccepted));
    expect(status.phase).to.equal('Pending');
    expect(conditionOf(status, 'Joined')?.reason).to.equal('ManagedClusterNotAccepted');
  });

  it('is Failed when the ManagedCluster UID changes, until the operator accepts the new UID', () => {
    const first = statusOf(cell(), healthy());
    const replaced = hub(lease(10), managedCluster('mc-uid-2'));
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
