// Snapshot tests of the rendered children. Each snapshot is the YAML of every child the sync
// hook returns for a fixed request, committed under __snapshots__/. Any difference fails; run
// with UPDATE_SNAPSHOTS=1 to rewrite the files after an intended change, and review the diff.
import { expect } from 'chai';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
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
  node,
  NOW,
  syncRequest,
  virtualCluster,
  withStatus,
} from './testing.js';

const SNAPSHOT_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '__snapshots__');
const UPDATE = process.env['UPDATE_SNAPSHOTS'] === '1';

export function childrenYaml(children: readonly KubernetesObject[]): string {
  return children
    .map((child) => stringify(child, { lineWidth: 0, singleQuote: true }))
    .join('---\n');
}

function matchSnapshot(name: string, text: string): void {
  const file = path.join(SNAPSHOT_DIR, `${name}.yaml`);
  if (UPDATE || !existsSync(file)) {
    if (!UPDATE) {
      throw new Error(`snapshot ${file} is missing; run with UPDATE_SNAPSHOTS=1 to write it`);
    }
    mkdirSync(SNAPSHOT_DIR, { recursive: true });
    writeFileSync(file, text);
    return;
  }
  expect(text, `${file} differs; run with UPDATE_SNAPSHOTS=1 if the change is intended`).to.equal(
    readFileSync(file, 'utf8'),
  );
}

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
    matchSnapshot('team-a-small', childrenYaml(children));
  });

  it('a CPU-only class that bounds limits and Services', () => {
    const vc = virtualCluster();
    vc.spec.classRef.name = 'cpu-limits';
    const children = renderAll(vc, [
      cell(),
      limitsClass(),
      hostNamespace(),
      node('node-a', '10.0.12.7'),
    ]);
    matchSnapshot('team-a-cpu-limits', childrenYaml(children));
  });
});
