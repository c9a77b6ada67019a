// VirtualCluster customize: the related objects, from the spec alone.
import { expect } from 'chai';
import { loadVirtualClusterConfig } from './config.js';
import { customizeVirtualCluster } from './customize.js';
import { k3kKubeconfigSecretName, k3kObjectName } from './names.js';
import { syncVirtualCluster } from './sync.js';
import {
  acceptedRelated,
  cell,
  hostNamespace,
  NOW,
  resolvedWorld,
  statusOf,
  runSync,
  smallClass,
  syncRequest,
  virtualCluster,
} from './testing.js';

describe('VirtualCluster controller', () => {
  describe('customize', () => {
    it('relates the Cell, the class, the VirtualClusters of the namespace, k3k kubeconfig, the Namespace and its ManifestWork by name: no sibling on the Cell, no Node', () => {
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
        { apiVersion: 'kubecell.io/v1alpha1', resource: 'virtualclusters', namespace: 'tenant-a' },
        {
          apiVersion: 'v1',
          resource: 'secrets',
          namespace: 'tenant-a',
          names: ['k3k-team-a-kubeconfig'],
        },
        { apiVersion: 'v1', resource: 'namespaces', names: ['tenant-a'] },
        {
          apiVersion: 'work.open-cluster-management.io/v1',
          resource: 'manifestworks',
          names: ['kubecell-vc-5d0c6a1e-8f3b-4c2a-9e7d-1a2b3c4d5e6f'],
        },
      ]);
    });

    it('relates the Cell until resolved, then its liveness record instead, the rest unchanged', () => {
      const plain = customizeVirtualCluster({ parent: virtualCluster() }, 'kubecell-system');
      const { vc } = resolvedWorld();
      const resolved = customizeVirtualCluster({ parent: vc }, 'kubecell-system');
      expect(resolved.relatedResources[0]).to.deep.equal({
        apiVersion: 'v1',
        resource: 'configmaps',
        namespace: 'kubecell-system',
        names: ['kubecell-cell-cell1'],
      });
      expect(resolved.relatedResources.slice(1)).to.deep.equal(plain.relatedResources.slice(1));
      expect(plain.relatedResources[0]).to.include({ resource: 'cells' });
    });

    it('keeps only the Cell of KUBECELL_CONTROLLER_NAMESPACE among the Cells of that name', () => {
      const elsewhere = cell({ uid: 'elsewhere-uid' });
      elsewhere.metadata.namespace = 'platform';
      const response = runSync(virtualCluster(), [elsewhere, ...acceptedRelated()]);
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

    it("counts the capacity the Cell reports committed, not the siblings' entitlements", () => {
      // A sibling on the same Cell, resolved with more GPUs than the Cell has left: the Cell has
      // not counted it yet, and the VirtualCluster does not either (design point 6).
      const onCell = virtualCluster({ name: 'b', namespace: 'tenant-b', uid: 'b-uid' });
      onCell.status = {
        resolved: { ...resolvedWorld().vc.status!.resolved!, hostNamespace: 'tenant-b' },
      };
      onCell.status.resolved!.class.entitlement.workloadHard = { 'requests.nvidia.com/gpu': '7' };
      const accepted = runSync(virtualCluster(), [...acceptedRelated(), onCell]);
      expect(statusOf(accepted).phase).to.equal('Provisioning');
      // Once the Cell counts it, the placement no longer fits: 8 − max(2, 7 committed) = 1 < 2.
      const counted = cell();
      const gpus = counted.status!.inventory!['nvidia.com/gpu']!;
      gpus.committed = '7';
      gpus.availableEstimate = '1';
      const full = runSync(virtualCluster(), [counted, smallClass(), hostNamespace()]);
      expect(statusOf(full).phase).to.equal('Pending');
      const gpu = statusOf(full).feasibilityChecks?.find(
        (check) => check.name === 'Capacity' && check.resource === 'nvidia.com/gpu',
      );
      expect(gpu).to.deep.include({
        result: 'Fail',
        reason: 'InsufficientCapacity',
        available: '1',
      });
    });

    it("names k3k's kubeconfig Secret as k3k does, long names included", () => {
      expect(k3kKubeconfigSecretName('team-a')).to.equal('k3k-team-a-kubeconfig');
      const long = k3kObjectName('a'.repeat(70), 'kubeconfig');
      expect(long).to.have.length(63);
      expect(long).to.match(/^k3k-a{53}-[0-9a-f]{5}$/);
    });
  });
});
