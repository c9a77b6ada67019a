import { expect } from 'chai';
import type { Cell, CellStatus } from '../generated/types/index.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { DEFAULT_CELL_CONFIG } from './config.js';
import { HEARTBEAT_SECONDS, publish } from './publication.js';
import { syncCell } from './sync.js';
import {
  NOW,
  cell,
  gpuNode,
  healthy,
  hostNamespace,
  lease,
  managedCluster,
  pod,
  relatedOf,
  statusOf,
  syncRequest,
} from './testing.js';

const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
const fedBack = (status: CellStatus): Cell => ({ ...cell(), status });

/**
 * healthy() with a 120-s lease: its Lease, renewed 10 s before NOW and not again, stays fresh
 * until NOW + 590 s, past the heartbeat. With the default 60-s lease it would go stale at
 * NOW + 290 s, which is a change, and a renewal changes leaseRenewTime: either is written.
 */
/** healthy() with a pod requesting one CPU on n1: a change to pod requests alone. */
function busier(): KubernetesObject[] {
  return [...healthy(), hostNamespace('tenant-a'), pod('p1', 'tenant-a', 'n1', [{ cpu: '1' }])];
}

function quiet(): KubernetesObject[] {
  const cluster = managedCluster();
  cluster.spec.leaseDurationSeconds = 120;
  return [cluster, ...healthy().filter((o) => o.kind !== 'ManagedCluster')];
}

/** The status as the apiserver hands it back: keys sorted, as Metacontroller's Go encoding does. */
function sortedKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortedKeys) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]),
  ) as T;
}

