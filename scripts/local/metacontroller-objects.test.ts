import { expect } from 'chai';
import path from 'node:path';
import { repoRoot } from '../../test/cluster/paths.js';
import { readMetacontrollerObjects, rewriteHookUrls } from './metacontroller-objects.js';

const BASE = 'http://127.0.0.1:40123';

function controller(webhook: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: { name: 'c' },
    spec: { hooks: { sync: { version: 'v2', webhook } } },
  };
}

function syncUrl(object: unknown): unknown {
  return (object as { spec: { hooks: { sync: { webhook: { url?: unknown } } } } }).spec.hooks.sync
    .webhook.url;
}

describe('local-up: rewriting the hooks of metacontroller/', function () {
  for (const url of [
    'http://kubecell-hooks.kubecell-system/hooks/cell/sync',
    'http://kubecell-hooks.kubecell-system.svc/hooks/cell/sync',
    'http://kubecell-hooks.kubecell-system.svc.cluster.local:80/hooks/cell/sync',
  ]) {
    it(`points ${url} at the local hook server`, function () {
      const { objects, rewritten, foreign } = rewriteHookUrls([controller({ url })], BASE);
      expect(syncUrl(objects[0])).to.equal(`${BASE}/hooks/cell/sync`);
      expect(rewritten).to.have.length(1);
      expect(foreign).to.deep.equal([]);
    });
  }

  it('turns a Service reference to kubecell-hooks into a URL', function () {
    const { objects } = rewriteHookUrls(
      [
        controller({
          service: { name: 'kubecell-hooks', namespace: 'kubecell-system' },
          path: '/hooks/x',
        }),
      ],
      `${BASE}/`,
    );
    expect((objects[0] as { spec: { hooks: { sync: unknown } } }).spec.hooks.sync).to.deep.equal({
      version: 'v2',
      webhook: { url: `${BASE}/hooks/x` },
    });
  });

  it('leaves other hooks alone, reports them, and does not modify its input', function () {
    const input = [controller({ url: 'http://kubecell-hooks-other.example/hooks/x' })];
    const before = structuredClone(input);
    const { objects, rewritten, foreign } = rewriteHookUrls(input, BASE);
    expect(syncUrl(objects[0])).to.equal('http://kubecell-hooks-other.example/hooks/x');
    expect(rewritten).to.deep.equal([]);
    expect(foreign).to.have.length(1);
    expect(input).to.deep.equal(before);
  });

  it('finds a KubeCell hook in every object of metacontroller/ and nothing else', function () {
    const objects = readMetacontrollerObjects(path.join(repoRoot, 'metacontroller'));
    expect(objects.length).to.be.greaterThan(0);
    const { rewritten, foreign } = rewriteHookUrls(objects, BASE);
    expect(foreign).to.deep.equal([]);
    expect(rewritten.length).to.be.at.least(objects.length);
  });
});
