// `npm run local-up` without --simulate (scripts/local/): KubeCell with the pinned upstream CRDs
// and nothing playing the world around it, run as a user would, in a state directory of its own
// (KUBECELL_LOCAL_DIR). Every sample must pass a server-side dry-run there against the real CRD
// of its kind (issue 26): `kubectl apply --dry-run=server -f samples/` exactly as typed, the
// Cluster API templates of samples/33-gpucellpool-clusterapi-templates.yaml included (Cluster API
// v1.14.0's KubeadmConfigTemplate, Cluster API Provider KubeVirt v0.11.2's
// KubevirtMachineTemplate, pinned in upstream-inputs.json); then `kubectl apply -f samples/`, the
// command local-up prints, applies every one, and every sample Cell stays Pending for want of a
// ManagedCluster (ManagedClusterNotFound), as local-up says, with where the docs register one.
import { expect } from 'chai';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { REASONS } from '../../hooks/cell/reasons.js';
import { crdNamesIn, upstreamCrdFiles } from '../../harness/cluster/crds.js';
import { localInstance, output, type StatusObject } from './local-scripts.js';
import { repoRoot } from '../../harness/cluster/paths.js';
import { poll } from '../../harness/poll.js';

const samplesDir = path.join(repoRoot, 'samples');
const templatesFile = path.join(samplesDir, '33-gpucellpool-clusterapi-templates.yaml');
const TEMPLATE_CRDS = [
  'kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io',
  'kubevirtmachinetemplates.infrastructure.cluster.x-k8s.io',
];
const STAND_IN_LABEL = 'kubecell.io/test-stand-in';

interface Crd {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { group: string; versions: { name: string; served: boolean }[] };
}

/** Every object of samples/, as `kubectl apply` names it: `<kind>.<group>/<name>`, sorted. */
function sampleObjects(): string[] {
  return readdirSync(samplesDir)
    .filter((file) => /\.ya?ml$/.test(file))
    .flatMap((file) => parseAllDocuments(readFileSync(path.join(samplesDir, file), 'utf8')))
    .map((document) => document.toJS() as Record<string, unknown> | null)
    .filter((object) => object !== null)
    .map((object) => {
      const apiVersion = String(object['apiVersion']);
      const group = apiVersion.includes('/') ? `.${apiVersion.split('/')[0]}` : '';
      const name = (object['metadata'] as { name: string }).name;
      return `${String(object['kind']).toLowerCase()}${group}/${name}`;
    })
    .sort();
}

/** The served versions of a pinned upstream CRD, read from its file. */
function pinnedServedVersions(name: string): string[] {
  const file = upstreamCrdFiles().find((candidate) => crdNamesIn(candidate).includes(name));
  if (file === undefined) throw new Error(`${name} is not pinned in upstream-inputs.json`);
  const crd = parseAllDocuments(readFileSync(file, 'utf8'))
    .map((document) => document.toJS() as Crd)
    .find((candidate) => candidate.metadata.name === name);
  return (crd?.spec.versions ?? []).filter((v) => v.served).map((v) => v.name);
}

