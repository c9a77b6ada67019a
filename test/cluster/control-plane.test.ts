// The local control plane itself: real etcd, kube-apiserver, kube-controller-manager and
// Metacontroller built from Go modules at the versions in versions.json. Later cluster tests
// rely on everything checked here.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { ensureBinaries } from '../../harness/cluster/binaries.js';
import type { ControlPlane } from '../../harness/cluster/control-plane.js';
import { installCrds, upstreamCrdFiles, crdNamesIn } from '../../harness/cluster/crds.js';
import { httpGet } from '../../harness/cluster/readiness.js';
import { logTail } from '../../harness/cluster/processes.js';
import { readPinnedVersions } from '../../harness/cluster/versions.js';
import { poll } from '../../harness/poll.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getCluster, getKubeCell } from './shared-cluster.js';

interface KubectlVersionOutput {
  clientVersion?: { gitVersion?: string };
  serverVersion?: { gitVersion?: string; major?: string; minor?: string };
}

function succeeded(
  result: { code: number | null; stdout: string; stderr: string },
  what: string,
): string {
  expect(result.code, `${what} failed:\n${result.stderr}${result.stdout}`).to.equal(0);
  return result.stdout;
}

describe('local control plane built from Go modules', function () {
  const versions = readPinnedVersions();
  let cluster: ControlPlane;

  before(async function () {
    // A first build takes about 10 to 30 minutes on 2 cores (README); with the binaries cached, seconds.
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    // Fails (never skips) with installation instructions when Go is missing.
    const built = await ensureBinaries();
    console.log(
      built.reused
        ? `      binaries reused from ${built.binDir} (${built.totalSeconds.toFixed(1)} s)`
        : `      binaries built into ${built.binDir} in ${built.totalSeconds.toFixed(1)} s`,
    );
    cluster = await getCluster();
    console.log(
      `      control plane started in ${cluster.startupSeconds.toFixed(1)} s; logs in ${cluster.logDir}`,
    );
  });

  it('serves the pinned Kubernetes version, and kubectl is the same release', async function () {
    this.timeout(60_000);
    const output = succeeded(
      await cluster.kubectl(['version', '--output=json']),
      'kubectl version',
    );
    const reported = JSON.parse(output) as KubectlVersionOutput;
    expect(reported.serverVersion?.gitVersion).to.equal(versions.kubernetes.version);
    expect(reported.clientVersion?.gitVersion).to.equal(versions.kubernetes.version);
    const [, major, minor] = /^v(\d+)\.(\d+)\./.exec(versions.kubernetes.version) ?? [];
    expect(reported.serverVersion?.major).to.equal(major);
    expect(reported.serverVersion?.minor).to.equal(minor);
  });

  it('installs every upstream CRD from ../shared/upstream-crds and they become Established', async function () {
    this.timeout(180_000);
    const files = upstreamCrdFiles();
    expect(files.length, 'upstream CRD files').to.be.greaterThan(0);
    const installed = await installCrds(cluster.kubectl, files, 120);
    expect(installed).to.have.members(files.flatMap(crdNamesIn));
    const listed = succeeded(
      await cluster.kubectl([
        'get',
        'customresourcedefinitions',
        '--output=jsonpath={.items[*].metadata.name}',
      ]),
      'kubectl get crds',
    ).split(/\s+/);
    expect(listed).to.include.members(installed);
    // Served means discoverable: kubectl can list each kind (empty lists are fine).
    for (const name of installed) {
      succeeded(
        await cluster.kubectl(['get', name, '--all-namespaces', '--output=name']),
        `kubectl get ${name}`,
      );
    }
  });

  it('creates a namespace, in which kube-controller-manager creates the default ServiceAccount', async function () {
    this.timeout(120_000);
    const namespace = `control-plane-test-${randomBytes(3).toString('hex')}`;
    succeeded(
      await cluster.kubectl(['create', 'namespace', namespace]),
      `kubectl create namespace ${namespace}`,
    );
    const phase = succeeded(
      await cluster.kubectl(['get', 'namespace', namespace, '--output=jsonpath={.status.phase}']),
      'kubectl get namespace',
    );
    expect(phase).to.equal('Active');
    // The serviceaccount controller is part of kube-controller-manager: this proves it runs.
    await poll(
      `ServiceAccount ${namespace}/default`,
      async () => {
        const result = await cluster.kubectl([
          'get',
          'serviceaccount',
          'default',
          `--namespace=${namespace}`,
          '--output=name',
        ]);
        return result.code === 0 ? { value: result.stdout.trim() } : { notYet: result.stderr };
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    // Deleting a namespace completes only when the namespace controller has emptied it.
    succeeded(
      await cluster.kubectl(['delete', 'namespace', namespace, '--wait=true', '--timeout=90s']),
      `kubectl delete namespace ${namespace}`,
    );
  });

  it('runs Metacontroller as its ServiceAccount, which registered its informers and stays up', async function () {
    this.timeout(60_000);
    const { metacontroller } = await getKubeCell();
    // Give it time to list its CRDs and start its informers; a bad flag, missing CRD or RBAC
    // problem makes it exit within seconds.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    expect(
      metacontroller.process.exitStatus(),
      `Metacontroller exited; log ${metacontroller.process.logFile}:\n${logTail(metacontroller.process.logFile)}`,
    ).to.equal(undefined);
    const readyz = await httpGet(metacontroller.readyzUrl, {});
    expect(
      readyz.status,
      `Metacontroller /readyz; log:\n${logTail(metacontroller.process.logFile)}`,
    ).to.equal(200);
    // Nothing it needs was refused by RBAC: the apiserver words a denial `<resource> is
    // forbidden: User "<name>" cannot <verb> ...`. (Other "forbidden" answers, such as creating
    // in a namespace being deleted, are not about permissions.)
    const denials = readFileSync(metacontroller.process.logFile, 'utf8')
      .split('\n')
      .filter((line) =>
        /forbidden: User \\?"system:serviceaccount:metacontroller:metacontroller\\?" cannot/.test(
          line,
        ),
      );
    expect(denials.map((line) => line.slice(0, 400))).to.deep.equal([]);
  });
});
