// The kubeconfig memo cannot exhaust memory (issue 15, finding 2). It used to keep up to 1,024
// entries keyed by the whole text: 40 distinct 4 MB kubeconfigs took the hook server from
// 193 MB to 712 MB RSS. Now a kubeconfig over 64 KiB is refused before it is decoded, parsed,
// hashed or remembered, and the memo is bounded by bytes and keyed by sha256.
//
// Asserted on the memo's own accounting (kubeconfigMemoStats); RSS is printed before and after,
// never asserted (it depends on the allocator and on what else the process did).
import { expect } from 'chai';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { VirtualClusterStatus } from '../../hooks/generated/types/index.js';
import type { KubernetesObject } from '../../hooks/metacontroller/protocol.js';
import { productApp } from '../../hooks/controllers/testing.js';
import {
  CHECK_MEMO_BYTES,
  checkKubeconfig,
  kubeconfigMemoStats,
  REWRITE_MEMO_BYTES,
  rewriteKubeconfigServer,
} from '../../hooks/virtualcluster/kubeconfig.js';
import { MAX_KUBECONFIG_BYTES } from '../../hooks/virtualcluster/kubeconfig-policy.js';
import {
  acceptedRelated,
  asObserved,
  K3K_KUBECONFIG,
  k3kKubeconfigSecret,
  NOW,
  syncRequest,
  virtualCluster,
  withStatus,
} from '../../hooks/virtualcluster/testing.js';
import { postJson, serve, type Served } from './support.js';

const MB = 1024 * 1024;
const NODE_PORT = 31234;
const URL = `https://10.0.12.7:${NODE_PORT}`;

/** k3k's kubeconfig with its CA data grown to about `bytes`, distinct for each `seed`. */
function bigKubeconfig(seed: number, bytes: number): string {
  // Base64 comes in groups of four characters.
  const fill = Math.floor((bytes - K3K_KUBECONFIG.length - 8) / 4) * 4;
  const data = `${seed.toString(36).padStart(8, '0')}${'Q'.repeat(fill)}`;
  return K3K_KUBECONFIG.replace(
    /certificate-authority-data: \S+/,
    `certificate-authority-data: ${data}`,
  );
}

// A full garbage collection before each reading, so that RSS and the heap show what is still
// referenced rather than what the collector has not got to yet (the test itself builds and drops
// hundreds of MB of strings).
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

function memory(): string {
  collectGarbage();
  const { rss, heapUsed } = process.memoryUsage();
  return `RSS ${(rss / MB).toFixed(0)} MB, heap ${(heapUsed / MB).toFixed(0)} MB`;
}

function expectWithinBounds(where: string): void {
  const { rewrite, check } = kubeconfigMemoStats();
  expect(rewrite.maxBytes, where).to.equal(REWRITE_MEMO_BYTES);
  expect(check.maxBytes, where).to.equal(CHECK_MEMO_BYTES);
  expect(rewrite.retainedBytes, `${where}: rewrite memo`).to.be.at.most(REWRITE_MEMO_BYTES);
  expect(check.retainedBytes, `${where}: check memo`).to.be.at.most(CHECK_MEMO_BYTES);
}

function report(label: string, memoryBefore: string): void {
  const { rewrite, check } = kubeconfigMemoStats();
  console.log(
    `      ${label}: ${memoryBefore} -> ${memory()}; rewrite memo ${rewrite.entries} entries, ` +
      `${(rewrite.retainedBytes / MB).toFixed(2)} of ${REWRITE_MEMO_BYTES / MB} MiB ` +
      `(${rewrite.evictions} evicted); check memo ${check.entries} entries, ` +
      `${(check.retainedBytes / MB).toFixed(2)} of ${CHECK_MEMO_BYTES / MB} MiB`,
  );
}

