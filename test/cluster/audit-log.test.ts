// kube-apiserver's audit log, opt-in (ControlPlaneOptions.auditLog): the requests of the users
// named are in it, once each, with their verb and resource; other users' are not. The benchmark
// counts Metacontroller's requests from it (bench/metacontroller.ts, bench/audit-log.ts).
import { existsSync } from 'node:fs';
import { expect } from 'chai';
import { readAuditRequests } from '../../bench/audit-log.js';
import { startControlPlane, type ControlPlane } from '../../harness/cluster/control-plane.js';
import { runCommand } from '../../harness/cluster/processes.js';
import { CLUSTER_SETUP_TIMEOUT_MS } from './shared-cluster.js';

const AUDITED = { userName: 'audited-user', groups: ['system:masters'] };
const OTHER = { userName: 'other-user', groups: ['system:masters'] };

describe('control plane: the apiserver’s audit log, when asked for', function () {
  let cluster: ControlPlane;

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    cluster = await startControlPlane({
      auditLog: { users: [AUDITED.userName] },
      log: () => undefined,
    });
  });

  after(async function () {
    this.timeout(60_000);
    await cluster?.stop();
  });

  it('records each request of the users named by verb and resource, and no one else’s', async function () {
    this.timeout(60_000);
    const file = cluster.auditLogFile;
    expect(file, 'ControlPlane.auditLogFile').to.be.a('string');
    expect(existsSync(file as string)).to.equal(true);
    const fromMs = Date.now();
    const kubectlAs = async (identity: typeof AUDITED, args: string[]) => {
      const kubeconfig = await cluster.kubeconfigFor(identity);
      const result = await runCommand(cluster.binaries.kubectl, [
        `--kubeconfig=${kubeconfig}`,
        ...args,
      ]);
      expect(result.code, result.stderr).to.equal(0);
    };
    await kubectlAs(AUDITED, ['create', 'namespace', 'audited']);
    await kubectlAs(AUDITED, ['get', 'namespace', 'audited', '-o', 'name']);
    await kubectlAs(OTHER, ['create', 'namespace', 'not-audited']);
    const window = { fromMs, toMs: Date.now() };
    const audited = readAuditRequests(file as string, { user: AUDITED.userName, ...window });
    expect(audited.byRequest['create namespaces']).to.equal(1);
    expect(audited.byRequest['get namespaces']).to.equal(1);
    expect(audited.byCodeClass['2xx']).to.equal(audited.total);
    const other = readAuditRequests(file as string, { user: OTHER.userName, ...window });
    expect(other.total).to.equal(0);
  });
});
