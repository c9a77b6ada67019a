// Unit tests of what `local-up --simulate --remote` decides without a cluster: which Cells each
// simulation sees, how the delivered agent Deployment is run, the sample it writes, and what the
// summary tells the user. The real run is described in README.md (Try KubeCell locally).
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { API_VERSION } from '../../hooks/api/kinds.js';
import { runCli } from '../../hooks/cli/validate.js';
import { DEFAULT_DELIVERY_CONFIG } from '../../hooks/delivery/config.js';
import { renderAgentWork } from '../../hooks/delivery/agent-work.js';
import { loadPrivateKey } from '../../hooks/remote/sealing-keys.js';
import { AGENT_NAME } from '../../hooks/remote/contract.js';
import { resourcePath, type KubeObject } from '../../harness/simulate/index.js';
import { boundCluster, isCellListPath } from './cell-view.js';
import { deliveredPod, processEnvironment, type DeliveredPod } from './delivered-pod.js';
import { REMOTE_CLUSTER_NAME } from './options.js';
import { REMOTE_SAMPLE, remoteFiles, remoteSample, writeRemoteFiles } from './remote-files.js';
import { remoteLines } from './summary.js';

const cell = (name: string, cluster?: string): KubeObject => ({
  apiVersion: API_VERSION,
  kind: 'Cell',
  metadata: { name, namespace: 'kubecell-system' },
  spec: cluster === undefined ? {} : { managedClusterRef: { name: cluster } },
});

describe('local-up --remote: which Cells each simulation sees (cell-view.ts)', function () {
  it("recognises the simulation's list of Cells, in one namespace or all, and nothing else", function () {
    const inNamespace = resourcePath({
      apiVersion: API_VERSION,
      resource: 'cells',
      namespace: 'kubecell-system',
    });
    expect(isCellListPath(inNamespace)).to.equal(true);
    expect(isCellListPath(resourcePath({ apiVersion: API_VERSION, resource: 'cells' }))).to.equal(
      true,
    );
    for (const other of [
      resourcePath({ apiVersion: API_VERSION, resource: 'virtualclusters', namespace: 'a' }),
      resourcePath({ apiVersion: API_VERSION, resource: 'cells', namespace: 'x', name: 'c' }),
      resourcePath({ apiVersion: 'v1', resource: 'nodes' }),
      '/apis/kubecellXio/v1alpha1/cells',
    ]) {
      expect(isCellListPath(other), other).to.equal(false);
    }
  });

  it('reads the ManagedCluster a Cell is bound to', function () {
    expect(boundCluster(cell('a', REMOTE_CLUSTER_NAME))).to.equal(REMOTE_CLUSTER_NAME);
    expect(boundCluster(cell('b', 'cell1'))).to.equal('cell1');
    expect(boundCluster(cell('c'))).to.equal(undefined);
  });
});

/** The Deployment of the real kubecell-cell-agent work, as OCM's work agent applies it. */
function agentDeployment(publicKeyPem?: string): unknown {
  const work = renderAgentWork(REMOTE_CLUSTER_NAME, ['a100', 'remote-cpu'], {
    agentImage: DEFAULT_DELIVERY_CONFIG.agentImage,
    ...(publicKeyPem === undefined ? {} : { publicKeyPem }),
  });
  const deployment = work.spec.workload.manifests.find(
    (manifest) => manifest.kind === 'Deployment' && manifest.metadata?.name === AGENT_NAME,
  );
  if (!deployment) throw new Error('the agent work holds no Deployment');
  return deployment;
}

