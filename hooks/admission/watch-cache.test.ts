/**
 * The webhook's watch cache (hooks/admission/watch-cache.ts, cached-lookup.ts) and the rule that
 * it may only admit (cross-object.ts, decision D38), against a fake apiserver over HTTP that
 * lists, watches, and answers the live reads, with @kubernetes/client-node as in production.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { captureLogger, type CapturedLogger } from '../server/testing.js';
import { startWatchCache, type WatchCache } from './cached-lookup.js';
import { createKubernetesLookup } from './lookup.js';
import type { AdmissionRequest } from './review.js';
import { admissionReview, sample, type Json } from './testing.js';
import { validateReview } from './webhook.js';

type Kind = 'Namespace' | 'Cell' | 'VirtualNodeClass' | 'VirtualCluster';

const API = '/apis/kubecell.io/v1alpha1';
const CONTROLLER_NAMESPACE = 'kubecell-system';
const COLLECTIONS: Record<Kind, string> = {
  Namespace: '/api/v1/namespaces',
  Cell: `${API}/namespaces/${CONTROLLER_NAMESPACE}/cells`,
  VirtualNodeClass: `${API}/virtualnodeclasses`,
  VirtualCluster: `${API}/virtualclusters`,
};
const KIND_OF_COLLECTION = new Map(
  Object.entries(COLLECTIONS).map(([kind, path]) => [path, kind as Kind]),
);

interface Meta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  resourceVersion?: string;
}

const metaOf = (object: Json) => object.metadata as Meta;
const keyOf = (object: Json) => `${metaOf(object).namespace ?? ''}/${metaOf(object).name}`;

/**
 * A fake apiserver: stored objects by kind, lists and watches of the four collections the cache
 * keeps, and the live reads of lookup.ts. Every request is recorded.
 */
class FakeApiserver {
  readonly requests: string[] = [];
  private readonly stored = new Map<Kind, Map<string, Json>>();
  private readonly watches = new Set<{ kind: Kind; res: ServerResponse }>();
  private readonly heldLists: Array<() => void> = [];
  private version = 1000;
  /** Lists wait for releaseLists() while true. */
  holdLists = false;
  readonly server = http.createServer((req, res) => this.serve(req, res));

  /** Stores `object`; an open watch of its kind sees it unless `announce` is false. */
  put(kind: Kind, object: Json, { announce = true } = {}): void {
    const copy = structuredClone(object);
    metaOf(copy).resourceVersion = String(++this.version);
    const objects = this.stored.get(kind) ?? new Map<string, Json>();
    const type = objects.has(keyOf(copy)) ? 'MODIFIED' : 'ADDED';
    objects.set(keyOf(copy), copy);
    this.stored.set(kind, objects);
    if (announce) this.send(kind, { type, object: copy });
  }

  remove(kind: Kind, name: string, namespace?: string, { announce = true } = {}): void {
    const objects = this.stored.get(kind);
    const object = objects?.get(`${namespace ?? ''}/${name}`);
    if (object === undefined) return;
    objects?.delete(keyOf(object));
    metaOf(object).resourceVersion = String(++this.version);
    if (announce) this.send(kind, { type: 'DELETED', object });
  }

  send(kind: Kind, event: Json): void {
    for (const watch of this.watches) {
      if (watch.kind === kind) watch.res.write(`${JSON.stringify(event)}\n`);
    }
  }

  /** Cuts every open watch's connection. */
  breakWatches(): void {
    for (const watch of this.watches) watch.res.socket?.destroy();
  }

  openWatches(): number {
    return this.watches.size;
  }

  releaseLists(): void {
    this.holdLists = false;
    for (const release of this.heldLists.splice(0)) release();
  }

  /** The requests the live lookups made: anything but the cache's lists and watches. */
  liveReads(): string[] {
    return this.requests.filter((request) => {
      const [path = '', query = ''] = request.split('?');
      return !KIND_OF_COLLECTION.has(path) || query.includes('labelSelector');
    });
  }

