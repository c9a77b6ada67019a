// What the pinned upstream CRDs (upstream-inputs.json) serve, read from the files themselves:
// every kind of samples/ in a group they define is served at the version the sample writes (so
// `kubectl apply --dry-run=server -f samples/` has a real CRD to check it against); a permissive
// Cluster API stand-in exists only for a kind no pinned CRD defines; a stack with one GPUCellPool
// provisioner keeps that provisioner's CRDs. Starts no cluster (local-plain.test.ts and
// kubecell-api.test.ts dry-run the samples on one).
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { CLUSTER_API_STAND_IN_KINDS } from '../../harness/simulate/cluster-api-crds.js';
import { upstreamCrdFiles, upstreamCrdsLeftOut } from '../../harness/cluster/crds.js';
import { repoRoot } from '../../harness/cluster/paths.js';

interface ServedKind {
  group: string;
  kind: string;
  plural: string;
  /** Every version of the CRD, with whether it is served. */
  versions: { name: string; served: boolean }[];
  file: string;
}

interface CrdDocument {
  kind?: string;
  spec?: {
    group: string;
    names: { kind: string; plural: string };
    versions: { name: string; served: boolean }[];
  };
}

/** Every CustomResourceDefinition in the pinned upstream CRD files. */
function pinnedKinds(): ServedKind[] {
  return upstreamCrdFiles().flatMap((file) =>
    parseAllDocuments(readFileSync(file, 'utf8'))
      .map((document) => document.toJS() as CrdDocument | null)
      .filter((crd) => crd?.kind === 'CustomResourceDefinition' && crd.spec !== undefined)
      .map((crd) => {
        const spec = crd!.spec!;
        return {
          group: spec.group,
          kind: spec.names.kind,
          plural: spec.names.plural,
          versions: spec.versions.map(({ name, served }) => ({ name, served })),
          file: path.basename(file),
        };
      }),
  );
}

/** `apiVersion` and `kind` of every document of samples/, and of the Cluster API template refs. */
function sampleKinds(): { apiVersion: string; kind: string; where: string }[] {
  const dir = path.join(repoRoot, 'samples');
  return readdirSync(dir)
    .filter((file) => /\.ya?ml$/.test(file))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(path.join(dir, file), 'utf8')).flatMap((document) => {
        const object = document.toJS() as {
          apiVersion?: string;
          kind?: string;
          spec?: { provisioner?: { clusterAPI?: Record<string, unknown> } };
        } | null;
        if (typeof object?.apiVersion !== 'string' || typeof object.kind !== 'string') return [];
        const refs = Object.entries(object.spec?.provisioner?.clusterAPI ?? {})
          .filter(([field]) => field.endsWith('TemplateRef'))
          .map(([field, ref]) => ({ ...(ref as { apiVersion: string; kind: string }), field }));
        return [
          { apiVersion: object.apiVersion, kind: object.kind, where: file },
          ...refs.map((ref) => ({
            apiVersion: ref.apiVersion,
            kind: ref.kind,
            where: `${file} spec.provisioner.clusterAPI.${ref.field}`,
          })),
        ];
      }),
    );
}

describe('pinned upstream CRDs: what they serve for the samples', function () {
  const pinned = pinnedKinds();

  it('serve every kind of samples/ in their groups at the version the sample writes', function () {
    const groups = new Set(pinned.map((crd) => crd.group));
    const checked: string[] = [];
    for (const { apiVersion, kind, where } of sampleKinds()) {
      const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
      if (!groups.has(group!)) continue;
      const crd = pinned.find((candidate) => candidate.group === group && candidate.kind === kind);
      expect(crd, `${where}: ${kind}.${group!} has no pinned upstream CRD`).to.not.equal(undefined);
      expect(
        crd!.versions.filter((served) => served.served).map((served) => served.name),
        `${where}: ${apiVersion} ${kind} (${crd!.file})`,
      ).to.include(version);
      checked.push(`${apiVersion} ${kind}`);
    }
    // The Cluster API templates of samples/33-gpucellpool-clusterapi-templates.yaml, and the pool's
    // references to them, are among what was checked.
    expect([...new Set(checked)]).to.include.members([
      'bootstrap.cluster.x-k8s.io/v1beta2 KubeadmConfigTemplate',
      'infrastructure.cluster.x-k8s.io/v1alpha1 KubevirtMachineTemplate',
    ]);
  });

  it('leave a permissive Cluster API stand-in only for a kind none of them defines', function () {
    for (const standIn of CLUSTER_API_STAND_IN_KINDS) {
      const real = pinned.find(
        (crd) => crd.group === standIn.group && crd.plural === standIn.plural,
      );
      expect(real?.file, `${standIn.kind}: a pinned CRD defines it, drop its stand-in`).to.equal(
        undefined,
      );
    }
    expect(CLUSTER_API_STAND_IN_KINDS.map((standIn) => standIn.kind)).to.deep.equal([
      'KubevirtMachine',
    ]);
  });

  it("are installed for the provisioner that needs them: Cluster API Provider KubeVirt's template is Cluster API's", function () {
    const kept = (provisioners: Parameters<typeof upstreamCrdsLeftOut>[0]) => {
      const leftOut = upstreamCrdsLeftOut(provisioners, false);
      return upstreamCrdFiles()
        .filter((file) => !leftOut.some((pattern) => pattern.test(file)))
        .map((file) => path.basename(file));
    };
    const clusterAPI = [
      'bootstrap.cluster.x-k8s.io_kubeadmconfigs.yaml',
      'bootstrap.cluster.x-k8s.io_kubeadmconfigtemplates.yaml',
      'cluster.x-k8s.io_machines.yaml',
      'infrastructure.cluster.x-k8s.io_kubevirtmachinetemplates.yaml',
    ];
    expect(kept(['cluster-api'])).to.include.members(clusterAPI);
    expect(kept(['kubevirt', 'cluster-api'])).to.include.members(clusterAPI);
    const kubevirtOnly = kept(['kubevirt']);
    expect(kubevirtOnly.filter((file) => clusterAPI.includes(file))).to.deep.equal([]);
    expect(kubevirtOnly).to.include('k3k.io_clusters.yaml');
    expect(
      upstreamCrdsLeftOut(['kubevirt', 'cluster-api'], true).some((pattern) =>
        pattern.test('/x/upstream-crds/work.open-cluster-management.io_manifestworks.yaml'),
      ),
    ).to.equal(true);
  });
});