describe('local-up --remote: running the delivered cell agent (delivered-pod.ts)', function () {
  it("reads the agent work's Deployment as a kubelet would: command, env, account, mount", function () {
    const pod = deliveredPod(agentDeployment()) as DeliveredPod;
    expect(pod.argv).to.deep.equal(['node', '--import', 'tsx', 'hooks/cli/kubecell.ts', 'agent']);
    expect(pod.serviceAccountName).to.equal('kubecell-cell-agent');
    expect(pod.env).to.include({
      KUBECELL_AGENT_MACHINE_PROFILES: 'a100,remote-cpu',
      KUBECELL_SEALING_PUBLIC_KEY_FILE: '/etc/kubecell/sealing/public-key.pem',
    });
    expect(pod.mounts).to.deep.equal([
      {
        mountPath: '/etc/kubecell/sealing',
        volume: 'sealing-public-key',
        configMap: 'kubecell-sealing-public-key',
        optional: true,
      },
    ]);
  });

  it('moves paths under a mount to the folder the ConfigMap was projected into', function () {
    const pod = deliveredPod(agentDeployment()) as DeliveredPod;
    const env = processEnvironment(pod, new Map([['/etc/kubecell/sealing', '/state/volumes/key']]));
    expect(env.KUBECELL_SEALING_PUBLIC_KEY_FILE).to.equal('/state/volumes/key/public-key.pem');
    expect(env.KUBECELL_AGENT_MACHINE_PROFILES).to.equal('a100,remote-cpu');
    // A path that only starts like the mount is not under it.
    const similar = { ...pod, env: { X: '/etc/kubecell/sealing-other/file' } };
    expect(processEnvironment(similar, new Map([['/etc/kubecell/sealing', '/f']])).X).to.equal(
      '/etc/kubecell/sealing-other/file',
    );
  });

  it('says why a Deployment cannot be run here', function () {
    expect(deliveredPod({ spec: {} })).to.deep.equal({
      problem: 'the Deployment has no pod template container',
    });
    const noCommand = { spec: { template: { spec: { containers: [{ name: 'x', image: 'i' }] } } } };
    expect(deliveredPod(noCommand)).to.have.property('problem').that.includes('no command');
    const fromSecret = {
      spec: {
        template: {
          spec: {
            containers: [
              { command: ['x'], env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: {} } }] },
            ],
          },
        },
      },
    };
    expect(deliveredPod(fromSecret)).to.deep.equal({ problem: 'env TOKEN is not a literal value' });
  });
});

describe('local-up --remote: the files in the state directory (remote-files.ts)', function () {
  let dir: string;
  before(function () {
    dir = mkdtempSync(path.join(tmpdir(), 'kubecell-local-remote-'));
  });
  // An RSA 3072 key takes about a second to generate on a shared core; validate compiles schemas.
  this.timeout(30_000);
  after(function () {
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes a private RSA sealing key the hook server accepts, readable by its owner only', function () {
    const files = writeRemoteFiles(dir);
    const key = loadPrivateKey(readFileSync(files.sealingKeyFile, 'utf8'));
    expect(key.asymmetricKeyDetails?.modulusLength).to.equal(3072);
    expect(statSync(files.sealingKeyFile).mode & 0o777).to.equal(0o600);
    const again = writeRemoteFiles(dir);
    expect(readFileSync(again.sealingKeyFile, 'utf8')).to.not.equal(
      key.export({ type: 'pkcs8', format: 'pem' }),
    );
  });

  it('writes a sample whose Cell is delivered by ManifestWork to cell-remote, with a VirtualCluster on it', function () {
    const files = remoteFiles(dir);
    const objects = parseAllDocuments(readFileSync(files.sampleFile, 'utf8')).map((document) =>
      document.toJS(),
    );
    expect(objects).to.deep.equal(remoteSample());
    const cellObject = objects.find((object) => object.kind === 'Cell');
    expect(cellObject.spec).to.deep.include({
      managedClusterRef: { name: REMOTE_CLUSTER_NAME },
      delivery: 'ManifestWork',
    });
    const virtualCluster = objects.find((object) => object.kind === 'VirtualCluster');
    expect(virtualCluster.metadata.namespace).to.equal(REMOTE_SAMPLE.namespace);
    expect(virtualCluster.spec.cellRef).to.deep.equal({ name: REMOTE_SAMPLE.cell });
  });

  it("passes `kubecell validate` (the admission webhook's rules, offline)", async function () {
    const files = remoteFiles(dir);
    let stdout = '';
    let stderr = '';
    const code = await runCli(['validate', '-f', files.sampleFile], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      env: {},
    });
    expect(code, `${stdout}${stderr}`).to.equal(0);
    expect(stdout).to.equal('');
  });
});

describe('local-up --remote: the summary (summary.ts)', function () {
  it('names both kubeconfigs, the sample to apply and where to watch, as shell comments', function () {
    const lines = remoteLines({
      managedCluster: REMOTE_CLUSTER_NAME,
      kubeconfig: '/s/remote/kubeconfig',
      apiserverUrl: 'https://127.0.0.1:1',
      sampleFile: '/s/remote/cell-remote.yaml',
      sealingKeyFile: '/s/remote/sealing-key.pem',
    });
    for (const line of lines) expect(line, line).to.match(/^# /);
    const text = lines.join('\n');
    expect(text).to.include('export REMOTE_KUBECONFIG=/s/remote/kubeconfig');
    expect(text).to.include('kubectl apply -f /s/remote/cell-remote.yaml');
    expect(text).to.include(`kubectl get manifestworks -n ${REMOTE_CLUSTER_NAME}`);
    expect(text).to.include('KUBECONFIG=/s/remote/kubeconfig kubectl get nodes');
  });
});
