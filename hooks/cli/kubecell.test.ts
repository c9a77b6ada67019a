import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from '../admission/testing.js';
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE, USAGE, runCli } from './cli.js';
import { runCli as runCliFromValidate, VALIDATE_USAGE } from './validate.js';

const CLI = fileURLToPath(new URL('./kubecell.ts', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(argv: string[], stdin = ''): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: Readable.from([stdin]),
    env: {},
  });
  return { code, stdout, stderr };
}

const BAD = `# one file, many documents
apiVersion: v1
kind: Namespace
metadata:
  name: plain
---
apiVersion: kubecell.io/v1alpha1
kind: Cell
metadata:
  name: cell9
  namespace: default
spec:
  managedClusterRef: {name: cell9}
  machineProfile: {name: a100, gpus: 2}
---
apiVersion: kubecell.io/v1alpha1
kind: VirtualCluster
metadata: {name: vc1, namespace: plain}
spec:
  cellRef: {name: cell9}
  classRef: {name: small}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: not-ours}
spec: {replicas: "not checked"}
---
apiVersion: kubecell.io/v1alpha1
kind: VirtualCluster
metadata: {name: vc2, namespace: plain}
spec:
  cellRef: {name: cell9}
---
apiVersion: kubecell.io/v1beta1
kind: GPUCellPool
metadata: {name: future}
---
apiVersion: kubecell.io/v1alpha1
kind: Cellular
metadata: {name: typo}
`;

