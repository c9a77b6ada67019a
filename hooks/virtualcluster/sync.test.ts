// VirtualCluster sync: determinism, stale copies and malformed input.
import { expect } from 'chai';
import type { VirtualCluster } from '../generated/types/index.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { RetryLaterError } from '../metacontroller/retry-later.js';
import { STALE_COPY_GRACE_SECONDS } from './resolve.js';
import { syncVirtualCluster } from './sync.js';
import {
  acceptedRelated,
  byKind,
  cell,
  condition,
  CONFIG,
  hostNamespace,
  k3kKubeconfigSecret,
  LATER,
  limitsClass,
  NOW,
  resolvedWorld,
  smallClass,
  statusOf,
  runSync,
  virtualCluster,
  withStatus,
} from './testing.js';

describe('VirtualCluster controller', () => {
  describe('determinism and robustness', () => {
    it('answers byte-identical status for the same request and clock, and converges', () => {
      const { vc, children } = resolvedWorld();
      const related = [...acceptedRelated(), k3kKubeconfigSecret()];
      const a = JSON.stringify(runSync(vc, related, children, LATER));
      const b = JSON.stringify(
        runSync(structuredClone(vc), structuredClone(related), structuredClone(children), LATER),
      );
      expect(a).to.equal(b);
      // Feeding the answer back (what Metacontroller stores) gives the same status: no loop.
      const first = runSync(vc, related, children, LATER);
      const second = runSync(
        withStatus(vc, first.status),
        related,
        children,
        new Date('2026-11-30T05:00:00Z'),
      );
      expect(JSON.stringify(second.status)).to.equal(JSON.stringify(first.status));
      const pending = runSync(virtualCluster(), [cell(), hostNamespace()]);
      const pendingAgain = runSync(
        withStatus(virtualCluster(), pending.status),
        [cell(), hostNamespace()],
        [],
        NOW,
      );
      expect(JSON.stringify(pendingAgain.status)).to.equal(JSON.stringify(pending.status));
    });

    it('keeps existing children when status.resolved is missing fields (and is Failed)', () => {
      const { vc, children } = resolvedWorld();
      const broken = withStatus(vc, {
        ...vc.status,
        resolved: { ...vc.status!.resolved, endpointAddress: '' },
      });
      const response = runSync(broken, acceptedRelated(), children, LATER);
      expect(response.children.map((c) => `${c.kind}/${c.metadata.name}`).sort()).to.deep.equal(
        children.map((c) => `${c.kind}/${c.metadata.name}`).sort(),
      );
      for (const kept of response.children) {
        expect(kept.metadata).to.not.have.property('uid');
        expect(kept).to.not.have.property('status');
      }
      expect(statusOf(response).phase).to.equal('Failed');
      expect(condition(response, 'Ready')).to.deep.include({ reason: 'ResolvedSnapshotInvalid' });
      expect(statusOf(response).resolved).to.deep.equal(broken.status!.resolved);
    });

    it('keeps existing children when status.resolved is lost and the placement cannot be accepted', () => {
      const { vc, children } = resolvedWorld();
      const lost = withStatus(vc, undefined);
      const response = runSync(lost, [smallClass(), hostNamespace()], children, LATER);
      expect(statusOf(response).phase).to.equal('Pending');
      expect(response.children).to.have.length(children.length);
      expect(condition(response, 'ChildrenApplied')).to.deep.include({
        status: 'Unknown',
        reason: 'ChildrenKept',
      });
    });

    it('refuses a copy without status.resolved whose children were just created: a stale copy, nothing changes', () => {
      // Metacontroller's next sync often reads the VirtualCluster from its cache before the
      // status write that recorded the snapshot arrived; it would write the answer over that
      // snapshot. The children, created by the sync that resolved it, give the copy away.
      const { vc, children } = resolvedWorld();
      const stale = withStatus(vc, undefined);
      const created = Date.parse('2026-11-30T00:00:01Z');
      for (const afterMs of [0, 2_000, (STALE_COPY_GRACE_SECONDS - 1) * 1000]) {
        expect(() => runSync(stale, acceptedRelated(), children, new Date(created + afterMs)))
          .to.throw(RetryLaterError)
          .with.property('message')
          .that.matches(/no status\.resolved, but its .* was created at 2026-11-30T00:00:01Z/);
      }
      // A Pending copy (the status of a sync that did not accept yet) is as stale.
      const pending = withStatus(vc, statusOf(runSync(virtualCluster(), [smallClass()])));
      expect(() =>
        runSync(pending, acceptedRelated(), children, new Date(created + 1000)),
      ).to.throw(RetryLaterError);
      // With the snapshot in the copy, the same sync answers.
      expect(
        statusOf(runSync(vc, acceptedRelated(), children, new Date(created))).resolved,
      ).to.deep.equal(vc.status?.resolved);
      // Without children there is nothing to give a copy away: a new VirtualCluster resolves.
      expect(
        statusOf(runSync(stale, acceptedRelated(), [], new Date(created))).resolved,
      ).to.not.equal(undefined);
    });

    it('evaluates again when the snapshot is still missing once the newest child is past the grace period', () => {
      const { vc, children } = resolvedWorld();
      const lost = withStatus(vc, undefined);
      const later = new Date(Date.parse('2026-11-30T00:00:01Z') + STALE_COPY_GRACE_SECONDS * 1000);
      const response = runSync(lost, acceptedRelated(), children, later);
      expect(statusOf(response).phase).to.equal('Provisioning');
      expect(statusOf(response).resolved?.resolvedAt).to.equal('2026-11-30T00:01:01Z');
      // A child without a creationTimestamp proves nothing either.
      const undated = children.map((child) => {
        const copy = structuredClone(child);
        delete copy.metadata.creationTimestamp;
        return copy;
      });
      expect(statusOf(runSync(lost, acceptedRelated(), undated, NOW)).phase).to.equal(
        'Provisioning',
      );
    });

    it('survives a malformed parent, status and related objects without throwing', () => {
      const vc = virtualCluster() as unknown as Record<string, unknown>;
      vc['spec'] = {};
      vc['status'] = 'garbage';
      const response = syncVirtualCluster(
        {
          parent: vc as unknown as VirtualCluster,
          related: {
            'Node.v1': { 'broken-node': { metadata: { name: 'broken-node' } } as KubernetesObject },
          },
          children: {},
          finalizing: false,
        },
        CONFIG,
        NOW,
      );
      expect(statusOf(response).phase).to.equal('Pending');
      expect(response.children).to.deep.equal([]);
    });

    it('does not resolve from a Cell that lacks a field the snapshot copies', () => {
      const vc = virtualCluster();
      vc.spec.classRef.name = 'cpu-limits';
      const odd = cell() as unknown as { spec: Record<string, unknown> };
      delete odd.spec['managedClusterRef'];
      const response = runSync(vc, [
        odd as unknown as KubernetesObject,
        limitsClass(),
        hostNamespace(),
      ]);
      expect(statusOf(response).phase).to.equal('Pending');
      expect(condition(response, 'Resolved')).to.deep.include({ reason: 'NotResolved' });
      expect(response.children).to.deep.equal([]);
    });

    it('returns a resolved child as rendered even if someone edited the live object', () => {
      const { vc, first, children } = resolvedWorld();
      const edited = children.map((child) =>
        child.kind === 'ResourceQuota'
          ? ({ ...child, spec: { hard: { 'requests.cpu': '1000' } } } as KubernetesObject)
          : child,
      );
      const response = runSync(vc, acceptedRelated(), edited, LATER);
      expect(byKind(response.children, 'ResourceQuota')).to.deep.equal(
        byKind(first.children, 'ResourceQuota'),
      );
    });
  });
});
