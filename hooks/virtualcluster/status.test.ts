// VirtualCluster status: the phase and conditions once resolved.
import { expect } from 'chai';
import { cellLivenessRecord } from '../api/cell-liveness-record.js';
import type { CellStatus } from '../generated/types/index.js';
import { TYPE_KEYS } from '../kube/objects.js';
import { toObjectMap, type KubernetesObject } from '../metacontroller/protocol.js';
import { syncVirtualCluster } from './sync.js';
import {
  acceptedRelated,
  asObserved,
  cell,
  condition,
  CONFIG,
  hostNamespace,
  k3kKubeconfigSecret,
  LATER,
  resolvedWorld,
  smallClass,
  statusOf,
  runSync,
  syncRequest,
  withStatus,
} from './testing.js';

describe('VirtualCluster controller', () => {
  describe('after resolution', () => {
    it('never evaluates again: changing the Cell and the class leaves resolved and the children as they were', () => {
      const { vc, first, children } = resolvedWorld();
      const bigger = smallClass();
      bigger.spec.entitlement.workloadHard['requests.nvidia.com/gpu'] = '8';
      bigger.spec.storageClassName = 'other-storage';
      const moved = cell({ profile: 'h100', addresses: [{ node: 'n9', address: '10.9.9.9' }] });
      moved.status!.phase = 'Degraded';
      const second = runSync(vc, [moved, bigger, hostNamespace()], children, LATER);
      expect(statusOf(second).resolved).to.deep.equal(statusOf(first).resolved);
      expect(statusOf(second).feasibilityChecks).to.deep.equal(statusOf(first).feasibilityChecks);
      expect(withoutSecret(second.children)).to.deep.equal(first.children);
    });

    it('keeps the children unchanged when the Cell or the class is deleted, and reports Degraded', () => {
      const { vc, first, children } = resolvedWorld();
      const noCell = runSync(vc, [smallClass(), hostNamespace()], children, LATER);
      expect(withoutSecret(noCell.children)).to.deep.equal(first.children);
      expect(statusOf(noCell).phase).to.equal('Degraded');
      expect(condition(noCell, 'CellLive')).to.deep.include({
        status: 'False',
        reason: 'CellNotFound',
      });
      const noClass = runSync(vc, [cell(), hostNamespace()], children, LATER);
      expect(withoutSecret(noClass.children)).to.deep.equal(first.children);
      const nothing = syncVirtualCluster(
        {
          parent: vc,
          related: {},
          children: syncRequest(vc, [], children).children,
          finalizing: false,
        },
        CONFIG,
        LATER,
      );
      expect(withoutSecret(nothing.children)).to.deep.equal(first.children);
      expect(condition(nothing, 'CellLive')).to.deep.include({
        status: 'Unknown',
        reason: 'CellLivenessUnreadable',
      });
      expect(condition(nothing, 'CellLive')?.message).to.include('ConfigMaps were not observed');
      expect(statusOf(nothing).phase).to.equal('Degraded');
    });

    it('is Degraded when the Cell loses its lease or an inventory source', () => {
      const { vc, children } = resolvedWorld();
      const stale = cell();
      stale.status!.managedCluster!.leaseFresh = false;
      const response = runSync(vc, [stale, smallClass(), hostNamespace()], children, LATER);
      expect(statusOf(response).phase).to.equal('Degraded');
      expect(condition(response, 'Ready')).to.deep.include({ reason: 'LeaseStale' });
      const blind = cell();
      blind.status!.conditions![0]!.status = 'False';
      const noInventory = runSync(vc, [blind, smallClass(), hostNamespace()], children, LATER);
      expect(statusOf(noInventory).phase).to.equal('Degraded');
      expect(condition(noInventory, 'Ready')).to.deep.include({
        reason: 'CellInventoryUnavailable',
      });
    });

    it('is Failed, children kept, when the resolved Cell was replaced (another UID)', () => {
      const { vc, first, children } = resolvedWorld();
      const replaced = runSync(vc, [cell({ uid: 'other-uid' }), smallClass()], children, LATER);
      expect(statusOf(replaced).phase).to.equal('Failed');
      expect(condition(replaced, 'Ready')).to.deep.include({ reason: 'CellReplaced' });
      expect(withoutSecret(replaced.children)).to.deep.equal(first.children);
      expect(replaced.resyncAfterSeconds).to.equal(undefined);
      // Sticky: the original Cell coming back does not clear it.
      const back = runSync(withStatus(vc, replaced.status), acceptedRelated(), children, LATER);
      expect(statusOf(back).phase).to.equal('Failed');
      expect(condition(back, 'Ready')).to.deep.include({ reason: 'CellReplaced' });
    });

    it('is Failed while the Cell reports its ManagedCluster replaced', () => {
      const { vc, children } = resolvedWorld();
      const failedCell = cell();
      failedCell.status!.phase = 'Failed';
      failedCell.status!.conditions![1] = {
        type: 'Ready',
        status: 'False',
        reason: 'ManagedClusterReplaced',
        message: 'replaced',
        lastTransitionTime: '2026-11-30T00:30:00Z',
      };
      const response = runSync(vc, [failedCell, smallClass()], children, LATER);
      expect(statusOf(response).phase).to.equal('Failed');
      expect(condition(response, 'Ready')).to.deep.include({ reason: 'ManagedClusterReplaced' });
    });
  });

  describe("after resolution, from the Cell's liveness record alone (the Cell not related)", () => {
    /** A request as Metacontroller sends it once the customize answer names the record only. */
    function recordOnly(related: KubernetesObject[]) {
      const { vc, children } = resolvedWorld();
      const request = syncRequest(vc, [smallClass(), hostNamespace()], children);
      delete request.related[TYPE_KEYS.cell];
      request.related[TYPE_KEYS.configMap] = toObjectMap(related)[TYPE_KEYS.configMap] ?? {};
      return syncVirtualCluster(request, CONFIG, LATER);
    }
    const record = (change: (status: CellStatus) => void = () => undefined, uid?: string) => {
      const source = cell(uid ? { uid } : {});
      change(source.status!);
      return cellLivenessRecord(source, source.status!) as unknown as KubernetesObject;
    };

    it('reads CellLive True from a fresh record, and is Degraded when it says stale', () => {
      expect(condition(recordOnly([record()]), 'CellLive')).to.deep.include({
        status: 'True',
        reason: 'LeaseFresh',
      });
      const stale = recordOnly([record((status) => (status.managedCluster!.leaseFresh = false))]);
      expect(statusOf(stale).phase).to.equal('Degraded');
      expect(condition(stale, 'CellLive')).to.deep.include({
        status: 'False',
        reason: 'LeaseStale',
      });
    });

    it('is Failed (CellReplaced) when the record was written by another Cell of that name', () => {
      const replaced = recordOnly([record(undefined, 'other-uid')]);
      expect(statusOf(replaced).phase).to.equal('Failed');
      expect(condition(replaced, 'Ready')).to.deep.include({ reason: 'CellReplaced' });
    });

    it('says Unknown, naming the record or the key, when it is absent or not one KubeCell writes', () => {
      const absent = recordOnly([]);
      expect(condition(absent, 'CellLive')).to.deep.include({
        status: 'Unknown',
        reason: 'CellLivenessUnreadable',
      });
      expect(condition(absent, 'CellLive')?.message).to.include(
        'ConfigMap kubecell-cell-cell1, does not exist',
      );
      const edited = record() as KubernetesObject & { data: Record<string, string> };
      edited.data['leaseFresh'] = 'yes, trust me';
      const tampered = recordOnly([edited]);
      expect(condition(tampered, 'CellLive')).to.deep.include({
        status: 'Unknown',
        reason: 'CellLivenessUnreadable',
      });
      expect(condition(tampered, 'CellLive')?.message).to.include('unexpected data.leaseFresh');
      expect(condition(tampered, 'CellLive')?.message).not.to.include('trust me');
    });
  });

  describe('Ready', () => {
    it('needs k3k Ready, the NodePort, the published kubeconfig and the quota in force', () => {
      const { vc, withK3k, observed, ready } = readyWorld();
      const status = statusOf(ready);
      expect(status.phase).to.equal('Ready');
      expect(condition(ready, 'Ready')).to.deep.include({ status: 'True', reason: 'Ready' });
      expect(condition(ready, 'K3kReady')).to.deep.include({ status: 'True' });
      expect(condition(ready, 'ChildrenApplied')).to.deep.include({ status: 'True' });
      expect(status.host).to.deep.equal({
        namespace: 'tenant-a',
        quotaHard: { pods: '52', 'requests.cpu': '5' },
        quotaUsed: { pods: '2', 'requests.cpu': '600m' },
      });
      expect(ready.resyncAfterSeconds).to.equal(undefined);
      expect(withK3k.resyncAfterSeconds).to.equal(CONFIG.resyncSeconds);

      const cluster = observed.find((c) => c.kind === 'Cluster')!;
      cluster.status = {
        phase: 'Provisioning',
        conditions: [{ type: 'Ready', status: 'False', reason: 'Provisioning', message: 'wait' }],
      };
      const notReady = runSync(withStatus(vc, ready.status), acceptedRelated(), observed, LATER);
      expect(statusOf(notReady).phase).to.equal('Provisioning');
      expect(condition(notReady, 'K3kReady')).to.deep.include({
        status: 'False',
        reason: 'K3kNotReady',
      });
    });

    it("keeps a byte-identical status and asks for no resync when only the Cell's figures and heartbeat move", () => {
      const { vc, observed, ready } = readyWorld();
      const moved = cell({ addresses: [{ node: 'node-z', address: '10.9.9.9' }] });
      moved.status!.observedAt = '2026-11-30T01:04:59Z';
      moved.status!.inventory!['cpu']!.committed = '12';
      moved.status!.resolvedBy = 2;
      const again = runSync(
        withStatus(vc, ready.status),
        [moved, smallClass(), hostNamespace(), k3kKubeconfigSecret()],
        observed,
        new Date('2026-11-30T01:05:00Z'),
      );
      expect(JSON.stringify(again.status)).to.equal(JSON.stringify(ready.status));
      expect(again.resyncAfterSeconds).to.equal(undefined);
      expect(condition(again, 'CellLive')).to.deep.include({
        status: 'True',
        reason: 'LeaseFresh',
        message: "The lease of Cell cell1's ManagedCluster is fresh.",
      });
    });
  });
});

