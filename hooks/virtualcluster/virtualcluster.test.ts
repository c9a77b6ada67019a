import { expect } from 'chai';
import type { VirtualCluster, VirtualClusterStatus } from '../generated/types/index.js';
import type { CompositeSyncResponse, KubernetesObject } from '../metacontroller/protocol.js';
import { loadVirtualClusterConfig } from './config.js';
import { CONTROL_PLANE_RESERVE, LIMIT_RANGE_DEFAULT_REQUEST } from './constants.js';
import { customizeVirtualCluster } from './customize.js';
import { k3kKubeconfigSecretName, k3kObjectName } from './names.js';
import { chooseEndpoint, isOlder, STALE_COPY_GRACE_SECONDS } from './resolve.js';
import { RetryLaterError } from '../metacontroller/retry-later.js';
import { finalizeVirtualCluster, syncVirtualCluster } from './sync.js';
import {
  acceptedRelated,
  asObserved,
  cell,
  CONFIG,
  hostNamespace,
  K3K_KUBECONFIG,
  k3kKubeconfigSecret,
  limitsClass,
  node,
  NOW,
  smallClass,
  syncRequest,
  VC_UID,
  virtualCluster,
  withStatus,
} from './testing.js';

const LATER = new Date('2026-11-30T01:00:00Z');

function sync(
  vc: VirtualCluster,
  related: KubernetesObject[] = acceptedRelated(),
  children: KubernetesObject[] = [],
  now = NOW,
) {
  return syncVirtualCluster(syncRequest(vc, related, children), CONFIG, now);
}

function statusOf(response: CompositeSyncResponse): VirtualClusterStatus {
  return response.status as VirtualClusterStatus;
}

function condition(response: CompositeSyncResponse, type: string) {
  return statusOf(response).conditions?.find((c) => c.type === type);
}

function byKind(children: KubernetesObject[], kind: string) {
  return children.find((child) => child.kind === kind);
}

/** A resolved VirtualCluster and the children Metacontroller created for it. */
function resolvedWorld(options: { nodePort?: number } = {}) {
  const vc = virtualCluster();
  const first = sync(vc);
  const resolvedVc = withStatus(vc, first.status);
  const children = first.children.map((child) =>
    asObserved(child, child.kind === 'Service' ? { nodePort: options.nodePort ?? 31234 } : {}),
  );
  return { vc: resolvedVc, first, children };
}