describe('npm run local-up (no --simulate): every sample dry-runs against the real CRDs', function () {
  const local = localInstance([], 'kubecell-local-plain-test-');

  it('starts without the simulation and says nothing plays the world around it', function () {
    expect(local.up.code, output(local.up)).to.equal(0);
    local.requireUp();
    expect(local.state.simulated ?? false).to.equal(false);
    expect(local.up.stdout).to.include('# NOT running, and not simulated:');
    expect(local.up.stdout).to.include('#   kubectl apply -f samples/');
    // No ManagedCluster, so no Cell joins; where the docs register one with OCM's tools (the
    // whole text is scripts/local/summary.test.ts's).
    expect(local.up.stdout).to.include(
      "#   - OCM's registration: no ManagedCluster exists and nothing creates one, so every Cell",
    );
    expect(local.up.stdout).to.include(
      `#     register it with OCM's tools: docs/operations.md#register-the-hub-as-a-managedcluster`,
    );
  });

  it("serves the Cluster API template kinds from the providers' pinned CRDs, and no Cluster API stand-in", async function () {
    this.timeout(60_000);
    local.requireUp();
    const listed = await local.kubectl(['get', 'customresourcedefinitions', '-o', 'json']);
    expect(listed.code, output(listed)).to.equal(0);
    const crds = (JSON.parse(listed.stdout) as { items: Crd[] }).items;
    for (const name of TEMPLATE_CRDS) {
      const crd = crds.find((candidate) => candidate.metadata.name === name);
      expect(crd, name).to.not.equal(undefined);
      expect(crd?.metadata.labels?.[STAND_IN_LABEL], name).to.equal(undefined);
      expect(
        crd?.spec.versions.filter((v) => v.served).map((v) => v.name),
        name,
      ).to.deep.equal(pinnedServedVersions(name));
    }
    // Without --simulate no stand-in is installed for Cluster API's kinds: KubevirtMachine, whose
    // CRD is not among the shared upstream CRDs, is not served at all.
    const clusterAPIStandIns = crds.filter(
      (crd) =>
        /(^|\.)cluster\.x-k8s\.io$/.test(crd.spec.group) &&
        crd.metadata.labels?.[STAND_IN_LABEL] !== undefined,
    );
    expect(clusterAPIStandIns.map((crd) => crd.metadata.name)).to.deep.equal([]);
    expect(crds.map((crd) => crd.metadata.name)).to.not.include(
      'kubevirtmachines.infrastructure.cluster.x-k8s.io',
    );
  });

  it('`kubectl apply --dry-run=server -f samples/` passes every sample', async function () {
    this.timeout(120_000);
    local.requireUp();
    const dryRun = await local.kubectl(['apply', '--dry-run=server', '-f', samplesDir]);
    expect(dryRun.code, output(dryRun)).to.equal(0);
    const reported = dryRun.stdout
      .trim()
      .split('\n')
      .filter((line) => line.endsWith('(server dry run)'))
      .map((line) => line.split(' ')[0] ?? '')
      .sort();
    expect(reported).to.deep.equal(sampleObjects());
  });

  it('the real template CRDs refuse a field their schema lacks (a permissive stand-in would not)', async function () {
    this.timeout(60_000);
    local.requireUp();
    const templates = parseAllDocuments(readFileSync(templatesFile, 'utf8')).map(
      (document) => document.toJS() as { kind: string; spec: { template: { spec: object } } },
    );
    expect(templates.map((template) => template.kind)).to.deep.equal([
      'KubeadmConfigTemplate',
      'KubevirtMachineTemplate',
    ]);
    for (const template of templates) {
      const file = path.join(local.localDir, `${template.kind}-unknown-field.yaml`);
      template.spec.template.spec = { ...template.spec.template.spec, notAField: 'x' };
      writeFileSync(file, stringify(template));
      const refused = await local.kubectl(['apply', '--dry-run=server', '-f', file]);
      expect(refused.code, `${template.kind}: ${output(refused)}`).to.not.equal(0);
      expect(refused.stderr, template.kind).to.include(
        'unknown field "spec.template.spec.notAField"',
      );
    }
  });

  it('`kubectl apply -f samples/`, as local-up prints it, applies every sample', async function () {
    this.timeout(120_000);
    local.requireUp();
    const applied = await local.kubectl(['apply', '-f', samplesDir]);
    expect(applied.code, output(applied)).to.equal(0);
  });

  it('as it printed: no ManagedCluster exists, so every sample Cell stays Pending (ManagedClusterNotFound)', async function () {
    this.timeout(120_000);
    local.requireUp();
    const clusters = await local.kubectl(['get', 'managedclusters', '-o', 'name']);
    expect(clusters.code, output(clusters)).to.equal(0);
    expect(clusters.stdout.trim()).to.equal('');
    const names = sampleObjects()
      .filter((object) => object.startsWith('cell.kubecell.io/'))
      .map((object) => object.slice(object.indexOf('/') + 1));
    let cells: StatusObject[] = [];
    // Until the Cell controller has written every sample Cell's status once.
    await poll(
      'every sample Cell has a status',
      async () => {
        const listed = await local.kubectl(['get', 'cells', '-n', 'kubecell-system', '-o', 'json']);
        if (listed.code !== 0) return { notYet: output(listed) };
        cells = (JSON.parse(listed.stdout) as { items: StatusObject[] }).items;
        const without = names.filter(
          (name) => !cells.some((cell) => cell.metadata.name === name && cell.status?.phase),
        );
        return without.length === 0
          ? { value: true }
          : { notYet: `no status yet: ${without.join(', ')}` };
      },
      { timeoutMs: 90_000 },
    );
    expect(cells.map((cell) => cell.metadata.name).sort()).to.deep.equal(names);
    for (const cell of cells) {
      const joined = cell.status?.conditions?.find((condition) => condition.type === 'Joined');
      expect(cell.status?.phase, cell.metadata.name).to.equal('Pending');
      expect(joined?.status, cell.metadata.name).to.equal('False');
      expect(joined?.reason, cell.metadata.name).to.equal(REASONS.ManagedClusterNotFound);
    }
  });

  it('local-down stops every process it started and removes the state', async function () {
    this.timeout(120_000);
    local.requireUp();
    await local.expectDownStopsAll();
  });
});
