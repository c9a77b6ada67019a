// Unit tests of what `npm run local-up` says about the ManagedClusters of the Cells (summary.ts):
// with --simulate, that harness/simulate/ creates and renews them in place of OCM's registration,
// with the values local-up gives the simulation; without it, that none exists and why the Cells
// stay Pending; either way, where the docs register the hub with OCM's own tools (issue 26, must
// 2). The real runs are test/cluster/local.test.ts and local-plain.test.ts.
import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { MANAGED_CLUSTER_LEASE as LEASE_THE_CELL_READS } from '../../hooks/cell/liveness.js';
import { REASONS } from '../../hooks/cell/reasons.js';
import {
  DEFAULT_LEASE_DURATION_SECONDS,
  LEASE_DURATION_TIMES,
  MANAGED_CLUSTER_LEASE,
} from '../../harness/simulate/ocm.js';
import { REMOTE_CLUSTER_NAME, SIMULATED_LEASE_DURATION_SECONDS } from './options.js';
import { repoRoot, type LocalState } from './state.js';
import {
  REGISTER_HUB_DOC,
  SAMPLE_MANAGED_CLUSTER,
  managedClusterLines,
  summary,
} from './summary.js';

const STATE: LocalState = {
  supervisorPid: 4242,
  ready: true,
  startedAt: '2026-01-01T00:00:00.000Z',
  processes: {},
  kubeconfig: '/s/kubeconfig',
  apiserverUrl: 'https://127.0.0.1:1',
  hookServerUrl: 'http://127.0.0.1:2',
};

/** spec.managedClusterRef.name of every Cell in samples/. */
function sampleManagedClusters(): string[] {
  const dir = path.join(repoRoot, 'samples');
  return readdirSync(dir)
    .filter((file) => /\.ya?ml$/.test(file))
    .flatMap((file) => parseAllDocuments(readFileSync(path.join(dir, file), 'utf8')))
    .map((document) => document.toJS() as { kind?: string; spec?: Record<string, unknown> } | null)
    .filter((object) => object?.kind === 'Cell')
    .map((cell) => (cell?.spec?.['managedClusterRef'] as { name: string }).name);
}

/** The lines of a summary as one text, after checking each is an `export` or a `#` comment. */
function evalSafe(lines: string[]): string {
  for (const line of lines) expect(line, line).to.match(/^(export [A-Z_]+=|#)/);
  return lines.join('\n');
}

describe('local-up: what it says in place of OCM registering the ManagedClusters (summary.ts)', function () {
  it('--simulate: SIMULATED, created accepted and joined, the lease renewed every duration', function () {
    const text = evalSafe(summary({ ...STATE, simulated: true }));
    const lease = SIMULATED_LEASE_DURATION_SECONDS;
    expect(text).to.include('# ManagedClusters of the Cells: SIMULATED, not registered by OCM');
    expect(text).to.include('no klusterlet');
    expect(text).to.include(`#   e.g. ${SAMPLE_MANAGED_CLUSTER} in samples/`);
    expect(text).to.include('spec.hubAcceptsClient');
    expect(text).to.include(`spec.leaseDurationSeconds ${lease})`);
    expect(text).to.include(
      'HubAcceptedManagedCluster, ManagedClusterJoined and ManagedClusterConditionAvailable True',
    );
    expect(text).to.match(
      new RegExp(`Lease ${MANAGED_CLUSTER_LEASE} in that\\n#   namespace every ${lease} s;`),
    );
    expect(text).to.include(`not renewed for ${LEASE_DURATION_TIMES} × ${lease} s`);
    expect(text).to.include(
      `kubectl -n ${SAMPLE_MANAGED_CLUSTER} get lease ${MANAGED_CLUSTER_LEASE}`,
    );
    expect(text).to.include(REGISTER_HUB_DOC);
    expect(text).to.not.include(REASONS.ManagedClusterNotFound);
  });

  it('--simulate --remote: the real registration controller judges the leases, cell-remote is OCM’s', function () {
    const text = evalSafe(
      summary({ ...STATE, simulated: true, remote: { managedCluster: REMOTE_CLUSTER_NAME } }),
    );
    expect(text).to.include(
      `ManagedClusters of the Cells (except ${REMOTE_CLUSTER_NAME}): SIMULATED`,
    );
    expect(text).to.include("OCM's real registration controller (--remote) judges that lease");
    expect(text).to.not.include('simulated hub lease controller');
  });

  it('without --simulate: no ManagedCluster, so every Cell stays Pending (ManagedClusterNotFound)', function () {
    const text = evalSafe(summary({ ...STATE, simulated: false }));
    expect(text).to.include(
      "#   - OCM's registration: no ManagedCluster exists and nothing creates one",
    );
    expect(text).to.include(
      `stays Pending (condition Joined False, reason ${REASONS.ManagedClusterNotFound})`,
    );
    expect(text).to.include(REGISTER_HUB_DOC);
    expect(text).to.not.include('SIMULATED, not registered by OCM');
    expect(managedClusterLines(false, false).every((line) => line.startsWith('#   '))).to.equal(
      true,
    );
  });

  it('states the values the simulation is given and the lease the Cell reads', function () {
    // stack-start.ts gives startSimulation SIMULATED_LEASE_DURATION_SECONDS; it is OCM's default.
    expect(SIMULATED_LEASE_DURATION_SECONDS).to.equal(DEFAULT_LEASE_DURATION_SECONDS);
    expect(MANAGED_CLUSTER_LEASE).to.equal(LEASE_THE_CELL_READS);
    expect(sampleManagedClusters()).to.include(SAMPLE_MANAGED_CLUSTER);
  });

  it(`links a heading of docs/operations.md that registers ${SAMPLE_MANAGED_CLUSTER} with OCM's tools`, function () {
    const [file = '', anchor = ''] = REGISTER_HUB_DOC.split('#');
    const text = readFileSync(path.join(repoRoot, file), 'utf8');
    const heading = 'Register the hub as a ManagedCluster';
    // GitHub's anchor of that heading (docs.test.ts checks the docs' own links the same way).
    expect(anchor).to.equal(heading.toLowerCase().replaceAll(' ', '-'));
    // Its commands, fences included: up to the next step, `### 2.`.
    const start = text.indexOf(`\n#### ${heading}\n`);
    expect(start, 'the heading').to.be.greaterThan(-1);
    const register = text.slice(start, text.indexOf('\n### ', start));
    for (const command of [
      'clusteradm init --wait',
      'clusteradm get token',
      `--cluster-name ${SAMPLE_MANAGED_CLUSTER}`,
      `clusteradm accept --clusters ${SAMPLE_MANAGED_CLUSTER}`,
      `kubectl get managedcluster ${SAMPLE_MANAGED_CLUSTER}`,
      `kubectl -n ${SAMPLE_MANAGED_CLUSTER} get lease ${LEASE_THE_CELL_READS}`,
    ]) {
      expect(register, command).to.include(command);
    }
  });
});
