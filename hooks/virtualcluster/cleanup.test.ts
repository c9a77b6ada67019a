// VirtualCluster finalize: the children that remain and skip-cleanup.
import { expect } from 'chai';
import { finalizeVirtualCluster } from './sync.js';
import {
  acceptedRelated,
  condition,
  CONFIG,
  LATER,
  resolvedWorld,
  statusOf,
  runSync,
  syncRequest,
  withStatus,
} from './testing.js';

describe('VirtualCluster controller', () => {
  describe('deletion', () => {
    it('returns no children and stays unfinalized, listing what remains, until every child is gone', () => {
      const { vc, children } = resolvedWorld();
      const deleting = withStatus(vc, runSync(vc, acceptedRelated(), children).status);
      deleting.metadata.deletionTimestamp = '2026-11-30T02:00:00Z';
      const pending = finalizeVirtualCluster(
        syncRequest(deleting, acceptedRelated(), children, true),
        CONFIG,
        LATER,
      );
      expect(pending.children).to.deep.equal([]);
      expect(pending.finalized).to.equal(false);
      expect(pending.resyncAfterSeconds).to.equal(30);
      expect(statusOf(pending).phase).to.equal('Deleting');
      expect(statusOf(pending).cleanup).to.deep.equal([
        { apiVersion: 'k3k.io/v1beta1', kind: 'Cluster', name: 'team-a' },
        { apiVersion: 'v1', kind: 'LimitRange', name: 'kubecell-team-a-defaults' },
        { apiVersion: 'v1', kind: 'ResourceQuota', name: 'kubecell-team-a-quota' },
        { apiVersion: 'v1', kind: 'Service', name: 'kubecell-team-a-api' },
      ]);
      expect(statusOf(pending).resolved).to.deep.equal(vc.status?.resolved);
      expect(condition(pending, 'Ready')).to.deep.include({ status: 'False', reason: 'Deleting' });

      const onlyCluster = children.filter((c) => c.kind === 'Cluster');
      const still = finalizeVirtualCluster(
        syncRequest(deleting, [], onlyCluster, true),
        CONFIG,
        LATER,
      );
      expect(still.finalized).to.equal(false);
      expect(statusOf(still).cleanup).to.have.length(1);

      const done = finalizeVirtualCluster(syncRequest(deleting, [], [], true), CONFIG, LATER);
      expect(done.finalized).to.equal(true);
      expect(done.children).to.deep.equal([]);
      expect(statusOf(done).cleanup).to.deep.equal([]);
      expect(done.resyncAfterSeconds).to.equal(undefined);
    });

    it('finishes at once with kubecell.io/skip-cleanup=true, still reporting what is left', () => {
      const { vc, children } = resolvedWorld();
      const deleting = structuredClone(vc);
      deleting.metadata.deletionTimestamp = '2026-11-30T02:00:00Z';
      deleting.metadata.annotations = { 'kubecell.io/skip-cleanup': 'true' };
      const response = finalizeVirtualCluster(
        syncRequest(deleting, [], children, true),
        CONFIG,
        LATER,
      );
      expect(response.finalized).to.equal(true);
      expect(response.children).to.deep.equal([]);
      expect(statusOf(response).cleanup).to.have.length(4);
      deleting.metadata.annotations = { 'kubecell.io/skip-cleanup': 'false' };
      const not = finalizeVirtualCluster(syncRequest(deleting, [], children, true), CONFIG, LATER);
      expect(not.finalized).to.equal(false);
    });
  });
});