  private items(kind: Kind, keep: (object: Json) => boolean = () => true): Json {
    const items = [...(this.stored.get(kind)?.values() ?? [])].filter(keep);
    return { metadata: { resourceVersion: String(this.version) }, items };
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    this.requests.push(`${url.pathname}${url.search === '' ? '' : decodeURIComponent(url.search)}`);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const kind = KIND_OF_COLLECTION.get(url.pathname);
    if (kind !== undefined && url.searchParams.get('watch') === 'true') {
      const watch = { kind, res };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      this.watches.add(watch);
      res.on('close', () => this.watches.delete(watch));
      return;
    }
    if (kind !== undefined) {
      const [key, value] = (url.searchParams.get('labelSelector') ?? '=').split('=');
      const answer = () =>
        json(
          200,
          this.items(kind, (o) => key === '' || metaOf(o).labels?.[key as string] === value),
        );
      if (this.holdLists && !url.searchParams.has('labelSelector')) this.heldLists.push(answer);
      else answer();
      return;
    }
    const found = this.read(url.pathname);
    if (found === undefined) json(404, { kind: 'Status', code: 404, message: 'not found' });
    else json(200, found);
  }

  /** The live reads: one object by name, or the VirtualClusters of a namespace. */
  private read(path: string): Json | undefined {
    const inNamespace = new RegExp(`^${API}/namespaces/([^/]+)/virtualclusters$`).exec(path);
    if (inNamespace) {
      return this.items('VirtualCluster', (o) => metaOf(o).namespace === inNamespace[1]);
    }
    const byName: Array<[Kind, RegExp, string?]> = [
      ['Namespace', /^\/api\/v1\/namespaces\/([^/]+)$/],
      ['Cell', new RegExp(`^${COLLECTIONS.Cell}/([^/]+)$`), CONTROLLER_NAMESPACE],
      ['VirtualNodeClass', new RegExp(`^${COLLECTIONS.VirtualNodeClass}/([^/]+)$`)],
    ];
    for (const [kind, pattern, namespace] of byName) {
      const name = pattern.exec(path)?.[1];
      if (name !== undefined) return this.stored.get(kind)?.get(`${namespace ?? ''}/${name}`);
    }
    return undefined;
  }
}

function namespace(name: string, labels: Record<string, string> = {}): Json {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels } },
  };
}

const HOST = { 'kubecell.io/host-namespace': 'true' };

/** samples/51-virtualcluster-full.yaml (on cell1 with class small) as `name` in `namespaceName`. */
function virtualCluster(name: string, namespaceName = 'tenant-a'): Json {
  const object = sample('51-virtualcluster-full.yaml');
  Object.assign(object.metadata as Json, { name, namespace: namespaceName });
  return object;
}

