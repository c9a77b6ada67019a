import { expect } from 'chai';
import type { Cell, CellStatus } from '../generated/types/index.js';
import { TYPE_KEYS } from '../kube/objects.js';
import { RetryLaterError } from '../metacontroller/retry-later.js';
import { toObjectMap, type KubernetesObject } from '../metacontroller/protocol.js';
import { DEFAULT_CELL_CONFIG } from './config.js';
import { STALE_COPY_GRACE_SECONDS } from './stale-copy.js';
import { finalizeCell, syncCell } from './sync.js';
import {
  NOW,
  cell,
  healthy,
  hostNamespace,
  lease,
  pod,
  relatedOf,
  syncRequest,
} from './testing.js';

const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
/** The cluster with the lease renewed at NOW + `renewed` s, and a pod running from then on. */
const world = (renewed: number) => [
  ...healthy().filter((object) => object.kind !== 'Lease'),
  lease(-renewed),
  ...(renewed > 0 ? [hostNamespace('tenant-a'), pod('p1', 'tenant-a', 'n1', [{ cpu: '1' }])] : []),
];

/** A sync of `parent` at `now` with the children Metacontroller's cache holds. */
function sync(parent: Cell, children: KubernetesObject[], now: Date, renewed = 0) {
  const request = syncRequest(parent, relatedOf(world(renewed)));
  request.children = { [TYPE_KEYS.configMap]: toObjectMap(children)[TYPE_KEYS.configMap] ?? {} };
  return syncCell(request, DEFAULT_CELL_CONFIG, now);
}

describe('Cell sync from a copy older than the last status write (stale-copy.ts)', () => {
  // First write at NOW; 40 s later a lease renewal and a pod are written at once, with the marker.
  const first = sync(cell(), [], NOW);
  const firstStatus = first.status as CellStatus;
  const second = sync({ ...cell(), status: firstStatus }, first.children, at(40), 40);
  const secondStatus = second.status as CellStatus;

  it('writes the status marker with the observedAt of the status it returns', () => {
    const marker = second.children.find((child) => child.metadata.name.endsWith('.status'));
    expect(marker).to.deep.include({ data: { observedAt: '2026-11-30T12:00:40Z' } });
    expect(secondStatus.observedAt).to.equal('2026-11-30T12:00:40Z');
  });

  it('refuses, 429-style, a copy that predates the marker, within the grace', () => {
    const stale = { ...cell(), status: firstStatus };
    expect(() => sync(stale, second.children, at(41), 40)).to.throw(
      RetryLaterError,
      /predates the status written at 2026-11-30T12:00:40Z/,
    );
    const request = syncRequest(stale, relatedOf(world(40)), true);
    request.children = {
      [TYPE_KEYS.configMap]: toObjectMap(second.children)[TYPE_KEYS.configMap] ?? {},
    };
    expect(() => finalizeCell(request, DEFAULT_CELL_CONFIG, at(41))).to.throw(RetryLaterError);
  });

  it('answers the copy that carries the written status, and any copy once the grace has passed', () => {
    const fresh = sync({ ...cell(), status: secondStatus }, second.children, at(41), 40);
    expect(fresh.status).to.deep.equal(secondStatus);
    const late = at(40 + STALE_COPY_GRACE_SECONDS);
    expect(() =>
      sync({ ...cell(), status: firstStatus }, second.children, late, 40),
    ).not.to.throw();
  });

  it('keeps the marker on a write that changes no pod request (a renewal alone), so that write syncs nothing more', () => {
    const renewal = syncRequest(
      { ...cell(), status: firstStatus },
      relatedOf([...healthy().filter((object) => object.kind !== 'Lease'), lease(-40)]),
    );
    renewal.children = {
      [TYPE_KEYS.configMap]: toObjectMap(first.children)[TYPE_KEYS.configMap] ?? {},
    };
    const renewed = syncCell(renewal, DEFAULT_CELL_CONFIG, at(40));
    expect((renewed.status as CellStatus).observedAt, 'written').to.equal('2026-11-30T12:00:40Z');
    const marker = renewed.children.find((child) => child.metadata.name.endsWith('.status'));
    expect(marker).to.deep.include({ data: { observedAt: '2026-11-30T12:00:00Z' } });
  });

  it('is not fooled by a marker without a readable time, or none at all', () => {
    const odd = second.children.map((child) =>
      child.metadata.name.endsWith('.status') ? { ...child, data: { observedAt: 'soon' } } : child,
    );
    expect(() => sync({ ...cell(), status: firstStatus }, odd, at(41), 40)).not.to.throw();
    expect(() => sync({ ...cell(), status: firstStatus }, [], at(41), 40)).not.to.throw();
  });
});
