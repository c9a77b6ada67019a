// The whole install, as a user runs it, against the real apiserver of a local control plane:
// `kubectl apply -k manifests/`, `kubectl apply -k metacontroller/` and each GPUCellPool
// component (`kubectl apply -k metacontroller/gpucellpool/<provisioner>/`) pass a server-side
// dry-run; the hook server's Pod passes the "restricted" Pod Security Standard that
// kubecell-system enforces; the documented kustomize patch moves the ClusterRoleBinding to
// another Metacontroller ServiceAccount; and Metacontroller's own install (step 0,
// manifests/metacontroller-install/) passes the same dry run. No kubelet runs here, so no Pod
// starts; nothing is persisted (the webhook configurations would refuse the other tests' objects).
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { startControlPlane, type ControlPlane } from '../../harness/cluster/control-plane.js';
import { installKubeCellApi, kubectlOk } from '../../harness/cluster/kubecell.js';
import { CLUSTER_SETUP_TIMEOUT_MS } from '../cluster/shared-cluster.js';
import { isJsonObject } from '../../hooks/json/json.js';
import { GPUCELLPOOL_COMPONENTS, findObject, repoRoot, type Json } from './support.js';

function documents(text: string): Json[] {
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as unknown)
    .filter(isJsonObject);
}

/** What `kubectl kustomize` builds from an overlay of manifests/ with `fields` added. */
async function buildOverlay(cluster: ControlPlane, fields: Json): Promise<Json[]> {
  const overlay = mkdtempSync(path.join(os.tmpdir(), 'kubecell-overlay-'));
  try {
    writeFileSync(
      path.join(overlay, 'kustomization.yaml'),
      stringify({
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        resources: [path.relative(overlay, path.join(repoRoot, 'manifests'))],
        ...fields,
      }),
    );
    return documents(await kubectlOk(cluster, ['kustomize', overlay]));
  } finally {
    rmSync(overlay, { recursive: true, force: true });
  }
}

