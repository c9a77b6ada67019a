// KubeCell's API on a real apiserver: the generated CRDs are accepted, every shipped manifest
// passes a server-side dry-run, `kubectl explain` shows the schema's descriptions, and the CEL
// rules the schemas carry are enforced by the apiserver itself.
import { expect } from 'chai';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { GPUCellPool } from '../../hooks/generated/types/index.js';
import type { TemplateObject } from '../../hooks/gpucellpool/objects.js';
import { renderClone } from '../../hooks/gpucellpool/clones.js';
import { groupOf, pluralOf } from '../../hooks/gpucellpool/names.js';
import type { KubernetesObject } from '../../hooks/metacontroller/protocol.js';
import {
  CLUSTER_API_STAND_IN_KINDS,
  ensureClusterAPIStandInCrds,
} from '../../harness/simulate/cluster-api-crds.js';
import { KubeClient } from '../../harness/simulate/kube-client.js';
import type { ControlPlane } from '../../harness/cluster/control-plane.js';
import { installKubeCellApi, kubectlOk } from '../../harness/cluster/kubecell.js';
import { repoRoot } from '../../harness/cluster/paths.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getCluster } from './shared-cluster.js';
import { readUpstreamInputs } from '../../harness/cluster/upstream-inputs.js';

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

type Json = Record<string, unknown>;

/** metadata.name of every CRD pinned in upstream-inputs.json (installed with the upstream set). */
const pinnedCrds = new Set(readUpstreamInputs().flatMap((input) => input.crds ?? []));

/**
 * The clone a GPUCellPool of samples/ makes of a Cluster API template of samples/ (a
 * KubeadmConfigTemplate's KubeadmConfig, a KubevirtMachineTemplate's KubevirtMachine), as the
 * pool renders it; undefined when no sample pool references `template`.
 */
function sampleClone(template: Json): KubernetesObject | undefined {
  const metadata = template['metadata'] as { name?: string; namespace?: string } | undefined;
  for (const file of yamlFilesUnder('samples')) {
    for (const document of parseAllDocuments(readFileSync(path.join(repoRoot, file), 'utf8'))) {
      const pool = document.toJS() as GPUCellPool | null;
      if (pool?.kind !== 'GPUCellPool' || pool.spec.namespace !== metadata?.namespace) continue;
      const capi = pool.spec.provisioner.clusterAPI;
      const ref = [capi?.bootstrapConfigTemplateRef, capi?.infrastructureTemplateRef].find(
        (candidate) =>
          candidate?.apiVersion === template['apiVersion'] &&
          candidate?.kind === template['kind'] &&
          candidate?.name === metadata.name,
      );
      if (ref === undefined) continue;
      const withUid = {
        ...pool,
        metadata: { ...pool.metadata, uid: '00000000-0000-4000-8000-00000000c10e' },
      };
      const machine = `${pool.metadata.name}-0-0`;
      return renderClone(
        withUid,
        { cell: `${pool.metadata.name}-0`, machine, uuid: '', secret: `${machine}-user-data` },
        ref,
        template as unknown as TemplateObject,
      );
    }
  }
  return undefined;
}

/** The CRD name (`<plural>.<group>`) of a clone's kind, as Cluster API providers name it. */
function crdOf(clone: KubernetesObject): string {
  return `${pluralOf(clone.kind)}.${groupOf(clone.apiVersion)}`;
}

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
    // cert-manager's and the Prometheus Operator's CRDs are not among ../shared/upstream-crds, so
    // the optional cert-manager overlay and monitoring component cannot be dry-run here (their
    // structure is checked in test/install/); everything else must be. The Cluster API templates
    // of samples/ dry-run against their real CRDs, and so do the clones a sample pool makes of
    // them where a real CRD of the clone's kind is pinned.
    const withoutCrds = (file: string) =>
      !file.includes('cert-manager') && !file.startsWith('manifests/monitoring/');
    const files = [
      ...yamlFilesUnder('samples'),
      ...yamlFilesUnder('manifests'),
      ...yamlFilesUnder('metacontroller'),
    ].filter(withoutCrds);
    const dryRun = async (input: string) =>
      cluster.kubectl(
        ['apply', '--dry-run=server', '--server-side', '--field-manager=kubecell-tests', '-f', '-'],
        { input },
      );
    for (const file of files) {
      const documents = parseAllDocuments(readFileSync(path.join(repoRoot, file), 'utf8'))
        .map((document) => document.toJS() as Json | Json[] | null)
        // A kustomize JSON patch (a list of operations, e.g. manifests/metacontroller-install/
        // args.yaml) or transformer configuration (manifests/image-fields.yaml, no kind) is no
        // object to dry-run: test/install/apply.test.ts checks what its kustomization renders.
        .filter(
          (object): object is Json =>
            object !== null && !Array.isArray(object) && typeof object['kind'] === 'string',
        );
      if (documents.length > 0) {
        it(file, async function () {
          this.timeout(30_000);
          // Metacontroller's CRDs are installed with the upstream set, so its objects dry-run
          // too; so are the Cluster API templates' (KubeadmConfigTemplate, KubevirtMachineTemplate).
          const result = await dryRun(documents.map((object) => stringify(object)).join('---\n'));
          expect(result.code, `${result.stderr}${result.stdout}`).to.equal(0);
        });
      }
      // Only a sample pool's template refs are cloned; every such template is named *Template.
      for (const template of documents.filter((doc) => String(doc['kind']).endsWith('Template'))) {
        const clone = sampleClone(template);
        if (clone === undefined) continue;
        const name = String((template['metadata'] as Json | undefined)?.['name'] ?? '');
        const what = `${file}: ${String(template['kind'])} ${name}: the ${clone.kind} a GPUCellPool sample makes of it`;
        if (pinnedCrds.has(crdOf(clone))) {
          it(`${what} passes the real ${clone.kind} CRD`, async function () {
            this.timeout(30_000);
            const result = await dryRun(stringify(clone));
            expect(result.code, `${result.stderr}${result.stdout}`).to.equal(0);
          });
          continue;
        }
        // No real CRD of the clone's kind is pinned (KubevirtMachine): its spec is the template's
        // spec.template.spec unchanged, which the template's real CRD checked above (Cluster API
        // Provider KubeVirt's template embeds the machine's spec type: KubevirtMachineTemplateResource
        // .Spec is a KubevirtMachineSpec, api/v1alpha1/kubevirtmachinetemplate_types.go, v0.11.2).
        it(`${what}: its spec is the template's (checked above by the real template CRD), its metadata passes a permissive stand-in ${clone.kind} CRD (no real one among ../shared/upstream-crds)`, async function () {
          this.timeout(60_000);
          const templateSpec = (template['spec'] as { template?: { spec?: unknown } } | undefined)
            ?.template?.spec;
          expect((clone as KubernetesObject & { spec?: unknown }).spec).to.deep.equal(templateSpec);
          const client = new KubeClient(cluster.kubeconfigPath);
          try {
            await ensureClusterAPIStandInCrds(
              client,
              CLUSTER_API_STAND_IN_KINDS.filter((kind) => kind.kind === clone.kind),
            );
          } finally {
            client.close();
          }
          const result = await dryRun(stringify(clone));
          expect(result.code, `${result.stderr}${result.stdout}`).to.equal(0);
        });
      }
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
