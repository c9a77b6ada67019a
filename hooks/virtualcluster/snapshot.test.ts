// Snapshot tests of the rendered children. Each snapshot is the YAML of every child the sync
// hook returns for a fixed request, committed under __snapshots__/. Any difference fails; run
// with UPDATE_SNAPSHOTS=1 to rewrite the files after an intended change, and review the diff.
import { objectsYaml, snapshotsBeside } from '../../test/support/snapshots.js';
import { expect } from 'chai';
import type { VirtualCluster } from '../generated/types/index.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { syncVirtualCluster } from './sync.js';
import {
  acceptedRelated,
  asObserved,
  cell,
  CONFIG,
  hostNamespace,
  k3kKubeconfigSecret,
  limitsClass,
  NOW,
  syncRequest,
  virtualCluster,
  withStatus,
} from './testing.js';

const matchSnapshot = snapshotsBeside(import.meta.url);

/** Resolve, let the children appear with an allocated port, then render with k3k's kubeconfig. */
function renderAll(vc: VirtualCluster, related: KubernetesObject[]): KubernetesObject[] {
  const first = syncVirtualCluster(syncRequest(vc, related), CONFIG, NOW);
  const observed = first.children.map((child) =>
    asObserved(child, child.kind === 'Service' ? { nodePort: 31234 } : {}),
  );
  const second = syncVirtualCluster(
    syncRequest(withStatus(vc, first.status), [...related, k3kKubeconfigSecret()], observed),
    CONFIG,
    NOW,
  );
  return second.children;
}

describe('VirtualCluster children snapshots', () => {
  it('the sample VirtualCluster (class small on cell1)', () => {
    const children = renderAll(virtualCluster(), acceptedRelated());
    expect(children.map((child) => child.kind)).to.deep.equal([
      'Cluster',
      'ResourceQuota',
      'LimitRange',
      'Service',
      'Secret',
    ]);
    matchSnapshot('team-a-small', objectsYaml(children));
  });

  it('a CPU-only class that bounds limits and Services', () => {
    const vc = virtualCluster();
    vc.spec.classRef.name = 'cpu-limits';
    const children = renderAll(vc, [
      cell({ addresses: [{ node: 'node-a', address: '10.0.12.7' }] }),
      limitsClass(),
      hostNamespace(),
    ]);
    matchSnapshot('team-a-cpu-limits', objectsYaml(children));
  });
});