describe('VirtualCluster controller', () => {
  describe('customize', () => {
    it('relates the Cell, the class, the VirtualClusters, k3k kubeconfig, the Namespace and the Nodes', () => {
      const rules = customizeVirtualCluster(
        { parent: virtualCluster() },
        'kubecell-system',
      ).relatedResources;
      expect(rules).to.deep.equal([
        {
          apiVersion: 'kubecell.io/v1alpha1',
          resource: 'cells',
          namespace: 'kubecell-system',
          names: ['cell1'],
        },
        { apiVersion: 'kubecell.io/v1alpha1', resource: 'virtualnodeclasses', names: ['small'] },
        {
          apiVersion: 'kubecell.io/v1alpha1',
          resource: 'virtualclusters',
          labelSelector: { matchLabels: { 'kubecell.io/cell': 'cell1' } },
        },
        { apiVersion: 'kubecell.io/v1alpha1', resource: 'virtualclusters', namespace: 'tenant-a' },
        {
          apiVersion: 'v1',
          resource: 'secrets',
          namespace: 'tenant-a',
          names: ['k3k-team-a-kubeconfig'],
        },
        { apiVersion: 'v1', resource: 'namespaces', names: ['tenant-a'] },
        {
          apiVersion: 'v1',
          resource: 'nodes',
          labelSelector: {
            matchExpressions: [{ key: 'kubecell.io/machine-profile', operator: 'Exists' }],
          },
        },
      ]);
    });

    it('depends on the spec only: the same rules whatever the status', () => {
      const plain = customizeVirtualCluster({ parent: virtualCluster() }, 'kubecell-system');
      const { vc } = resolvedWorld();
      expect(customizeVirtualCluster({ parent: vc }, 'kubecell-system')).to.deep.equal(plain);
    });

    it('keeps only the Cell of KUBECELL_CONTROLLER_NAMESPACE among the Cells of that name', () => {
      const elsewhere = cell({ uid: 'elsewhere-uid' });
      elsewhere.metadata.namespace = 'platform';
      const response = sync(virtualCluster(), [elsewhere, ...acceptedRelated()]);
      expect(statusOf(response).resolved?.cell.uid).to.equal('cell1-uid');
      const config = loadVirtualClusterConfig({ KUBECELL_CONTROLLER_NAMESPACE: 'platform' });
      const moved = syncVirtualCluster(
        syncRequest(virtualCluster(), [elsewhere, ...acceptedRelated()]),
        config,
        NOW,
      );
      expect(statusOf(moved).resolved?.cell.uid).to.equal('elsewhere-uid');
      const none = syncVirtualCluster(syncRequest(virtualCluster()), config, NOW);
      expect(statusOf(none).feasibilityChecks?.[0]).to.deep.include({ reason: 'CellNotFound' });
    });

    it('counts the VirtualClusters on the same Cell or namespace, not the others', () => {
      const onCell = virtualCluster({ name: 'b', namespace: 'tenant-b', uid: 'b-uid' });
      onCell.status = {
        resolved: { ...resolvedWorld().vc.status!.resolved!, hostNamespace: 'tenant-b' },
      };
      onCell.status.resolved!.class.entitlement.workloadHard = { 'requests.nvidia.com/gpu': '7' };
      const elsewhere = structuredClone(onCell);
      elsewhere.metadata = { ...elsewhere.metadata, name: 'c', uid: 'c-uid', labels: {} };
      elsewhere.status!.resolved!.cell.name = 'cell2';
      const accepted = sync(virtualCluster(), [...acceptedRelated(), elsewhere]);
      expect(statusOf(accepted).phase).to.equal('Provisioning');
      const full = sync(virtualCluster(), [...acceptedRelated(), onCell]);
      expect(statusOf(full).phase).to.equal('Pending');
      const gpu = statusOf(full).feasibilityChecks?.find(
        (check) => check.name === 'Capacity' && check.resource === 'nvidia.com/gpu',
      );
      expect(gpu).to.deep.include({ result: 'Fail', reason: 'InsufficientCapacity' });
    });

    it("names k3k's kubeconfig Secret as k3k does, long names included", () => {
      expect(k3kKubeconfigSecretName('team-a')).to.equal('k3k-team-a-kubeconfig');
      const long = k3kObjectName('a'.repeat(70), 'kubeconfig');
      expect(long).to.have.length(63);
      expect(long).to.match(/^k3k-a{53}-[0-9a-f]{5}$/);
    });
  });

  describe('creation', () => {
    it('stays Pending with the feasibility report and a resync when the placement is rejected', () => {
      const staleCell = cell();
      staleCell.status!.managedCluster!.leaseFresh = false;
      const response = sync(virtualCluster(), [
        staleCell,
        smallClass(),
        hostNamespace(),
        node('node-a', '10.0.12.7'),
      ]);
      const status = statusOf(response);
      expect(status.phase).to.equal('Pending');
      expect(status.resolved).to.equal(undefined);
      expect(response.children).to.deep.equal([]);
      expect(response.resyncAfterSeconds).to.equal(30);
      const live = status.feasibilityChecks?.find((check) => check.name === 'CellLive');
      expect(live).to.deep.include({ result: 'Fail', reason: 'LeaseStale' });
      expect(condition(response, 'Feasible')).to.deep.include({
        status: 'False',
        reason: 'Rejected',
      });
      expect(condition(response, 'Resolved')).to.deep.include({
        status: 'False',
        reason: 'FeasibilityRejected',
      });
      expect(condition(response, 'Ready')).to.deep.include({ status: 'False', reason: 'Pending' });
    });

    it('stays Pending (Unknown) while the class is not found or the Cell has no status', () => {
      const noStatus = cell();
      delete noStatus.status;
      const unknown = sync(virtualCluster(), [noStatus, smallClass(), hostNamespace()]);
      expect(statusOf(unknown).phase).to.equal('Pending');
      expect(condition(unknown, 'Feasible')).to.deep.include({
        status: 'Unknown',
        reason: 'Unknown',
      });
      const noClass = sync(virtualCluster(), [cell(), hostNamespace()]);
      expect(statusOf(noClass).phase).to.equal('Pending');
      expect(statusOf(noClass).feasibilityChecks?.[1]).to.deep.include({
        name: 'ClassFound',
        result: 'Fail',
      });
    });

    it('writes the snapshot once accepted, with the fields DESIGN names, and renders the children', () => {
      const response = sync(virtualCluster());
      const status = statusOf(response);
      expect(status.phase).to.equal('Provisioning');
      expect(status.resolved).to.deep.equal({
        cell: {
          name: 'cell1',
          uid: 'cell1-uid',
          managedClusterName: 'cell1',
          machineProfile: {
            name: 'a100',
            devices: [{ name: 'gpu', resourceName: 'nvidia.com/gpu' }],
          },
        },
        class: {
          name: 'small',
          uid: 'small-uid',
          storageClassName: 'topolvm-provisioner',
          entitlement: {
            workloadHard: {
              persistentvolumeclaims: '10',
              pods: '50',
              'requests.cpu': '4',
              'requests.memory': '16Gi',
              'requests.nvidia.com/gpu': '2',
              'requests.storage': '100Gi',
            },
          },
        },
        hostNamespace: 'tenant-a',
        endpointAddress: chooseEndpoint(
          [node('node-a', '10.0.12.7'), node('node-b', '10.0.12.8')],
          'a100',
          VC_UID,
        )?.address,
        resolvedAt: '2026-11-30T00:00:00Z',
      });
      expect(response.children.map((c) => `${c.kind}/${c.metadata.name}`)).to.deep.equal([
        'Cluster/team-a',
        'ResourceQuota/kubecell-team-a-quota',
        'LimitRange/kubecell-team-a-defaults',
        'Service/kubecell-team-a-api',
      ]);
      for (const child of response.children) {
        expect(child.metadata.namespace).to.equal('tenant-a');
      }
      expect(condition(response, 'Resolved')).to.deep.include({ status: 'True' });
      expect(response.resyncAfterSeconds).to.equal(30);
    });

    it('stays Pending with NoEndpointAddress when no Ready, schedulable profile Node has an InternalIP', () => {
      const response = sync(virtualCluster(), [
        cell(),
        smallClass(),
        hostNamespace(),
        node('node-a', '10.0.12.7', { ready: false }),
        node('node-b', '10.0.12.8', { unschedulable: true }),
        node('node-c', '10.0.99.1', { profile: 'h100' }),
      ]);
      expect(statusOf(response).phase).to.equal('Pending');
      expect(condition(response, 'Feasible')).to.deep.include({ status: 'True' });
      expect(condition(response, 'Resolved')).to.deep.include({ reason: 'NoEndpointAddress' });
      expect(response.children).to.deep.equal([]);
    });
  });

  describe('the endpoint address rule', () => {
    const nodes = [
      node('node-c', '10.0.0.3'),
      node('node-a', '10.0.0.1'),
      node('node-b', '10.0.0.2'),
      node('node-x', '10.0.0.9', { ready: false }),
      node('node-y', '10.0.0.8', { unschedulable: true }),
      node('node-z', '10.0.0.7', { profile: 'other' }),
    ];

    it('is deterministic and ignores Nodes that are not Ready, cordoned or of another profile', () => {
      const picks = new Set<string>();
      for (let i = 0; i < 50; i += 1) {
        const choice = chooseEndpoint(nodes, 'a100', `uid-${i}`);
        expect(choice).to.deep.equal(chooseEndpoint([...nodes].reverse(), 'a100', `uid-${i}`));
        picks.add(choice?.address ?? '');
      }
      expect([...picks].sort()).to.deep.equal(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
    });

    it('takes the first InternalIP of the chosen Node', () => {
      const dual = node('node-a', '10.0.0.1');
      dual.status!.addresses = [
        { type: 'ExternalIP', address: '203.0.113.5' },
        { type: 'InternalIP', address: '10.0.0.1' },
        { type: 'InternalIP', address: 'fd00::1' },
      ];
      expect(chooseEndpoint([dual], 'a100', 'x')).to.deep.equal({
        node: 'node-a',
        address: '10.0.0.1',
      });
    });
  });

  describe('after resolution', () => {
    it('never evaluates again: changing the Cell and the class leaves resolved and the children as they were', () => {
      const { vc, first, children } = resolvedWorld();
      const bigger = smallClass();
      bigger.spec.entitlement.workloadHard['requests.nvidia.com/gpu'] = '8';
      bigger.spec.storageClassName = 'other-storage';
      const moved = cell({ profile: 'h100' });
      moved.status!.phase = 'Degraded';
      const second = sync(
        vc,
        [moved, bigger, hostNamespace(), node('n9', '10.9.9.9')],
        children,
        LATER,
      );
      expect(statusOf(second).resolved).to.deep.equal(statusOf(first).resolved);
      expect(statusOf(second).feasibilityChecks).to.deep.equal(statusOf(first).feasibilityChecks);
      expect(withoutSecret(second.children)).to.deep.equal(first.children);
    });

    it('keeps the children unchanged when the Cell or the class is deleted, and reports Degraded', () => {
      const { vc, first, children } = resolvedWorld();
      const noCell = sync(vc, [smallClass(), hostNamespace()], children, LATER);
      expect(withoutSecret(noCell.children)).to.deep.equal(first.children);
      expect(statusOf(noCell).phase).to.equal('Degraded');
      expect(condition(noCell, 'CellLive')).to.deep.include({
        status: 'False',
        reason: 'CellNotFound',
      });
      const noClass = sync(vc, [cell(), hostNamespace()], children, LATER);
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
        reason: 'CellNotObserved',
      });
      expect(statusOf(nothing).phase).to.equal('Degraded');
    });

    it('is Degraded when the Cell loses its lease or an inventory source', () => {
      const { vc, children } = resolvedWorld();
      const stale = cell();
      stale.status!.managedCluster!.leaseFresh = false;
      const response = sync(vc, [stale, smallClass(), hostNamespace()], children, LATER);
      expect(statusOf(response).phase).to.equal('Degraded');
      expect(condition(response, 'Ready')).to.deep.include({ reason: 'LeaseStale' });
      const blind = cell();
      blind.status!.conditions![0]!.status = 'False';
      const noInventory = sync(vc, [blind, smallClass(), hostNamespace()], children, LATER);
      expect(statusOf(noInventory).phase).to.equal('Degraded');
      expect(condition(noInventory, 'Ready')).to.deep.include({
        reason: 'CellInventoryUnavailable',
      });
    });

    it('is Failed, children kept, when the resolved Cell was replaced (another UID)', () => {
      const { vc, first, children } = resolvedWorld();
      const replaced = sync(vc, [cell({ uid: 'other-uid' }), smallClass()], children, LATER);
      expect(statusOf(replaced).phase).to.equal('Failed');
      expect(condition(replaced, 'Ready')).to.deep.include({ reason: 'CellReplaced' });
      expect(withoutSecret(replaced.children)).to.deep.equal(first.children);
      expect(replaced.resyncAfterSeconds).to.equal(undefined);
      // Sticky: the original Cell coming back does not clear it.
      const back = sync(withStatus(vc, replaced.status), acceptedRelated(), children, LATER);
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
      const response = sync(vc, [failedCell, smallClass()], children, LATER);
      expect(statusOf(response).phase).to.equal('Failed');
      expect(condition(response, 'Ready')).to.deep.include({ reason: 'ManagedClusterReplaced' });
    });
  });

  describe('one VirtualCluster per namespace', () => {
    const older = virtualCluster({
      name: 'first',
      uid: 'first-uid',
      created: '2026-11-01T00:00:00Z',
    });
    const newer = virtualCluster({
      name: 'second',
      uid: 'second-uid',
      created: '2026-11-02T00:00:00Z',
    });

    it('fails the newer one and lets the older one resolve', () => {
      const forNewer = sync(newer, [...acceptedRelated(), older]);
      expect(statusOf(forNewer).phase).to.equal('Failed');
      expect(condition(forNewer, 'Ready')).to.deep.include({
        status: 'False',
        reason: 'NamespaceOccupied',
      });
      expect(statusOf(forNewer).resolved).to.equal(undefined);
      expect(forNewer.children).to.deep.equal([]);
      expect(
        statusOf(forNewer).feasibilityChecks?.find((c) => c.name === 'NamespaceAvailable'),
      ).to.deep.include({ result: 'Fail', reason: 'NamespaceOccupied' });

      const forOlder = sync(older, [...acceptedRelated(), newer]);
      expect(statusOf(forOlder).phase).to.equal('Provisioning');
      expect(statusOf(forOlder).resolved).to.not.equal(undefined);
    });

    it('waits Pending (not Failed) while the older one is being deleted', () => {
      const leaving = structuredClone(older);
      leaving.metadata.deletionTimestamp = '2026-11-29T23:00:00Z';
      const response = sync(newer, [...acceptedRelated(), leaving]);
      expect(statusOf(response).phase).to.equal('Pending');
      expect(
        statusOf(response).feasibilityChecks?.find((c) => c.name === 'NamespaceAvailable'),
      ).to.deep.include({ result: 'Fail', reason: 'NamespaceOccupied' });
      const gone = sync(withStatus(newer, response.status), acceptedRelated());
      expect(statusOf(gone).phase).to.equal('Provisioning');
    });

    it('compares creationTimestamp, then name', () => {
      const a = virtualCluster({ name: 'a', created: '2026-11-02T00:00:00Z' });
      const b = virtualCluster({ name: 'b', created: '2026-11-02T00:00:00Z' });
      expect(isOlder(a, b)).to.equal(true);
      expect(isOlder(b, a)).to.equal(false);
      expect(isOlder(older, a)).to.equal(true);
    });

    it('stays Failed after the older one is gone and after re-applying (a new generation)', () => {
      const failed = sync(newer, [...acceptedRelated(), older]);
      const again = sync(
        withStatus({ ...newer, metadata: { ...newer.metadata, generation: 2 } }, failed.status),
        acceptedRelated(),
        [],
        LATER,
      );
      expect(statusOf(again).phase).to.equal('Failed');
      expect(statusOf(again).resolved).to.equal(undefined);
      expect(again.children).to.deep.equal([]);
      expect(condition(again, 'Ready')).to.deep.include({ reason: 'NamespaceOccupied' });
    });
  });

  describe('the kubeconfig Secret', () => {
    it('is published once the NodePort and k3k kubeconfig exist, server rewritten, nothing else changed', () => {
      const { vc, children } = resolvedWorld({ nodePort: 31234 });
      const response = sync(vc, [...acceptedRelated(), k3kKubeconfigSecret()], children, LATER);
      const secret = byKind(response.children, 'Secret') as KubernetesObject & {
        data: Record<string, string>;
        type: string;
      };
      expect(secret.metadata.name).to.equal(`kubecell-team-a-${VC_UID}-admin-kubeconfig`);
      expect(secret.type).to.equal('Opaque');
      expect(Object.keys(secret.data)).to.deep.equal(['kubeconfig.yaml']);
      const text = Buffer.from(secret.data['kubeconfig.yaml']!, 'base64').toString('utf8');
      const address = statusOf(response).resolved!.endpointAddress;
      expect(text).to.equal(
        K3K_KUBECONFIG.replace(
          'server: https://10.43.12.34:443',
          `server: https://${address}:31234`,
        ),
      );
      expect(statusOf(response).endpoint).to.deep.equal({ address, port: 31234 });
      // Not observed yet: not published.
      expect(condition(response, 'KubeconfigPublished')).to.deep.include({
        status: 'False',
        reason: 'SecretNotApplied',
      });
      expect(statusOf(response).credential).to.equal(undefined);

      const published = sync(
        withStatus(vc, response.status),
        [...acceptedRelated(), k3kKubeconfigSecret()],
        [...children, asObserved(secret)],
        LATER,
      );
      expect(condition(published, 'KubeconfigPublished')).to.deep.include({ status: 'True' });
      expect(statusOf(published).credential).to.deep.equal({ secretName: secret.metadata.name });
    });

    it('is not rendered before k3k wrote its kubeconfig, nor from an unreadable one', () => {
      const { vc, children } = resolvedWorld();
      const waiting = sync(vc, acceptedRelated(), children, LATER);
      expect(byKind(waiting.children, 'Secret')).to.equal(undefined);
      expect(condition(waiting, 'KubeconfigPublished')).to.deep.include({
        reason: 'WaitingForK3kKubeconfig',
      });
      const broken = sync(
        vc,
        [...acceptedRelated(), k3kKubeconfigSecret('clusters: [\n')],
        children,
        LATER,
      );
      expect(byKind(broken.children, 'Secret')).to.equal(undefined);
      expect(condition(broken, 'KubeconfigPublished')).to.deep.include({
        reason: 'K3kKubeconfigInvalid',
      });
    });

    it("keeps the published Secret unchanged when k3k's Secret vanishes", () => {
      const { vc, children } = resolvedWorld();
      const withK3k = sync(vc, [...acceptedRelated(), k3kKubeconfigSecret()], children, LATER);
      const observedSecret = asObserved(byKind(withK3k.children, 'Secret')!);
      const all = [...children, observedSecret];
      const vanished = sync(withStatus(vc, withK3k.status), acceptedRelated(), all, LATER);
      const kept = byKind(vanished.children, 'Secret') as KubernetesObject & { data: unknown };
      expect(kept).to.not.equal(undefined);
      expect(kept.data).to.deep.equal((observedSecret as unknown as { data: unknown }).data);
      expect(kept.metadata.name).to.equal(observedSecret.metadata.name);
      expect(kept.metadata).to.not.have.property('resourceVersion');
      expect(kept.metadata.annotations ?? {}).to.not.have.property(
        'metacontroller.k8s.io/last-applied-configuration',
      );
      expect(condition(vanished, 'KubeconfigPublished')).to.deep.include({ status: 'True' });
    });
  });

  describe('Ready', () => {
    it('needs k3k Ready, the NodePort, the published kubeconfig and the quota in force', () => {
      const { vc, children } = resolvedWorld();
      const withK3k = sync(vc, [...acceptedRelated(), k3kKubeconfigSecret()], children, LATER);
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
      const ready = sync(
        withStatus(vc, withK3k.status),
        [...acceptedRelated(), k3kKubeconfigSecret()],
        observed,
        LATER,
      );
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

      cluster.status = {
        phase: 'Provisioning',
        conditions: [{ type: 'Ready', status: 'False', reason: 'Provisioning', message: 'wait' }],
      };
      const notReady = sync(withStatus(vc, ready.status), acceptedRelated(), observed, LATER);
      expect(statusOf(notReady).phase).to.equal('Provisioning');
      expect(condition(notReady, 'K3kReady')).to.deep.include({
        status: 'False',
        reason: 'K3kNotReady',
      });
    });
  });

  describe('quota and defaults', () => {
    it('adds the control-plane reserve to the keys the entitlement limits, and only to those', () => {
      const { first } = resolvedWorld();
      const quota = byKind(first.children, 'ResourceQuota') as unknown as {
        spec: { hard: Record<string, string> };
      };
      expect(quota.spec.hard).to.deep.equal({
        persistentvolumeclaims: '11',
        pods: '52',
        'requests.cpu': '5',
        'requests.memory': '17Gi',
        'requests.nvidia.com/gpu': '2',
        'requests.storage': '102Gi',
      });
      expect(CONTROL_PLANE_RESERVE['requests.nvidia.com/gpu']).to.equal(undefined);
      const limitRange = byKind(first.children, 'LimitRange') as unknown as {
        spec: { limits: Record<string, unknown>[] };
      };
      expect(limitRange.spec.limits).to.deep.equal([
        { type: 'Container', defaultRequest: { ...LIMIT_RANGE_DEFAULT_REQUEST } },
      ]);
    });

    it('sets default limits only for the resources whose limits the class bounds', () => {
      const vc = virtualCluster();
      const cls = limitsClass();
      vc.spec.classRef.name = cls.metadata.name;
      const response = sync(vc, [cell(), cls, hostNamespace(), node('node-a', '10.0.12.7')]);
      const limitRange = byKind(response.children, 'LimitRange') as unknown as {
        spec: { limits: Record<string, unknown>[] };
      };
      expect(limitRange.spec.limits[0]).to.deep.include({ default: { cpu: '1', memory: '1Gi' } });
      const quota = byKind(response.children, 'ResourceQuota') as unknown as {
        spec: { hard: Record<string, string> };
      };
      expect(quota.spec.hard).to.deep.equal({
        'count/deployments.apps': '10',
        cpu: '3',
        'limits.cpu': '6',
        'limits.memory': '10Gi',
        memory: '5Gi',
        services: '9',
        'services.nodeports': '2',
        'topolvm-provisioner.storageclass.storage.k8s.io/requests.storage': '22Gi',
      });
    });
  });

  describe('deletion', () => {
    it('returns no children and stays unfinalized, listing what remains, until every child is gone', () => {
      const { vc, children } = resolvedWorld();
      const deleting = withStatus(vc, sync(vc, acceptedRelated(), children).status);
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

  describe('determinism and robustness', () => {
    it('answers byte-identical status for the same request and clock, and converges', () => {
      const { vc, children } = resolvedWorld();
      const related = [...acceptedRelated(), k3kKubeconfigSecret()];
      const a = JSON.stringify(sync(vc, related, children, LATER));
      const b = JSON.stringify(
        sync(structuredClone(vc), structuredClone(related), structuredClone(children), LATER),
      );
      expect(a).to.equal(b);
      // Feeding the answer back (what Metacontroller stores) gives the same status: no loop.
      const first = sync(vc, related, children, LATER);
      const second = sync(
        withStatus(vc, first.status),
        related,
        children,
        new Date('2026-11-30T05:00:00Z'),
      );
      expect(JSON.stringify(second.status)).to.equal(JSON.stringify(first.status));
      const pending = sync(virtualCluster(), [cell(), hostNamespace()]);
      const pendingAgain = sync(
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
      const response = sync(broken, acceptedRelated(), children, LATER);
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
      const response = sync(lost, [smallClass(), hostNamespace()], children, LATER);
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
        expect(() => sync(stale, acceptedRelated(), children, new Date(created + afterMs)))
          .to.throw(RetryLaterError)
          .with.property('message')
          .that.matches(/no status\.resolved, but its .* was created at 2026-11-30T00:00:01Z/);
      }
      // A Pending copy (the status of a sync that did not accept yet) is as stale.
      const pending = withStatus(vc, statusOf(sync(virtualCluster(), [smallClass()])));
      expect(() => sync(pending, acceptedRelated(), children, new Date(created + 1000))).to.throw(
        RetryLaterError,
      );
      // With the snapshot in the copy, the same sync answers.
      expect(
        statusOf(sync(vc, acceptedRelated(), children, new Date(created))).resolved,
      ).to.deep.equal(vc.status?.resolved);
      // Without children there is nothing to give a copy away: a new VirtualCluster resolves.
      expect(statusOf(sync(stale, acceptedRelated(), [], new Date(created))).resolved).to.not.equal(
        undefined,
      );
    });

    it('evaluates again when the snapshot is still missing once the newest child is past the grace period', () => {
      const { vc, children } = resolvedWorld();
      const lost = withStatus(vc, undefined);
      const later = new Date(Date.parse('2026-11-30T00:00:01Z') + STALE_COPY_GRACE_SECONDS * 1000);
      const response = sync(lost, acceptedRelated(), children, later);
      expect(statusOf(response).phase).to.equal('Provisioning');
      expect(statusOf(response).resolved?.resolvedAt).to.equal('2026-11-30T00:01:01Z');
      // A child without a creationTimestamp proves nothing either.
      const undated = children.map((child) => {
        const copy = structuredClone(child);
        delete copy.metadata.creationTimestamp;
        return copy;
      });
      expect(statusOf(sync(lost, acceptedRelated(), undated, NOW)).phase).to.equal('Provisioning');
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
      const response = sync(vc, [
        odd as unknown as KubernetesObject,
        limitsClass(),
        hostNamespace(),
        node('node-a', '10.0.12.7'),
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
      const response = sync(vc, acceptedRelated(), edited, LATER);
      expect(byKind(response.children, 'ResourceQuota')).to.deep.equal(
        byKind(first.children, 'ResourceQuota'),
      );
    });
  });

  describe('configuration', () => {
    it('reads the controller namespace, NodePort range and resync period, and refuses bad values', () => {
      expect(loadVirtualClusterConfig({})).to.deep.include({
        cellNamespace: 'kubecell-system',
        nodePortRange: { first: 30000, last: 32767 },
        resyncSeconds: 30,
      });
      expect(
        loadVirtualClusterConfig({
          KUBECELL_NODEPORT_RANGE: '31000-31999',
          KUBECELL_VIRTUALCLUSTER_RESYNC_SECONDS: '10',
        }),
      ).to.deep.include({ nodePortRange: { first: 31000, last: 31999 }, resyncSeconds: 10 });
      expect(() =>
        loadVirtualClusterConfig({
          KUBECELL_CONTROLLER_NAMESPACE: 'Bad_NS',
          KUBECELL_NODEPORT_RANGE: '9-1',
          KUBECELL_VIRTUALCLUSTER_RESYNC_SECONDS: '0',
        }),
      ).to.throw(/KUBECELL_CONTROLLER_NAMESPACE[\s\S]*KUBECELL_NODEPORT_RANGE[\s\S]*RESYNC/);
    });
  });
});

function withoutSecret(children: KubernetesObject[]): KubernetesObject[] {
  return children.filter((child) => child.kind !== 'Secret');
}