async function until(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the admission webhook watch cache (hooks/admission/watch-cache.ts, cached-lookup.ts)', function () {
  this.timeout(20_000);
  let fake: FakeApiserver;
  let kubeConfig: KubeConfig;
  let cache: WatchCache | undefined;
  let logs: CapturedLogger;

  beforeEach(async () => {
    fake = new FakeApiserver();
    fake.put('Namespace', namespace('tenant-a', HOST));
    fake.put('Namespace', namespace('plain'));
    fake.put('Namespace', namespace(CONTROLLER_NAMESPACE));
    fake.put('Cell', sample('11-cell-full.yaml'));
    fake.put('VirtualNodeClass', sample('21-virtualnodeclass-full.yaml'));
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [
        {
          name: 'c',
          server: `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`,
          // client-node refuses plain HTTP unless told to (a test apiserver has no TLS).
          skipTLSVerify: true,
        },
      ],
      users: [{ name: 'u', token: 'tok' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    logs = captureLogger();
  });

  afterEach(async () => {
    cache?.stop();
    cache = undefined;
    fake.server.closeAllConnections();
    await new Promise((resolve) => fake.server.close(resolve));
  });

  function startCache(): WatchCache {
    cache = startWatchCache({
      kubeConfig,
      logger: logs.logger,
      controllerNamespace: CONTROLLER_NAMESPACE,
      retryFirstMs: 50,
    });
    return cache;
  }

  async function syncedCache(): Promise<WatchCache> {
    const started = startCache();
    await until('the cache is synced', () => started.synced());
    fake.requests.length = 0;
    return started;
  }

  /** The validating webhook's answer to a CREATE, with the live lookups and the cache. */
  async function create(object: Json) {
    const review = admissionReview('CREATE', object) as { request: AdmissionRequest };
    return validateReview(review.request, {
      lookup: createKubernetesLookup(kubeConfig),
      cache: cache?.lookup,
      controllerNamespace: CONTROLLER_NAMESPACE,
    });
  }

  it('admits from the cache once synced, with no live read', async () => {
    await syncedCache();
    const answer = await create(virtualCluster('team-a'));
    expect(answer.allowed, answer.status?.message).to.equal(true);
    expect(fake.liveReads()).to.deep.equal([]);
    expect(fake.requests).to.deep.equal([]);
  });

  it('keeps only what the rules read of each object', async () => {
    fake.put('VirtualCluster', {
      ...virtualCluster('team-a'),
      status: { phase: 'Ready', resolved: { cell: { name: 'cell1', uid: 'u1' } } },
    });
    const { lookup } = await syncedCache();
    const cell = sample('11-cell-full.yaml') as { spec: Json };
    expect(await lookup.getCell(CONTROLLER_NAMESPACE, 'cell1')).to.deep.equal({
      metadata: { name: 'cell1', namespace: CONTROLLER_NAMESPACE },
      spec: { namespaceSelector: cell.spec.namespaceSelector },
    });
    expect(await lookup.listVirtualClusters({ namespace: 'tenant-a' })).to.deep.equal([
      {
        metadata: { name: 'team-a', namespace: 'tenant-a' },
        status: { resolved: { cell: { name: 'cell1', uid: 'u1' } } },
      },
    ]);
    expect(await lookup.namespaceLabels('tenant-a')).to.deep.equal({
      'kubernetes.io/metadata.name': 'tenant-a',
      ...HOST,
    });
  });

  it('confirms a refusal with live reads, and answers with their verdict', async () => {
    await syncedCache();
    const refused = await create(virtualCluster('team-p', 'plain'));
    expect(refused.allowed).to.equal(false);
    expect(refused.status?.message).to.include(
      'namespace "plain" is not a KubeCell host namespace',
    );
    expect(fake.liveReads()).to.include('/api/v1/namespaces/plain');
  });

  it('lets the live reads overrule a stale cache that would refuse', async () => {
    fake.put('VirtualCluster', virtualCluster('team-old'));
    const { lookup } = await syncedCache();
    // Deleted, and the watch has not told the cache yet.
    fake.remove('VirtualCluster', 'team-old', 'tenant-a', { announce: false });
    expect(await lookup.listVirtualClusters({ namespace: 'tenant-a' })).to.have.length(1);
    const answer = await create(virtualCluster('team-a'));
    expect(answer.allowed, answer.status?.message).to.equal(true);
    expect(fake.liveReads()).to.include(`${API}/namespaces/tenant-a/virtualclusters`);
  });

  it('reads live until the cache is synced', async () => {
    fake.holdLists = true;
    const started = startCache();
    const answer = await create(virtualCluster('team-a'));
    expect(answer.allowed, answer.status?.message).to.equal(true);
    expect(started.synced()).to.equal(false);
    expect(fake.liveReads()).to.have.members([
      '/api/v1/namespaces/tenant-a',
      `${API}/namespaces/tenant-a/virtualclusters`,
      `${COLLECTIONS.Cell}/cell1`,
      `${COLLECTIONS.VirtualNodeClass}/small`,
    ]);
    fake.releaseLists();
    await until('the cache is synced', () => started.synced());
  });

  it('follows the watch: an object added, changed or deleted is seen, and a deleted one is gone', async () => {
    const { lookup } = await syncedCache();
    await until('every watch is open', () => fake.openWatches() === 4);
    const listed = async () => (await lookup.listVirtualClusters({ namespace: 'tenant-a' })).length;
    fake.put('VirtualCluster', virtualCluster('team-a'));
    await until('team-a is cached', async () => (await listed()) === 1);
    expect((await create(virtualCluster('team-b'))).allowed).to.equal(false);

    fake.put('Namespace', namespace('plain', HOST));
    await until(
      'plain is a host namespace',
      async () =>
        (await lookup.namespaceLabels('plain'))?.['kubecell.io/host-namespace'] === 'true',
    );

    fake.remove('VirtualCluster', 'team-a', 'tenant-a');
    await until('team-a is gone', async () => (await listed()) === 0);
    fake.requests.length = 0;
    const answer = await create(virtualCluster('team-b'));
    expect(answer.allowed, answer.status?.message).to.equal(true);
    expect(fake.liveReads()).to.deep.equal([]);
  });

  it('recovers from a broken watch: live reads meanwhile, then a new list with what changed', async () => {
    const started = await syncedCache();
    fake.holdLists = true;
    fake.breakWatches();
    await until('the cache is no longer synced', () => !started.synced());
    // Created while the watches are down: only a live read can see it.
    fake.put('VirtualCluster', virtualCluster('team-a'));
    const refused = await create(virtualCluster('team-b'));
    expect(refused.status?.message).to.include('already hosts VirtualCluster "team-a"');
    fake.releaseLists();
    await until('the cache is synced again', () => started.synced());
    expect(await started.lookup.listVirtualClusters({ namespace: 'tenant-a' })).to.have.length(1);
    const entries = logs.entries();
    const failed = entries.filter((e) => e.msg === 'admission webhook cache watch failed');
    expect(failed.map((e) => e.collection)).to.have.members([
      'Namespaces',
      `Cells in namespace ${CONTROLLER_NAMESPACE}`,
      'VirtualNodeClasses',
      'VirtualClusters',
    ]);
    expect(failed.every((e) => e.level === 'warn' && e.failures === 1)).to.equal(true);
    const resynced = entries.filter(
      (e) => e.msg === 'admission webhook cache synced' && e.afterFailures === 1,
    );
    expect(resynced).to.have.length(4);
  });

  it('lists again after an ERROR event (410 Gone: the resourceVersion is too old)', async () => {
    const started = await syncedCache();
    fake.send('VirtualCluster', {
      type: 'ERROR',
      object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' },
    });
    await until('VirtualClusters are listed again', () =>
      fake.requests.includes(COLLECTIONS.VirtualCluster),
    );
    await until('the cache is synced again', () => started.synced());
    const failed = logs.entries().find((e) => e.msg === 'admission webhook cache watch failed');
    expect(failed?.error).to.equal('the apiserver ended the watch: too old resource version');
  });

  it("reads live a Cell update's VirtualClusters, whatever the cache holds", async () => {
    await syncedCache();
    const cell = sample('11-cell-full.yaml');
    const changed = structuredClone(cell) as { spec: { managedClusterRef: { name: string } } };
    changed.spec.managedClusterRef.name = 'elsewhere';
    const review = admissionReview('UPDATE', changed as unknown as Json, cell) as {
      request: AdmissionRequest;
    };
    await validateReview(review.request, {
      lookup: createKubernetesLookup(kubeConfig),
      cache: cache?.lookup,
      controllerNamespace: CONTROLLER_NAMESPACE,
    });
    expect(fake.liveReads()).to.deep.equal([
      `${COLLECTIONS.VirtualCluster}?labelSelector=kubecell.io/cell=cell1`,
    ]);
  });
});
