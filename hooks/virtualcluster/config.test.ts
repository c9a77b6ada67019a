// VirtualCluster settings read from the environment.
import { expect } from 'chai';
import { loadVirtualClusterConfig } from './config.js';

describe('VirtualCluster controller', () => {
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