describe('install: kubectl apply -k, server-side dry-run', function () {
  let cluster: ControlPlane;

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    // A control plane of its own, as a platform has before installing KubeCell: the shared one
    // runs KubeCell already (its webhook configurations point at a URL, which a dry-run apply of
    // the Service-based ones would merge into an invalid object).
    cluster = await startControlPlane();
    // The CRDs of k3k, OCM and Metacontroller that a real platform has, and kubecell-system.
    await installKubeCellApi(cluster);
  });

  after(async function () {
    this.timeout(60_000);
    await cluster?.stop();
  });

  for (const dir of ['manifests', 'metacontroller', ...GPUCELLPOOL_COMPONENTS]) {
    it(`kubectl apply -k ${dir}/ --dry-run=server`, async function () {
      this.timeout(60_000);
      const result = await cluster.kubectl([
        'apply',
        '-k',
        path.join(repoRoot, dir),
        '--dry-run=server',
      ]);
      expect(result.code, `${result.stderr}${result.stdout}`).to.equal(0);
      // The shared cluster created kubecell-system and the CRDs imperatively; kubectl apply says
      // so. Any other warning (a deprecated API, a Pod Security violation) fails.
      const warnings = result.stderr
        .split('\n')
        .filter((line) => line !== '')
        .filter((line) => !line.includes('missing the kubectl.kubernetes.io/last-applied'));
      expect(warnings, 'no warnings').to.deep.equal([]);
      const built = documents(await kubectlOk(cluster, ['kustomize', path.join(repoRoot, dir)]));
      // One line per object: "<kind>.<group>/<name> created|configured|unchanged (server dry run)"
      const lines = result.stdout.trim().split('\n');
      expect(lines).to.have.length(built.length);
      for (const line of lines) expect(line).to.match(/\(server dry run\)$/);
    });
  }

  it('kubectl apply -k manifests/metacontroller-install/ --dry-run=server (step 0)', async function () {
    this.timeout(60_000);
    const dir = path.join(repoRoot, 'manifests', 'metacontroller-install');
    // A server-side dry run creates nothing, so the ServiceAccount and StatefulSet would find no
    // namespace: the namespace exists first, as it does once the apply has begun.
    await kubectlOk(cluster, ['create', 'namespace', 'metacontroller']);
    const result = await cluster.kubectl(['apply', '--server-side', '-k', dir, '--dry-run=server']);
    expect(result.code, `${result.stderr}${result.stdout}`).to.equal(0);
    // Upstream's own kustomization (vendored unmodified) still uses commonLabels, which kubectl
    // warns about; nothing else may warn.
    const warnings = result.stderr
      .split('\n')
      .filter((line) => line !== '' && !line.includes("'commonLabels' is deprecated"));
    expect(warnings, 'no warnings').to.deep.equal([]);
    const built = documents(await kubectlOk(cluster, ['kustomize', dir]));
    const lines = result.stdout.trim().split('\n');
    expect(lines).to.have.length(built.length);
    for (const line of lines) expect(line).to.match(/\(server dry run\)$/);
  });

  it('the hook server Pod is admitted under Pod Security "restricted"', async function () {
    this.timeout(60_000);
    const built = documents(
      await kubectlOk(cluster, ['kustomize', path.join(repoRoot, 'manifests')]),
    );
    const namespace = findObject(built, 'Namespace', 'kubecell-system');
    const labels = (namespace.metadata as Json).labels as Record<string, string>;
    expect(labels['pod-security.kubernetes.io/enforce']).to.equal('restricted');

    // A namespace of this test's own with the same labels, and the Deployment's Pod in it.
    const name = `kubecell-psa-${randomBytes(3).toString('hex')}`;
    await kubectlOk(cluster, ['create', 'namespace', name]);
    try {
      await kubectlOk(cluster, [
        'label',
        'namespace',
        name,
        ...Object.entries(labels)
          .filter(([key]) => key.startsWith('pod-security.kubernetes.io/'))
          .map(([key, value]) => `${key}=${value}`),
      ]);
      await kubectlOk(cluster, ['create', 'serviceaccount', 'kubecell-hooks', '-n', name]);
      const template = (findObject(built, 'Deployment', 'kubecell-hooks').spec as Json)
        .template as Json;
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { ...(template.metadata as Json), name: 'kubecell-hooks', namespace: name },
        spec: template.spec,
      };
      const result = await cluster.kubectl(
        ['create', '--dry-run=server', '-f', '-', '-o', 'name'],
        { input: JSON.stringify(pod) },
      );
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr, 'no Pod Security warning').to.equal('');

      // The control: the same Pod without its container securityContext is refused, so the
      // namespace does enforce the standard.
      const spec = structuredClone(template.spec) as Json;
      for (const container of spec.containers as Json[]) delete container.securityContext;
      const refused = await cluster.kubectl(['create', '--dry-run=server', '-f', '-'], {
        input: JSON.stringify({ ...pod, spec }),
      });
      expect(refused.code).to.not.equal(0);
      expect(refused.stderr).to.include('violates PodSecurity "restricted');
    } finally {
      await cluster.kubectl(['delete', 'namespace', name, '--wait=false']);
    }
  });

  it('the documented patch binds the role to another Metacontroller ServiceAccount', async function () {
    this.timeout(60_000);
    const built = await buildOverlay(cluster, {
      patches: [
        {
          target: { kind: 'ClusterRoleBinding', name: 'kubecell-metacontroller' },
          patch: stringify([
            {
              op: 'replace',
              path: '/subjects/0',
              value: {
                kind: 'ServiceAccount',
                name: 'metacontroller',
                namespace: 'platform-system',
              },
            },
          ]),
        },
      ],
    });
    const binding = findObject(built, 'ClusterRoleBinding', 'kubecell-metacontroller');
    expect(binding.subjects).to.deep.equal([
      { kind: 'ServiceAccount', name: 'metacontroller', namespace: 'platform-system' },
    ]);
  });

  it("an overlay's `images` sets the hook server's image and KUBECELL_AGENT_IMAGE together", async function () {
    this.timeout(60_000);
    const builds = {
      base: documents(await kubectlOk(cluster, ['kustomize', path.join(repoRoot, 'manifests')])),
      overlay: await buildOverlay(cluster, {
        images: [
          {
            name: 'kubecell-hooks',
            newName: 'registry.example.com/kubecell/kubecell-hooks',
            newTag: '9.9.9',
          },
        ],
      }),
    };
    const images = Object.fromEntries(
      Object.entries(builds).map(([name, built]) => {
        const deployment = findObject(built, 'Deployment', 'kubecell-hooks') as {
          spec: { template: { spec: { containers: Array<Json & { env?: Json[] }> } } };
        };
        const container = deployment.spec.template.spec.containers.find(
          (c) => c['name'] === 'hook-server',
        );
        const agent = container?.env?.find((e) => e['name'] === 'KUBECELL_AGENT_IMAGE');
        return [name, { container: container?.['image'], agent: agent?.['value'] }];
      }),
    );
    expect(images).to.deep.equal({
      base: { container: 'kubecell-hooks:0.1.0', agent: 'kubecell-hooks:0.1.0' },
      overlay: {
        container: 'registry.example.com/kubecell/kubecell-hooks:9.9.9',
        agent: 'registry.example.com/kubecell/kubecell-hooks:9.9.9',
      },
    });
  });
});
