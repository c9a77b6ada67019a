// VirtualCluster sync: determinism, stale copies and malformed input.
import { expect } from 'chai';
import type { VirtualCluster } from '../generated/types/index.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { InvalidHookInputError } from '../metacontroller/invalid-input.js';
import { RetryLaterError } from '../metacontroller/retry-later.js';
import { STALE_COPY_GRACE_SECONDS } from './resolve.js';
import {
  acceptedRelated,
  byKind,
  cell,
  condition,
  hostNamespace,
  k3kKubeconfigSecret,
  LATER,
  limitsClass,
  NOW,
  resolvedWorld,
  smallClass,
  statusOf,
  runSync,
  syncRequest,
  validatedSync,
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

    it('refuses a status.resolved missing fields (400 naming the field): every child is kept', () => {
      // Metacontroller changes nothing when a hook fails: the children stay as they are.
      const { vc, children } = resolvedWorld();
      const resolved = structuredClone(vc.status!.resolved!) as unknown as Record<string, unknown>;
      delete resolved['endpointAddress'];
      const broken = withStatus(vc, { ...vc.status, resolved });
      expect(() => validatedSync(syncRequest(broken, acceptedRelated(), children), LATER))
        .to.throw(InvalidHookInputError)
        .with.property('message')
        .that.matches(
          /^VirtualCluster tenant-a\/team-a is invalid: status\.resolved\.endpointAddress: Required value/,
        );
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

    it('is not called with a malformed parent, status or related object: 400 naming the field', () => {
      const vc = virtualCluster() as unknown as Record<string, unknown>;
      vc['spec'] = {};
      vc['status'] = 'garbage';
      const request = syncRequest(vc as unknown as VirtualCluster);
      expect(() => validatedSync(request))
        .to.throw(InvalidHookInputError)
        .with.property('message')
        .that.matches(/spec\.classRef: Required value/)
        .and.matches(/status: Invalid value: "garbage": must be of type object/);
      const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'broken-node' } };
      const broken = { ...node, status: { capacity: { cpu: 'lots' } } };
      expect(() => validatedSync(syncRequest(virtualCluster(), [cell(), broken])))
        .to.throw(InvalidHookInputError)
        .with.property('message')
        .that.includes(
          'request.related["Node.v1"]["broken-node"].status.capacity["cpu"]: must be a quantity',
        );
    });

    it('is not called with a Cell that lacks a field the snapshot copies: 400 naming it', () => {
      const vc = virtualCluster();
      vc.spec.classRef.name = 'cpu-limits';
      const odd = cell() as unknown as { spec: Record<string, unknown> };
      delete odd.spec['managedClusterRef'];
      const request = syncRequest(vc, [
        odd as unknown as KubernetesObject,
        limitsClass(),
        hostNamespace(),
      ]);
      expect(() => validatedSync(request))
        .to.throw(InvalidHookInputError)
        .with.property('message')
        .that.matches(/\["kubecell-system\/cell1"\]: spec\.managedClusterRef: Required value/);
    });

    it('reads no object of another apiVersion or kind from a KubeCell group', () => {
      // The validation layer checks a Cell against the Cell schema only when it says it is one.
      const impostor = { ...cell(), apiVersion: 'example.com/v1', spec: {} } as KubernetesObject;
      const response = runSync(virtualCluster(), [impostor, smallClass(), hostNamespace()]);
      expect(statusOf(response).phase).to.equal('Pending');
      expect(condition(response, 'CellLive')).to.deep.include({ reason: 'CellNotFound' });
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