/** A resolved VirtualCluster taken to Ready: k3k Ready, the kubeconfig published, the quota in force. */
function readyWorld() {
  const { vc, children } = resolvedWorld();
  const withK3k = runSync(vc, [...acceptedRelated(), k3kKubeconfigSecret()], children, LATER);
  const observed = withK3k.children.map((child) => {
    const existing = children.find(
      (c) => c.kind === child.kind && c.metadata.name === child.metadata.name,
    );
    return existing ?? asObserved(child);
  }) as (KubernetesObject & { status?: unknown })[];
  const cluster = observed.find((c) => c.kind === 'Cluster')!;
  cluster.status = {
    phase: 'Ready',
    conditions: [{ type: 'Ready', status: 'True', reason: 'Provisioned', message: 'ok' }],
  };
  const quota = observed.find((c) => c.kind === 'ResourceQuota')!;
  quota.status = {
    hard: { pods: '52', 'requests.cpu': '5' },
    used: { 'requests.cpu': '600m', pods: '2' },
  };
  const ready = runSync(
    withStatus(vc, withK3k.status),
    [...acceptedRelated(), k3kKubeconfigSecret()],
    observed,
    LATER,
  );
  return { vc, withK3k, observed, ready };
}

function withoutSecret(children: KubernetesObject[]): KubernetesObject[] {
  return children.filter((child) => child.kind !== 'Secret');
}