describe('Cell status publication: heartbeat, pod-request hold, lease expiry', () => {
  it('stamps now on the first sync', () => {
    expect(statusOf(cell(), healthy()).observedAt).to.equal('2026-11-30T12:00:00Z');
  });

  it('keeps observedAt, and the whole status byte-identical, while nothing changes within 300 s', () => {
    const first = statusOf(cell(), quiet());
    for (const seconds of [1, 20, 59, 299]) {
      const later = statusOf(fedBack(sortedKeys(first)), quiet(), [], at(seconds));
      expect(JSON.stringify(later), `${seconds} s later`).to.equal(JSON.stringify(first));
    }
  });

  it('writes now once the previous observedAt is 300 s old, even when nothing changed', () => {
    const first = statusOf(cell(), quiet());
    const beat = statusOf(fedBack(first), quiet(), [], at(HEARTBEAT_SECONDS));
    expect(beat.observedAt).to.equal('2026-11-30T12:05:00Z');
    // Every observedAt moves with it (nodes[], storageInventory, nodePorts); nothing else does.
    const restamped = JSON.stringify(first).replaceAll(
      '"observedAt":"2026-11-30T12:00:00Z"',
      '"observedAt":"2026-11-30T12:05:00Z"',
    );
    expect(JSON.stringify(beat)).to.equal(restamped);
    // status, nodes[n1], nodes[n2], storageInventory and nodePorts
    expect(restamped.split('"observedAt":"2026-11-30T12:05:00Z"')).to.have.length(6);
  });

  it('writes now when anything but pod requests changes', () => {
    const first = statusOf(cell(), healthy());
    const notReady = [
      ...healthy().filter((o) => o.metadata.name !== 'n2'),
      gpuNode('n2', {}, { ready: false }),
    ];
    expect(statusOf(fedBack(first), notReady, [], at(5)).observedAt).to.equal(
      '2026-11-30T12:00:05Z',
    );
    const renewed = [...healthy().filter((o) => o.kind !== 'Lease'), lease(-5)];
    const written = statusOf(fedBack(first), renewed, [], at(5));
    expect(written.observedAt).to.equal('2026-11-30T12:00:05Z');
    expect(written.managedCluster?.leaseRenewTime).to.equal('2026-11-30T12:00:05.000Z');
  });

  it('holds a change to pod requests alone until the next lease renewal is due, then writes it', () => {
    // The 60-s lease was renewed 10 s before NOW: the next renewal is due by 1.25 durations
    // later (OCM's jitter) and given 15 s to arrive, NOW + 80 s; the pods wait for it.
    const first = statusOf(cell(), healthy());
    const held = syncCell(
      syncRequest(fedBack(sortedKeys(first)), relatedOf(busier())),
      DEFAULT_CELL_CONFIG,
      at(20),
    );
    expect(JSON.stringify(held.status), 'the previous status, as stored').to.equal(
      JSON.stringify(sortedKeys(first)),
    );
    expect(held.resyncAfterSeconds, 'a sync when the hold ends').to.equal(60);
    const stillHeld = statusOf(fedBack(first), busier(), [], at(79));
    expect(stillHeld.observedAt).to.equal(first.observedAt);
    const written = statusOf(fedBack(first), busier(), [], at(80));
    expect(written.inventory?.['cpu']?.requested).to.equal('1');
    expect(written.nodes?.find((n) => n.name === 'n1')?.activeRequested).to.deep.equal({
      cpu: '1',
    });
    expect(written.observedAt).to.equal('2026-11-30T12:01:20Z');
  });

  it('writes pods with the renewal that arrives during the hold', () => {
    const first = statusOf(cell(), healthy());
    const renewed = [...busier().filter((o) => o.kind !== 'Lease'), lease(-65)];
    const written = statusOf(fedBack(first), renewed, [], at(65));
    expect(written.observedAt).to.equal('2026-11-30T12:01:05Z');
    expect(written.inventory?.['cpu']?.requested).to.equal('1');
  });

  it('holds pods 60 s without a fresh lease, and never more than 120 s after the last write', () => {
    const noLease = busier().filter((o) => o.kind !== 'Lease');
    const unleasedFirst = statusOf(
      cell(),
      noLease.filter((o) => o.kind !== 'Pod'),
    );
    expect(statusOf(fedBack(unleasedFirst), noLease, [], at(59)).observedAt).to.equal(
      unleasedFirst.observedAt,
    );
    expect(statusOf(fedBack(unleasedFirst), noLease, [], at(60)).observedAt).to.equal(
      '2026-11-30T12:01:00Z',
    );
    // A 300-s lease's next renewal is due far later: the hold stops at 120 s.
    const longLease = (objects: KubernetesObject[]) =>
      objects.map((o) =>
        o.kind === 'ManagedCluster'
          ? { ...o, spec: { hubAcceptsClient: true, leaseDurationSeconds: 300 } }
          : o,
      );
    const first = statusOf(cell(), longLease(healthy()));
    const held = syncCell(
      syncRequest(fedBack(first), relatedOf(longLease(busier()))),
      DEFAULT_CELL_CONFIG,
      at(100),
    );
    expect((held.status as CellStatus).observedAt).to.equal(first.observedAt);
    expect(held.resyncAfterSeconds).to.equal(20);
    expect(statusOf(fedBack(first), longLease(busier()), [], at(120)).observedAt).to.equal(
      '2026-11-30T12:02:00Z',
    );
  });

  it('is written once per renewal under 1 pod/s of churn, whatever the renewal jitter', () => {
    // A model of the idle benchmark's churn point: a pod changes every second, the 60-s lease
    // is renewed every 60 to 75 s (OCM's 25 % jitter), each sync sees the last written status.
    for (const period of [60, 61, 67, 75]) {
      let stored: CellStatus | undefined;
      let writes = 0;
      let renewedAt = 0;
      for (let second = 0; second < 600; second += 1) {
        if (second > 0 && second % period === 0) renewedAt = second;
        const objects = [
          ...healthy().filter((o) => o.kind !== 'Lease'),
          lease(-renewedAt),
          hostNamespace('tenant-a'),
          pod(`p${second}`, 'tenant-a', 'n1', [{ cpu: String(1 + (second % 3)) }]),
        ];
        const status = statusOf(stored ? fedBack(stored) : cell(), objects, [], at(second));
        const wire = sortedKeys(JSON.parse(JSON.stringify(status)) as CellStatus);
        if (JSON.stringify(wire) !== JSON.stringify(stored)) writes += 1;
        stored = wire;
      }
      const renewals = Math.floor(599 / period);
      expect(writes, `renewals every ${period} s`).to.equal(renewals + 1);
    }
  });

  it('ignores what it does not publish: Node heartbeats and annotations', () => {
    const first = statusOf(cell(), healthy());
    const n1 = gpuNode('n1', {}, { annotations: { 'example.com/touched': 'yes' } });
    // A kubelet heartbeat moves the Ready condition's lastHeartbeatTime, nothing the Cell reads.
    const heartbeat = { type: 'Ready', status: 'True', lastHeartbeatTime: '2026-11-30T12:00:40Z' };
    n1.status = { ...n1.status, conditions: [heartbeat] };
    const touched = [...healthy().filter((o) => o.metadata.name !== 'n1'), n1];
    const later = statusOf(fedBack(first), touched, [], at(40));
    expect(JSON.stringify(later)).to.equal(JSON.stringify(first));
  });

  it('stamps the per-Node, storage and NodePort observedAt with the status write', () => {
    const first = statusOf(cell(), healthy());
    expect(first.nodes?.map((n) => n.observedAt)).to.deep.equal([
      '2026-11-30T12:00:00Z',
      '2026-11-30T12:00:00Z',
    ]);
    expect(first.storageInventory?.observedAt).to.equal('2026-11-30T12:00:00Z');
    expect(first.nodePorts?.observedAt).to.equal('2026-11-30T12:00:00Z');
  });

  it('writes now when the previous observedAt is unreadable or ahead of the clock', () => {
    const first = statusOf(cell(), healthy());
    for (const observedAt of ['not a time', '2026-11-30T12:10:00Z']) {
      const next = statusOf(fedBack({ ...first, observedAt }), healthy(), [], at(10));
      expect(next.observedAt, observedAt).to.equal('2026-11-30T12:00:10Z');
    }
  });

  it('is a pure function of the previous status, the new one and now', () => {
    const next: CellStatus = { phase: 'Ready', resolvedBy: 0 };
    const previous: CellStatus = {
      resolvedBy: 0,
      phase: 'Ready',
      observedAt: '2026-11-30T11:59:00Z',
    };
    expect(publish(previous, next, NOW)).to.deep.equal({
      status: { ...next, observedAt: previous.observedAt },
      dueInSeconds: 240,
    });
    expect(publish(previous, { ...next, phase: 'Degraded' }, NOW).status.observedAt).to.equal(
      '2026-11-30T12:00:00Z',
    );
    expect(publish(undefined, next, NOW).status.observedAt).to.equal('2026-11-30T12:00:00Z');
  });

  it('asks for a sync when the heartbeat or the lease expiry falls due, whichever is first', () => {
    const sync = (objects: KubernetesObject[], status: CellStatus | undefined, now: Date) =>
      syncCell(
        syncRequest(status ? fedBack(status) : cell(), relatedOf(objects)),
        DEFAULT_CELL_CONFIG,
        now,
      );
    // A 60-s lease renewed 10 s before NOW: stale at NOW + 290 s, before the heartbeat at 300 s.
    const first = sync(healthy(), undefined, NOW);
    expect(first.resyncAfterSeconds).to.equal(290);
    const status = first.status as CellStatus;
    expect(sync(healthy(), status, at(250)).resyncAfterSeconds).to.equal(40);
    // A 120-s lease renewed at the same time is stale at NOW + 590 s: the heartbeat comes first.
    const quietStatus = sync(quiet(), undefined, NOW).status as CellStatus;
    expect(sync(quiet(), quietStatus, at(250)).resyncAfterSeconds).to.equal(50);
    // Without a Lease only the heartbeat asks, long before the resync period (1800 s).
    const noLease = healthy().filter((o) => o.kind !== 'Lease');
    const unleased = sync(noLease, undefined, NOW);
    expect(unleased.resyncAfterSeconds).to.equal(300);
  });
});
