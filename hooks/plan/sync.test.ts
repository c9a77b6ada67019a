import { expect } from 'chai';
import { readyCell, smallClass, virtualCluster } from '../feasibility/testing.js';
import type {
  Condition,
  VirtualClusterPlan,
  VirtualClusterPlanStatus,
} from '../generated/types/index.js';
import { toObjectMap, type CompositeSyncResponse } from '../metacontroller/protocol.js';
import { syncPlan } from './sync.js';
import { acceptedRelated, CONFIG, hostNamespace, NOW, plan, syncRequest } from './testing.js';

const at = (iso: string) => new Date(iso);

function statusOf(response: CompositeSyncResponse): VirtualClusterPlanStatus {
  return response.status as VirtualClusterPlanStatus;
}

function condition(status: VirtualClusterPlanStatus, type: string): Condition {
  const found = status.conditions?.find((c) => c.type === type);
  if (found === undefined) throw new Error(`no ${type} condition`);
  return found;
}

/** The plan as Metacontroller sends it after writing `response.status`. */
function withStatus(response: CompositeSyncResponse, parent = plan()): VirtualClusterPlan {
  return { ...parent, status: structuredClone(statusOf(response)) };
}

describe('VirtualClusterPlan sync', () => {
  describe('first evaluation', () => {
    it('accepts a placement that fits and returns the whole status, no children', () => {
      const response = syncPlan(syncRequest(), CONFIG, NOW);
      expect(response.children).to.deep.equal([]);
      expect(response.resyncAfterSeconds).to.equal(900);
      const status = statusOf(response);
      expect(Object.keys(status)).to.deep.equal([
        'observedGeneration',
        'decision',
        'evaluatedAt',
        'expiresAt',
        'checks',
        'conditions',
      ]);
      expect(status).to.deep.include({
        observedGeneration: 1,
        decision: 'Accepted',
        evaluatedAt: '2026-11-30T00:00:00Z',
        expiresAt: '2026-11-30T00:15:00Z',
      });
      expect(status.checks?.every((check) => check.result === 'Pass')).to.equal(true);
      expect(status.conditions).to.deep.equal([
        {
          type: 'Evaluated',
          status: 'True',
          reason: 'Accepted',
          message:
            'Generation 1 was evaluated at 2026-11-30T00:00:00Z: Accepted, every check passed. Acceptance reserves no capacity.',
          lastTransitionTime: '2026-11-30T00:00:00Z',
          observedGeneration: 1,
        },
        {
          type: 'Expired',
          status: 'False',
          reason: 'NotExpired',
          message: 'The decision is current until 2026-11-30T00:15:00Z.',
          lastTransitionTime: '2026-11-30T00:00:00Z',
          observedGeneration: 1,
        },
      ]);
    });

    it('rejects, naming the failed checks in the Evaluated condition', () => {
      const related = acceptedRelated();
      related['VirtualCluster.kubecell.io/v1alpha1'] =
        toObjectMap([virtualCluster('first', 'tenant-a')])['VirtualCluster.kubecell.io/v1alpha1'] ??
        {};
      const status = statusOf(syncPlan(syncRequest(plan(), related), CONFIG, NOW));
      expect(status.decision).to.equal('Rejected');
      expect(condition(status, 'Evaluated')).to.include({
        status: 'True',
        reason: 'Rejected',
        message:
          'Generation 1 was evaluated at 2026-11-30T00:00:00Z: Rejected; failed: NamespaceAvailable (NamespaceOccupied).',
      });
    });

    it('is Unknown when a check cannot be decided', () => {
      const cell = readyCell();
      if (cell.status?.storageInventory) cell.status.storageInventory.freeCapacityKnown = false;
      const related = toObjectMap([cell, smallClass(), hostNamespace()]);
      const status = statusOf(syncPlan(syncRequest(plan(), related), CONFIG, NOW));
      expect(status.decision).to.equal('Unknown');
      expect(condition(status, 'Evaluated')).to.include({
        reason: 'Unknown',
        message:
          'Generation 1 was evaluated at 2026-11-30T00:00:00Z: Unknown; could not decide: Storage requests.storage (FreeCapacityUnknown). It is evaluated again when the Cell, the class or the namespace changes.',
      });
    });

    it('is Unknown when the Cell and class are missing, and says it will look again', () => {
      const status = statusOf(
        syncPlan(syncRequest(plan(), toObjectMap([hostNamespace()])), CONFIG, NOW),
      );
      expect(status.decision).to.equal('Unknown');
      expect(condition(status, 'Evaluated').message).to.match(
        /could not decide: CellFound \(CellNotFound\), ClassFound \(ClassNotFound\)\. It is evaluated again when the Cell, the class or the namespace changes\.$/,
      );
      expect(status.checks?.map((c) => c.reason)).to.deep.equal([
        'CellNotFound',
        'ClassNotFound',
        'NamespaceAvailable',
      ]);
    });

    it('only takes the Cell from the controller namespace', () => {
      const elsewhere = readyCell();
      elsewhere.metadata.namespace = 'tenant-a';
      const related = toObjectMap([elsewhere, smallClass(), hostNamespace()]);
      const status = statusOf(syncPlan(syncRequest(plan(), related), CONFIG, NOW));
      expect(status.checks?.[0]?.reason).to.equal('CellNotFound');
      const moved = statusOf(
        syncPlan(syncRequest(plan(), related), { ...CONFIG, cellNamespace: 'tenant-a' }, NOW),
      );
      expect(moved.checks?.[0]?.reason).to.equal('CellFound');
    });

    it("checks the namespace's host label when the Namespace is observed, not otherwise", () => {
      const unlabelled = toObjectMap([
        readyCell(),
        smallClass(),
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tenant-a' } },
      ]);
      const rejected = statusOf(syncPlan(syncRequest(plan(), unlabelled), CONFIG, NOW));
      expect(rejected.checks?.at(-1)?.reason).to.equal('NotHostNamespace');
      const unobserved = toObjectMap([readyCell(), smallClass()]);
      const accepted = statusOf(syncPlan(syncRequest(plan(), unobserved), CONFIG, NOW));
      expect(accepted.decision).to.equal('Accepted');
    });

    it('stamps evaluatedAt to the second and resyncs exactly at expiresAt', () => {
      const response = syncPlan(syncRequest(), CONFIG, at('2026-11-30T00:00:00.700Z'));
      expect(statusOf(response)).to.deep.include({
        evaluatedAt: '2026-11-30T00:00:00Z',
        expiresAt: '2026-11-30T00:15:00Z',
      });
      expect(response.resyncAfterSeconds).to.equal(900);
    });

    it('uses the configured TTL', () => {
      const response = syncPlan(syncRequest(), { ...CONFIG, ttlSeconds: 60 }, NOW);
      expect(statusOf(response).expiresAt).to.equal('2026-11-30T00:01:00Z');
      expect(response.resyncAfterSeconds).to.equal(60);
    });
  });

  describe('once per generation', () => {
    it('keeps the decision byte for byte on resync, even when the Cell has changed', () => {
      const first = syncPlan(syncRequest(), CONFIG, NOW);
      const full = readyCell();
      if (full.status?.inventory?.cpu) full.status.inventory.cpu.availableEstimate = '0';
      if (full.status) full.status.phase = 'Degraded';
      const later = syncPlan(
        syncRequest(withStatus(first), toObjectMap([full, hostNamespace()])),
        CONFIG,
        at('2026-11-30T00:10:00Z'),
      );
      expect(JSON.stringify(statusOf(later))).to.equal(JSON.stringify(statusOf(first)));
      expect(later.resyncAfterSeconds).to.equal(300);
    });

    it('is a fixed point: feeding the status back in at the same time changes nothing', () => {
      const first = syncPlan(syncRequest(), CONFIG, NOW);
      const again = syncPlan(syncRequest(withStatus(first)), CONFIG, NOW);
      expect(JSON.stringify(again)).to.equal(JSON.stringify(first));
    });

    it('gives byte-identical answers for the same request at the same time', () => {
      const a = syncPlan(syncRequest(), CONFIG, at('2026-11-30T00:00:07Z'));
      const b = syncPlan(syncRequest(), CONFIG, at('2026-11-30T00:00:07Z'));
      expect(JSON.stringify(a)).to.equal(JSON.stringify(b));
    });

    it('re-evaluates when the generation changes', () => {
      const first = syncPlan(syncRequest(), CONFIG, NOW);
      const edited = plan(2);
      const full = readyCell();
      if (full.status?.inventory?.cpu) full.status.inventory.cpu.availableEstimate = '0';
      const second = syncPlan(
        syncRequest(
          { ...edited, status: statusOf(first) },
          toObjectMap([full, smallClass(), hostNamespace()]),
        ),
        CONFIG,
        at('2026-11-30T00:05:00Z'),
      );
      const status = statusOf(second);
      expect(status).to.deep.include({
        observedGeneration: 2,
        decision: 'Rejected',
        evaluatedAt: '2026-11-30T00:05:00Z',
        expiresAt: '2026-11-30T00:20:00Z',
      });
      // Evaluated stays True, so its transition time is carried forward; it names generation 2.
      expect(condition(status, 'Evaluated')).to.include({
        reason: 'Rejected',
        lastTransitionTime: '2026-11-30T00:00:00Z',
        observedGeneration: 2,
      });
      expect(second.resyncAfterSeconds).to.equal(900);
    });

    it('re-evaluates when the stored evaluation is incomplete or unreadable', () => {
      const first = statusOf(syncPlan(syncRequest(), CONFIG, NOW));
      const later = at('2026-11-30T00:01:00Z');
      const cases: Array<Partial<VirtualClusterPlanStatus>> = [
        { observedGeneration: undefined },
        { decision: undefined },
        { expiresAt: 'soon' },
        { checks: undefined },
      ];
      for (const change of cases) {
        const parent = { ...plan(), status: { ...first, ...change } };
        const status = statusOf(syncPlan(syncRequest(parent), CONFIG, later));
        expect(status.evaluatedAt, JSON.stringify(change)).to.equal('2026-11-30T00:01:00Z');
      }
    });
  });

  describe('an Unknown plan', () => {
    const noClass = () => toObjectMap([readyCell(), hostNamespace()]);

    it('is evaluated again when the class appears, and then concludes', () => {
      const first = syncPlan(syncRequest(plan(), noClass()), CONFIG, NOW);
      expect(statusOf(first).decision).to.equal('Unknown');
      const second = syncPlan(
        syncRequest(withStatus(first), acceptedRelated()),
        CONFIG,
        at('2026-11-30T00:00:02Z'),
      );
      expect(statusOf(second)).to.deep.include({
        decision: 'Accepted',
        evaluatedAt: '2026-11-30T00:00:02Z',
        expiresAt: '2026-11-30T00:15:02Z',
      });
      expect(condition(statusOf(second), 'Evaluated')).to.include({ reason: 'Accepted' });
    });

    it('writes nothing new while its inputs stay the same, however late the sync', () => {
      const first = syncPlan(syncRequest(plan(), noClass()), CONFIG, NOW);
      const again = syncPlan(
        syncRequest(withStatus(first), noClass()),
        CONFIG,
        at('2026-11-30T00:03:00Z'),
      );
      expect(JSON.stringify(statusOf(again))).to.equal(JSON.stringify(statusOf(first)));
    });
  });

  describe('expiry', () => {
    const expiresAt = '2026-11-30T00:15:00Z';

    function syncAt(iso: string, parent = withStatus(syncPlan(syncRequest(), CONFIG, NOW))) {
      return syncPlan(syncRequest(parent), CONFIG, at(iso));
    }

    it('is not expired one second before expiresAt, and asks to be called back then', () => {
      const response = syncAt('2026-11-30T00:14:59Z');
      expect(condition(statusOf(response), 'Expired')).to.include({
        status: 'False',
        reason: 'NotExpired',
      });
      expect(response.resyncAfterSeconds).to.equal(1);
      const justBefore = syncAt('2026-11-30T00:14:59.999Z');
      expect(condition(statusOf(justBefore), 'Expired').status).to.equal('False');
      expect(justBefore.resyncAfterSeconds).to.equal(1);
    });

    it('flips Expired at expiresAt, stamped with expiresAt, and keeps the decision', () => {
      const before = statusOf(syncPlan(syncRequest(), CONFIG, NOW));
      const response = syncAt(expiresAt);
      const status = statusOf(response);
      expect(response).not.to.have.property('resyncAfterSeconds');
      expect(condition(status, 'Expired')).to.deep.equal({
        type: 'Expired',
        status: 'True',
        reason: 'Expired',
        message:
          'The decision expired at 2026-11-30T00:15:00Z and is kept as it was; edit the spec or recreate the plan to evaluate again.',
        lastTransitionTime: expiresAt,
        observedGeneration: 1,
      });
      const withoutConditions = (s: VirtualClusterPlanStatus) =>
        JSON.stringify({ ...s, conditions: undefined });
      expect(withoutConditions(status)).to.equal(withoutConditions(before));
      expect(condition(status, 'Evaluated')).to.deep.equal(condition(before, 'Evaluated'));
    });

    it('stays expired and unchanged on later resyncs', () => {
      const expired = syncAt('2026-11-30T00:15:03Z');
      expect(condition(statusOf(expired), 'Expired').lastTransitionTime).to.equal(expiresAt);
      const later = syncAt('2026-12-02T00:00:00Z', withStatus(expired));
      expect(JSON.stringify(later)).to.equal(JSON.stringify(expired));
    });

    it('turns Expired back to False when a new generation is evaluated', () => {
      const expired = syncAt('2026-11-30T01:00:00Z');
      const parent = { ...plan(2), status: statusOf(expired) };
      const status = statusOf(syncPlan(syncRequest(parent), CONFIG, at('2026-11-30T02:00:00Z')));
      expect(condition(status, 'Expired')).to.include({
        status: 'False',
        lastTransitionTime: '2026-11-30T02:00:00Z',
        observedGeneration: 2,
      });
      expect(status.expiresAt).to.equal('2026-11-30T02:15:00Z');
    });
  });
});