describe('kubeconfig memo: bounded by bytes', function () {
  this.timeout(300_000);
  let served: Served;

  before(async () => {
    const { app } = await productApp(NOW);
    served = await serve(app);
  });
  after(async () => {
    await served?.close();
  });

  it('40 distinct 4 MB kubeconfigs through the VirtualCluster sync over HTTP: refused, nothing remembered', async () => {
    const sync = `${served.base}/hooks/virtualcluster/sync`;
    const first = await postJson(sync, JSON.stringify(syncRequest(virtualCluster())));
    expect(first.status).to.equal(200);
    const { status, children } = JSON.parse(first.text) as {
      status: VirtualClusterStatus;
      children: KubernetesObject[];
    };
    const vc = withStatus(virtualCluster(), status);
    const observed = children.map((child) =>
      asObserved(child, child.kind === 'Service' ? { nodePort: NODE_PORT } : {}),
    );

    const memoryBefore = memory();
    const before = kubeconfigMemoStats();
    for (let i = 0; i < 40; i++) {
      const secret = k3kKubeconfigSecret(bigKubeconfig(i, 4 * MB));
      const body = JSON.stringify(syncRequest(vc, [...acceptedRelated(), secret], observed));
      const response = await postJson(sync, body);
      expect(response.status, `kubeconfig ${i}`).to.equal(200);
      const answer = JSON.parse(response.text) as {
        status: VirtualClusterStatus;
        children: KubernetesObject[];
      };
      expect(answer.children.map((child) => child.kind)).to.not.include('Secret');
      const published = answer.status.conditions?.find((c) => c.type === 'KubeconfigPublished');
      expect(published?.reason).to.equal('K3kKubeconfigRejected');
      expect(response.text.length, 'the answer does not echo the kubeconfig').to.be.below(20_000);
      expectWithinBounds(`after kubeconfig ${i}`);
    }
    const after = kubeconfigMemoStats();
    // Refused before the memo: neither parsed nor remembered.
    expect(after.rewrite.misses).to.equal(before.rewrite.misses);
    expect(after.rewrite.retainedBytes).to.equal(before.rewrite.retainedBytes);
    expect(after.check.retainedBytes).to.equal(before.check.retainedBytes);
    report('40 x 4 MB over HTTP', memoryBefore);
  });

  it('40 distinct 4 MB kubeconfigs given to the memo API directly: refused, nothing remembered', () => {
    const memoryBefore = memory();
    const before = kubeconfigMemoStats();
    for (let i = 0; i < 40; i++) {
      const source = bigKubeconfig(1000 + i, 4 * MB);
      const rewritten = rewriteKubeconfigServer(source, URL);
      expect(rewritten).to.deep.include({ ok: false, refusal: 'rejected' });
      expect(checkKubeconfig(source)).to.deep.include({ ok: false, refusal: 'rejected' });
    }
    const after = kubeconfigMemoStats();
    expect(after.rewrite.retainedBytes).to.equal(before.rewrite.retainedBytes);
    expect(after.check.retainedBytes).to.equal(before.check.retainedBytes);
    expect(after.rewrite.misses + after.check.misses).to.equal(
      before.rewrite.misses + before.check.misses,
    );
    report('40 x 4 MB to the memo API', memoryBefore);
  });

  it('300 distinct kubeconfigs at the 64 KiB limit: the memo evicts and stays under its bound', () => {
    const memoryBefore = memory();
    const size = MAX_KUBECONFIG_BYTES - 64;
    for (let i = 0; i < 300; i++) {
      const source = bigKubeconfig(5000 + i, size);
      expect(rewriteKubeconfigServer(source, URL).ok, `kubeconfig ${i}`).to.equal(true);
      expect(checkKubeconfig(source).ok).to.equal(true);
      expectWithinBounds(`after kubeconfig ${i}`);
    }
    const { rewrite } = kubeconfigMemoStats();
    // 300 texts of 64 KiB, about 38 MiB as accounted, cannot all fit in 16 MiB.
    expect(rewrite.evictions).to.be.greaterThan(0);
    expect(rewrite.entries).to.be.below(300);
    expect(rewrite.retainedBytes).to.be.greaterThan(REWRITE_MEMO_BYTES / 2);
    report('300 x 64 KiB to the memo API', memoryBefore);
  });
});
