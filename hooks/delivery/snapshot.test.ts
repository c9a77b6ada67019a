// Snapshot tests of the rendered ManifestWorks (cdk8s style): the YAML of every work the sync
// hook returns for a fixed request, committed under __snapshots__/. Any difference fails; run
// with UPDATE_SNAPSHOTS=1 to rewrite the files after an intended change, and review the diff.
import { expect } from 'chai';
import { syncDelivery } from './sync.js';
import {
  CONFIG,
  matchSnapshot,
  objectsYaml,
  placedVirtualCluster,
  remoteCell,
  syncRequest,
} from './testing.js';

describe('kubecell-delivery ManifestWork snapshots', () => {
  it('cell-remote with two ManifestWork Cells and the sample VirtualCluster', () => {
    const { vc } = placedVirtualCluster();
    const works = syncDelivery(
      syncRequest([remoteCell(), remoteCell({ name: 'remote-h100', profile: 'h100' }), vc]),
      CONFIG,
    ).attachments;
    expect(works.map((work) => work.metadata.name)).to.deep.equal([
      'kubecell-cell-agent',
      `kubecell-vc-${String(vc.metadata.uid)}`,
    ]);
    matchSnapshot('cell-remote', objectsYaml(works));
  });
});
