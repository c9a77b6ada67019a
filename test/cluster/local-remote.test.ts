// `npm run local-up -- --simulate --remote` / `npm run local-down` (scripts/local/): the local
// KubeCell with a second cluster, cell-remote, joined to the real OCM hub. Runs the scripts as a
// user following the README would, in a state directory of its own (KUBECELL_LOCAL_DIR): the
// export line and the managed cluster's kubeconfig local-up prints; `kubectl apply -f` of the
// sample it prints, on the hub; the sample's Cell and VirtualCluster Ready on the hub (how long
// that took is printed, not asserted); the VirtualCluster's k3k Cluster and Service on cell-remote
// (through its kubeconfig) and not on the hub; local-down stops every process, the OCM hub,
// cell-remote's control plane and agents and the cell agent included, and removes the state.
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  expectAllReady,
  localInstance,
  namesOfKind,
  output,
  took,
  type StatusObject,
} from './local-scripts.js';

/** How long the sample Cell and VirtualCluster may take to become Ready (not a timed check). */
const READY_WAIT_MS = 240_000;

const MANAGED_CLUSTER = 'cell-remote';
/** The processes --remote adds to state.json (scripts/local/remote.ts ocmProcesses). */
const REMOTE_PROCESSES = [
  'ocm-registration-controller',
  'ocm-work-manager',
  `${MANAGED_CLUSTER} etcd`,
  `${MANAGED_CLUSTER} kube-apiserver`,
  `${MANAGED_CLUSTER} kube-controller-manager`,
  `${MANAGED_CLUSTER} ocm-registration-agent`,
  `${MANAGED_CLUSTER} ocm-work-agent`,
];
/** The delivered cell agent, run as a process once its Deployment lands on cell-remote. */
const CELL_AGENT_PROCESS = 'kubecell-cell-agent';

/** The value a `# ...` line of local-up's stdout gives after `prefix`, if such a line exists. */
function printed(stdout: string, prefix: RegExp): string | undefined {
  for (const line of stdout.split('\n')) {
    const match = prefix.exec(line);
    if (match) return line.slice(match[0].length).trim();
  }
  return undefined;
}

interface ServiceObject {
  metadata: { name: string };
  spec?: { type?: string; ports?: { nodePort?: number }[] };
}

