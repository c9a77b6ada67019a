import { expect } from 'chai';
import path from 'node:path';
import { repoRoot } from './paths.js';
import {
  GPUCELLPOOL_COMPONENTS,
  readMetacontrollerInstall,
  readMetacontrollerObjects,
  rewriteHookUrls,
} from './metacontroller-objects.js';

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

  const metacontrollerDir = path.join(repoRoot, 'metacontroller');
  const names = (objects: unknown[]) =>
    objects.map((object) => {
      const { kind, metadata } = object as { kind: string; metadata: { name: string } };
      return `${kind}/${metadata.name}`;
    });
  const controllers = (objects: unknown[]) =>
    objects.filter((object) => /Controller$/.test((object as { kind: string }).kind));

  it('finds a KubeCell hook in every controller of metacontroller/ and nothing else', function () {
    const objects = readMetacontrollerInstall(metacontrollerDir, ['kubevirt', 'cluster-api']);
    expect(controllers(objects).length).to.be.greaterThan(0);
    const { rewritten, foreign } = rewriteHookUrls(objects, BASE);
    expect(foreign).to.deep.equal([]);
    expect(rewritten.length).to.be.at.least(controllers(objects).length);
  });

  it('reads the base alone: its controllers need neither KubeVirt nor Cluster API', function () {
    const base = readMetacontrollerObjects(metacontrollerDir);
    expect(base).to.deep.equal(readMetacontrollerInstall(metacontrollerDir));
    expect(names(base)).to.include('CompositeController/kubecell-cell');
    expect(names(base).filter((name) => name.includes('gpucellpool'))).to.deep.equal([]);
    expect(JSON.stringify(base)).to.not.match(/kubevirt\.io|cluster\.x-k8s\.io/);
  });

  it('reads the base and the chosen GPUCellPool components, each with its role', function () {
    const base = names(readMetacontrollerObjects(metacontrollerDir));
    for (const component of Object.keys(GPUCELLPOOL_COMPONENTS) as Array<
      keyof typeof GPUCELLPOOL_COMPONENTS
    >) {
      const install = names(readMetacontrollerInstall(metacontrollerDir, [component]));
      expect(install.slice(0, base.length)).to.deep.equal(base);
      expect(install.slice(base.length)).to.deep.equal([
        `CompositeController/kubecell-gpucellpool-${component}`,
        `ClusterRole/kubecell-metacontroller-gpucellpool-${component}`,
        `ClusterRoleBinding/kubecell-metacontroller-gpucellpool-${component}`,
      ]);
      // The component folder read on its own gives the same objects.
      expect(
        names(readMetacontrollerObjects(path.join(metacontrollerDir, 'gpucellpool', component))),
      ).to.deep.equal(install.slice(base.length));
    }
    const both = names(readMetacontrollerInstall(metacontrollerDir, ['kubevirt', 'cluster-api']));
    expect(both).to.have.length(base.length + 6);
    expect(() =>
      readMetacontrollerInstall(metacontrollerDir, ['openstack' as 'kubevirt']),
    ).to.throw('unknown GPUCellPool component openstack; components are kubevirt, cluster-api');
  });
});
