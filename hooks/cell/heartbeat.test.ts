import { expect } from 'chai';
import type { Cell, CellStatus } from '../generated/types/index.js';
import { DEFAULT_CELL_CONFIG } from './config.js';
import { HEARTBEAT_SECONDS, resyncAfter, withHeartbeat } from './heartbeat.js';
import { syncCell } from './sync.js';
import {
  NOW,
  cell,
  gpuNode,
  healthy,
  hostNamespace,
  lease,
  pod,
  relatedOf,
  statusOf,
  syncRequest,
} from './testing.js';

const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
const fedBack = (status: CellStatus): Cell => ({ ...cell(), status });

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

describe('Cell status.observedAt heartbeat', () => {
  it('stamps now on the first sync', () => {
    expect(statusOf(cell(), healthy()).observedAt).to.equal('2026-11-30T12:00:00Z');
  });

  it('keeps observedAt, and the whole status byte-identical, while nothing changes within 300 s', () => {
    const first = statusOf(cell(), healthy());
    for (const seconds of [1, 20, 59, 299]) {
      const later = statusOf(fedBack(sortedKeys(first)), healthy(), [], at(seconds));
      expect(JSON.stringify(later), `${seconds} s later`).to.equal(JSON.stringify(first));
    }
  });

  it('writes now once the previous observedAt is 300 s old, even when nothing changed', () => {
    const first = statusOf(cell(), healthy());
    const beat = statusOf(fedBack(first), healthy(), [], at(HEARTBEAT_SECONDS));
    expect(beat.observedAt).to.equal('2026-11-30T12:05:00Z');
    expect({ ...beat, observedAt: first.observedAt }).to.deep.equal(first);
  });

  it('writes now when anything else in the status changes', () => {
    const first = statusOf(cell(), healthy());
    const busier = [
      ...healthy(),
      hostNamespace('tenant-a'),
      pod('p1', 'tenant-a', 'n1', [{ cpu: '1' }]),
    ];
    const changed = statusOf(fedBack(first), busier, [], at(20));
    expect(changed.inventory?.['cpu']?.requested).to.equal('1');
    expect(changed.observedAt).to.equal('2026-11-30T12:00:20Z');
    const notReady = [
      ...healthy().filter((o) => o.metadata.name !== 'n2'),
      gpuNode('n2', {}, { ready: false }),
    ];
    expect(statusOf(fedBack(first), notReady, [], at(30)).observedAt).to.equal(
      '2026-11-30T12:00:30Z',
    );
  });

  it('ignores what it does not publish: Node heartbeats and annotations, lease renewals', () => {
    const first = statusOf(cell(), healthy());
    const n1 = gpuNode('n1', {}, { annotations: { 'example.com/touched': 'yes' } });
    // A kubelet heartbeat moves the Ready condition's lastHeartbeatTime, nothing the Cell reads.
    const heartbeat = { type: 'Ready', status: 'True', lastHeartbeatTime: '2026-11-30T12:00:40Z' };
    n1.status = { ...n1.status, conditions: [heartbeat] };
    const touched = [...healthy().filter((o) => o.metadata.name !== 'n1'), n1, lease(0)];
    const later = statusOf(fedBack(first), touched, [], at(40));
    expect(JSON.stringify(later)).to.equal(JSON.stringify(first));
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
    expect(withHeartbeat(previous, next, NOW)).to.deep.equal({
      ...next,
      observedAt: previous.observedAt,
    });
    expect(withHeartbeat(previous, { ...next, phase: 'Degraded' }, NOW).observedAt).to.equal(
      '2026-11-30T12:00:00Z',
    );
    expect(withHeartbeat(undefined, next, NOW).observedAt).to.equal('2026-11-30T12:00:00Z');
  });

  it('asks for a sync only when the heartbeat falls due before the periodic resync (60 s)', () => {
    const request = (status?: CellStatus) =>
      syncRequest(status ? fedBack(status) : cell(), relatedOf(healthy()));
    const first = syncCell(request(), DEFAULT_CELL_CONFIG, NOW);
    expect(first).not.to.have.property('resyncAfterSeconds');
    const status = first.status as CellStatus;
    expect(syncCell(request(status), DEFAULT_CELL_CONFIG, at(250)).resyncAfterSeconds).to.equal(50);
    expect(syncCell(request(status), DEFAULT_CELL_CONFIG, at(299.5)).resyncAfterSeconds).to.equal(
      1,
    );
    expect(resyncAfter({}, NOW, 60), 'no observedAt').to.equal(60);
  });
});
