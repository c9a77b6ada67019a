// Unit tests of what `local-up --simulate --remote` decides without a cluster: the sample it
// writes, and what the summary tells the user (which Cells each simulation sees and how the
// delivered agent Deployment is run are harness/'s: simulate/cell-view.test.ts,
// cell-agent/delivered-pod.test.ts). The real run is described in README.md (Try KubeCell locally).
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { runCli } from '../../hooks/cli/validate.js';
import { loadPrivateKey } from '../../hooks/remote/sealing-keys.js';
import { REMOTE_CLUSTER_NAME } from './options.js';
import { REMOTE_SAMPLE, remoteFiles, remoteSample, writeRemoteFiles } from './remote-files.js';
import { remoteLines } from './summary.js';

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
