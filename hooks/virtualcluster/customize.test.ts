// VirtualCluster customize: the related objects, from the spec alone.
import { expect } from 'chai';
import { loadVirtualClusterConfig } from './config.js';
import { customizeVirtualCluster } from './customize.js';
import { k3kKubeconfigSecretName, k3kObjectName } from './names.js';
import { syncVirtualCluster } from './sync.js';
import {
  acceptedRelated,
  cell,
  NOW,
  resolvedWorld,
  statusOf,
  runSync,
  syncRequest,
  virtualCluster,
} from './testing.js';

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

    it('counts the VirtualClusters on the same Cell or namespace, not the others', () => {
      const onCell = virtualCluster({ name: 'b', namespace: 'tenant-b', uid: 'b-uid' });
      onCell.status = {
        resolved: { ...resolvedWorld().vc.status!.resolved!, hostNamespace: 'tenant-b' },
      };
      onCell.status.resolved!.class.entitlement.workloadHard = { 'requests.nvidia.com/gpu': '7' };
      const elsewhere = structuredClone(onCell);
      elsewhere.metadata = { ...elsewhere.metadata, name: 'c', uid: 'c-uid', labels: {} };
      elsewhere.status!.resolved!.cell.name = 'cell2';
      const accepted = runSync(virtualCluster(), [...acceptedRelated(), elsewhere]);
      expect(statusOf(accepted).phase).to.equal('Provisioning');
      const full = runSync(virtualCluster(), [...acceptedRelated(), onCell]);
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
});