describe('kubecell validate (hooks/cli)', function () {
  this.timeout(30000);
  const dir = mkdtempSync(join(tmpdir(), 'kubecell-cli-'));

  it('passes every sample, saying what it did not check', async () => {
    const result = await run(['validate', '-f', join(REPO_ROOT, 'samples')]);
    expect(result.stdout).to.equal('');
    expect(result.code).to.equal(EXIT_OK);
    expect(result.stderr).to.match(
      /^kubecell validate: \d+ KubeCell objects checked in \d+ files \(\d+ other documents skipped\): no errors\nnote: offline check: the rules that need the cluster are not checked here/,
    );
  });

  it('prints every error as <file>: <Kind>/<name>: <field>: <message> and exits 1', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, BAD);
    const result = await run(['validate', '-f', file]);
    expect(result.code).to.equal(EXIT_INVALID);
    expect(result.stdout.split('\n')).to.deep.equal([
      `${file}: Cell/cell9: spec.machineProfile.gpus: Forbidden: unknown field (the apiserver would silently drop it); check its spelling and indentation`,
      `${file}: Cell/cell9: metadata.namespace: Invalid value: "default": a Cell must be created in the KubeCell controller namespace "kubecell-system"; set metadata.namespace: kubecell-system`,
      `${file}: VirtualCluster/vc1: metadata.namespace: Forbidden: namespace "plain" is not a KubeCell host namespace: a VirtualCluster may only be created in a host namespace, one labelled kubecell.io/host-namespace=true; a platform administrator can label it with: kubectl label namespace plain kubecell.io/host-namespace=true`,
      `${file}: VirtualCluster/vc2: spec.classRef: Required value`,
      `${file}: VirtualCluster/vc2: metadata.namespace: Forbidden: namespace "plain" is not a KubeCell host namespace: a VirtualCluster may only be created in a host namespace, one labelled kubecell.io/host-namespace=true; a platform administrator can label it with: kubectl label namespace plain kubecell.io/host-namespace=true`,
      `${file}: VirtualCluster/vc2: metadata.namespace: Forbidden: namespace "plain" already hosts VirtualCluster "vc1": a host namespace hosts at most one VirtualCluster; create this one in another host namespace`,
      `${file}: GPUCellPool/future: apiVersion: Unsupported value: "kubecell.io/v1beta1": supported values: "kubecell.io/v1alpha1"`,
      `${file}: Cellular/typo: kind: Unsupported value: "Cellular": supported values: "Cell", "GPUCellPool", "VirtualCluster", "VirtualClusterPlan", "VirtualNodeClass"`,
      '',
    ]);
    expect(result.stderr).to.match(
      /^kubecell validate: 5 KubeCell objects checked in 1 file \(2 other documents skipped\): 8 errors\n/,
    );
  });

  it('honours --controller-namespace (and KUBECELL_CONTROLLER_NAMESPACE)', async () => {
    const file = join(dir, 'cell.yaml');
    writeFileSync(
      file,
      'apiVersion: kubecell.io/v1alpha1\nkind: Cell\nmetadata: {name: c, namespace: platform}\n' +
        'spec: {managedClusterRef: {name: c}, machineProfile: {name: a100}}\n',
    );
    expect((await run(['validate', '-f', file])).code).to.equal(EXIT_INVALID);
    expect(
      (await run(['validate', '--controller-namespace', 'platform', '-f', file])).code,
    ).to.equal(EXIT_OK);
    expect(
      (await run(['validate', `--filename=${file}`, '--controller-namespace=platform'])).code,
    ).to.equal(EXIT_OK);
    let stderr = '';
    const code = await runCli(['validate', '-f', file], {
      stdout: { write: () => undefined },
      stderr: { write: (text: string) => (stderr += text) },
      env: { KUBECELL_CONTROLLER_NAMESPACE: 'platform' },
    });
    expect(code, stderr).to.equal(EXIT_OK);
  });

  it('refuses a GPUCellPool whose provisioner label contradicts its type, not a missing one', async () => {
    const pool = (labels: string) =>
      'apiVersion: kubecell.io/v1alpha1\nkind: GPUCellPool\n' +
      `metadata: {name: p${labels === '' ? '' : ', labels: ' + labels}}\n` +
      'spec: {machineProfile: a100, namespace: cells, gpu: {resourceClaimTemplateName: t},\n' +
      '  bootstrap: {provider: Opaque, joinSecretRef: {name: j}},\n' +
      '  provisioner: {type: KubeVirt, kubeVirt: {cpu: 2, memory: 8Gi, image: {containerDisk: i}}}}\n';
    const wrong = await run(
      ['validate', '-f', '-'],
      pool('{kubecell.io/provisioner: cluster-api}'),
    );
    expect(wrong.code).to.equal(EXIT_INVALID);
    expect(wrong.stdout).to.include(
      '<stdin>: GPUCellPool/p: metadata.labels[kubecell.io/provisioner]: Invalid value: "cluster-api": ' +
        'must be "kubevirt" for spec.provisioner.type KubeVirt',
    );
    expect(
      (await run(['validate', '-f', '-'], pool('{kubecell.io/provisioner: kubevirt}'))).code,
    ).to.equal(EXIT_OK);
    expect((await run(['validate', '-f', '-'], pool(''))).code).to.equal(EXIT_OK);
  });

  it('reads directories recursively, Lists, JSON and standard input', async () => {
    const tree = join(dir, 'tree');
    mkdirSync(join(tree, 'nested', 'deeper'), { recursive: true });
    writeFileSync(
      join(tree, 'nested', 'deeper', 'class.yml'),
      'apiVersion: kubecell.io/v1alpha1\nkind: VirtualNodeClass\nmetadata: {name: c}\n' +
        'spec: {entitlement: {workloadHard: {gpu: "1"}}, storageClassName: s}\n',
    );
    writeFileSync(
      join(tree, 'list.json'),
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          {
            apiVersion: 'kubecell.io/v1alpha1',
            kind: 'VirtualNodeClass',
            metadata: { name: 'from-list' },
            spec: { entitlement: { workloadHard: { pods: 1 } }, storageClassName: 'Bad_Name' },
          },
        ],
      }),
    );
    writeFileSync(join(tree, 'notes.txt'), 'kind: Cell\n');
    const result = await run(['validate', '-f', tree]);
    expect(result.code).to.equal(EXIT_INVALID);
    expect(result.stdout.trim().split('\n')).to.deep.equal([
      `${join(tree, 'list.json')}: VirtualNodeClass/from-list: spec.storageClassName: Invalid value: "Bad_Name": must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"`,
      `${join(tree, 'nested', 'deeper', 'class.yml')}: VirtualNodeClass/c: spec.entitlement.workloadHard: Invalid value: "object": entitlement.workloadHard keys must be ResourceQuota resource names such as requests.cpu, requests.memory, limits.cpu, pods or count/<resource>.<group>; write an extended resource as requests.<resourceName>, e.g. requests.nvidia.com/gpu`,
    ]);

    const piped = await run(
      ['validate', '-f', '-'],
      'apiVersion: kubecell.io/v1alpha1\nkind: VirtualClusterPlan\nmetadata: {name: p, namespace: t}\nspec: {cellRef: {name: c}}\n',
    );
    expect(piped.stdout).to.equal('<stdin>: VirtualClusterPlan/p: spec.classRef: Required value\n');
    expect(piped.code).to.equal(EXIT_INVALID);
  });

  it('reports invalid YAML with its file and document', async () => {
    const file = join(dir, 'broken.yaml');
    writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\n---\nkind: [unclosed\n');
    const result = await run(['validate', '-f', file]);
    expect(result.code).to.equal(EXIT_INVALID);
    expect(result.stdout).to.match(new RegExp(`^${file}: document 2: invalid YAML: `));
  });

  it('exits 2 on usage errors, printing the usage', async () => {
    const cases: Array<[string[], string, string]> = [
      [[], 'kubecell: no command given', USAGE],
      [['lint', '-f', 'x'], 'kubecell: unknown command "lint"', USAGE],
      [['help', 'lint'], 'kubecell: no help on "lint"', USAGE],
      [['validate'], 'kubecell: validate needs -f <file|directory|->', VALIDATE_USAGE],
      [['validate', '-f'], 'kubecell: -f needs a value', VALIDATE_USAGE],
      [
        ['validate', '--strict', '-f', 'x'],
        'kubecell: unknown argument "--strict"',
        VALIDATE_USAGE,
      ],
    ];
    for (const [argv, message, usage] of cases) {
      const result = await run(argv);
      expect(result.code, argv.join(' ')).to.equal(EXIT_USAGE);
      expect(result.stderr).to.equal(`${message}\n\n${usage}`);
      expect(result.stdout).to.equal('');
    }
    const missing = await run(['validate', '-f', join(dir, 'absent')]);
    expect(missing.code).to.equal(EXIT_USAGE);
    expect(missing.stderr).to.equal(`kubecell: cannot read ${join(dir, 'absent')}: ENOENT\n`);
  });

  it('prints its help and exits 0: the commands, and each command on its own', async () => {
    for (const argv of [['--help'], ['help'], ['-h']]) {
      const result = await run(argv);
      expect(result.code).to.equal(EXIT_OK);
      expect(result.stdout).to.equal(USAGE);
    }
    expect(USAGE).to.include('kubecell validate -f');
    expect(USAGE).to.include('kubecell kubeconfig <name>');
    for (const argv of [
      ['validate', '--help'],
      ['help', 'validate'],
    ]) {
      const result = await run(argv);
      expect(result.code).to.equal(EXIT_OK);
      expect(result.stdout).to.equal(VALIDATE_USAGE);
    }
    expect(VALIDATE_USAGE).to.include('It is offline: rules that need the cluster');
  });

  it('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    const result = await run(['--version']);
    expect(result.code).to.equal(EXIT_OK);
    expect(result.stdout).to.equal(`kubecell ${version}\n`);
    expect(USAGE).to.include('kubecell --version');
    expect((await run(['--version', 'x'])).code).to.equal(EXIT_USAGE);
  });

  it('runCli is still exported by validate.ts (the whole command line)', async () => {
    let out = '';
    const code = await runCliFromValidate(['--help'], {
      stdout: { write: (text: string) => (out += text) },
      stderr: { write: (text: string) => (out += text) },
      env: {},
    });
    expect(code).to.equal(EXIT_OK);
    expect(out).to.equal(USAGE);
  });

  it('runs as a program: npx tsx, and through its shebang', () => {
    const viaTsx = spawnSync('npx', ['tsx', CLI, 'validate', '-f', 'samples/'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(viaTsx.status, viaTsx.stderr).to.equal(0);
    expect(viaTsx.stderr).to.include('no errors');

    const file = join(dir, 'shebang.yaml');
    writeFileSync(file, BAD);
    const direct = spawnSync(CLI, ['validate', '-f', file], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(direct.status, direct.stderr).to.equal(1);
    expect(direct.stdout.trim().split('\n')).to.have.length(8);
    const usage = spawnSync(CLI, [], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(usage.status).to.equal(2);
  });
});