describe('npm run local-up -- --simulate --remote / local-down', function () {
  const local = localInstance(['--simulate', '--remote'], 'kubecell-local-remote-test-');
  /** What local-up printed: the managed cluster's kubeconfig and the sample to apply. */
  let managedKubeconfig: string;
  let sampleFile: string;
  let virtualCluster: { name: string; namespace: string };

  it('refuses --remote without --simulate, with its usage (exit 2)', async function () {
    this.timeout(60_000);
    await local.expectRefused(['--remote'], '--remote needs --simulate');
  });

  it("starts and prints the hub's KUBECONFIG to export, cell-remote's kubeconfig and the sample to apply", function () {
    const { up, state, kubeconfig, localDir } = local;
    expect(up.code, output(up)).to.equal(0);
    const lines = up.stdout.trim().split('\n');
    const exportLine = lines.find((line) => line.startsWith('export KUBECONFIG='));
    expect(exportLine, output(up)).to.equal(`export KUBECONFIG=${kubeconfig}`);
    expect(existsSync(kubeconfig), kubeconfig).to.equal(true);
    // Every other stdout line is a shell comment, so `eval "$(npm run -s local-up ...)"` works.
    for (const line of lines) {
      expect(line === exportLine || line.startsWith('#'), line).to.equal(true);
    }
    expect(up.stdout).to.include('REMOTE (--remote): the REAL Open Cluster Management hub');
    expect(up.stdout).to.include('WITH a SIMULATED outside world');

    // The README's paths: <KUBECELL_LOCAL_DIR>/remote/kubeconfig and .../remote/cell-remote.yaml.
    managedKubeconfig = printed(up.stdout, /^#\s+export REMOTE_KUBECONFIG=/) ?? '';
    expect(managedKubeconfig, output(up)).to.equal(path.join(localDir, 'remote', 'kubeconfig'));
    expect(existsSync(managedKubeconfig), managedKubeconfig).to.equal(true);
    sampleFile =
      printed(up.stdout, /^#\s+kubectl apply -f (?!samples\/)/) ?? '<no sample file printed>';
    expect(sampleFile, output(up)).to.equal(
      path.join(localDir, 'remote', `${MANAGED_CLUSTER}.yaml`),
    );
    expect(existsSync(sampleFile), sampleFile).to.equal(true);

    expect(state.ready).to.equal(true);
    expect(state.remote?.managedCluster).to.equal(MANAGED_CLUSTER);
    expect(state.remote?.kubeconfig).to.equal(managedKubeconfig);
    expect(state.remote?.apiserverUrl).to.be.a('string').and.not.equal(state.apiserverUrl);
    expect(Object.keys(state.processes)).to.include.members([
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
      'metacontroller',
      'hook-server',
      ...REMOTE_PROCESSES,
    ]);
  });

  it("cell-remote's kubeconfig reaches a second cluster, joined to the hub as a ManagedCluster", async function () {
    this.timeout(60_000);
    local.requireUp();
    const namespaces = await local.kubectl(['get', 'namespaces', '-o', 'name'], managedKubeconfig);
    expect(namespaces.code, output(namespaces)).to.equal(0);
    // OCM's agents run against it, from their namespace there.
    expect(namespaces.stdout).to.include('namespace/open-cluster-management-agent');
    const joined = await local.kubectl(['get', 'managedcluster', MANAGED_CLUSTER, '-o', 'json']);
    expect(joined.code, output(joined)).to.equal(0);
    const conditions = (JSON.parse(joined.stdout) as StatusObject).status?.conditions ?? [];
    expect(
      conditions.find((condition) => condition.type === 'ManagedClusterJoined')?.status,
      joined.stdout,
    ).to.equal('True');
  });

  it('takes `kubectl apply -f <the printed sample>`; its Cell and VirtualCluster become Ready on the hub', async function () {
    this.timeout(READY_WAIT_MS + 120_000);
    local.requireUp();
    const [virtualClusterName] = namesOfKind('VirtualCluster', [sampleFile]);
    expect(virtualClusterName, sampleFile).to.be.a('string');
    const applyStarted = performance.now();
    const applied = await local.kubectl(['apply', '-f', sampleFile]);
    expect(applied.code, output(applied)).to.equal(0);

    const [cells, virtualClusters] = await local.waitUntilReady(
      [
        { resource: 'cells', label: 'Cells', names: namesOfKind('Cell', [sampleFile]) },
        {
          resource: 'virtualclusters',
          label: 'VirtualClusters',
          names: namesOfKind('VirtualCluster', [sampleFile]),
        },
      ],
      applyStarted,
      READY_WAIT_MS,
      // The cell agent starts once its Deployment lands on cell-remote: note its pid.
      () => local.recordProcesses(),
    );
    // Printed for the README and for whoever reads the run; how long it takes is not asserted.
    console.log(
      `      local-up --simulate --remote started in ${local.state.startupSeconds?.toFixed(1) ?? '?'} s; ` +
        `after kubectl apply -f ${path.basename(sampleFile)}: Cell (${cells!.names.join(', ')}) Ready in ` +
        `${took(cells!, READY_WAIT_MS)}, VirtualCluster (${virtualClusters!.names.join(', ')}) Ready in ` +
        `${took(virtualClusters!, READY_WAIT_MS)}`,
    );
    const works = await local.kubectl(['get', 'manifestworks', '-n', MANAGED_CLUSTER]);
    console.log(`      ManifestWorks then on the hub:\n${works.stdout.replace(/^/gm, '        ')}`);
    expectAllReady([cells!, virtualClusters!]);
    const found = virtualClusters!.last.find(
      (object) => object.metadata.name === virtualClusterName,
    );
    virtualCluster = { name: virtualClusterName!, namespace: found!.metadata.namespace! };
  });

  it("the VirtualCluster's k3k Cluster and Service are on cell-remote, not on the hub; its endpoint is that Service's NodePort", async function () {
    this.timeout(120_000);
    local.requireUp();
    expect(virtualCluster, 'the sample VirtualCluster did not become Ready').to.not.equal(
      undefined,
    );
    const { name, namespace } = virtualCluster;
    const service = `kubecell-${name}-api`;
    const get = (resource: string, kubeconfig?: string) =>
      local.kubectl(['get', resource, '-n', namespace, '-o', 'json'], kubeconfig);

    const managedClusters = await get('clusters.k3k.io', managedKubeconfig);
    expect(managedClusters.code, output(managedClusters)).to.equal(0);
    const k3kNames = (JSON.parse(managedClusters.stdout) as { items: StatusObject[] }).items.map(
      (item) => item.metadata.name,
    );
    expect(k3kNames, 'k3k Clusters on cell-remote').to.deep.equal([name]);
    const managedServices = await get('services', managedKubeconfig);
    expect(managedServices.code, output(managedServices)).to.equal(0);
    const api = (JSON.parse(managedServices.stdout) as { items: ServiceObject[] }).items.find(
      (item) => item.metadata.name === service,
    );
    expect(api, `Service ${service} on cell-remote`).to.not.equal(undefined);
    expect(api?.spec?.type).to.equal('NodePort');

    const hubClusters = await get('clusters.k3k.io');
    expect(hubClusters.code, output(hubClusters)).to.equal(0);
    expect(
      (JSON.parse(hubClusters.stdout) as { items: unknown[] }).items,
      'k3k Clusters on the hub',
    ).to.deep.equal([]);
    const hubServices = await get('services');
    expect(hubServices.code, output(hubServices)).to.equal(0);
    expect(
      (JSON.parse(hubServices.stdout) as { items: ServiceObject[] }).items.map(
        (item) => item.metadata.name,
      ),
      'Services on the hub',
    ).to.not.include(service);

    const onHub = await local.kubectl([
      'get',
      'virtualcluster',
      name,
      '-n',
      namespace,
      '-o',
      'json',
    ]);
    expect(onHub.code, output(onHub)).to.equal(0);
    const endpoint = (JSON.parse(onHub.stdout) as { status?: { endpoint?: { port?: number } } })
      .status?.endpoint;
    expect(endpoint?.port, onHub.stdout).to.equal(api?.spec?.ports?.[0]?.nodePort);
  });

  it('local-down stops every process, the OCM hub, cell-remote and the cell agent included, and removes the state', async function () {
    this.timeout(120_000);
    local.requireUp();
    local.recordProcesses();
    expect(
      local.seen.map((process) => process.name),
      'the cell agent ran (so its process is checked below)',
    ).to.include(CELL_AGENT_PROCESS);
    const down = await local.expectDownStopsAll();
    expect(down.stdout).to.include(
      `--remote: the OCM hub, the managed cluster ${MANAGED_CLUSTER} (control plane, OCM's agents, the cell agent) stopped with it`,
    );
    for (const file of [managedKubeconfig, sampleFile, path.join(local.localDir, 'remote')]) {
      expect(existsSync(file), file).to.equal(false);
    }
    // The supervisor stopped the cell agent and the simulations first, then the servers.
    const log = local.supervisorLog();
    const agentStopped = log.indexOf(`${MANAGED_CLUSTER}: cell agent and simulation stopped`);
    expect(agentStopped, log).to.be.greaterThan(-1);
    expect(
      log.indexOf(`OCM, ${MANAGED_CLUSTER}, hook server, Metacontroller and control plane stopped`),
    ).to.be.greaterThan(agentStopped);
  });

  it('local-down again says it is not running and succeeds', async function () {
    this.timeout(60_000);
    await local.expectDownAgainNotRunning();
  });
});
