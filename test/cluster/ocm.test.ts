// Smoke test of the real OCM components the remote-Cell scenarios run on (ocm.ts): a hub control
// plane with OCM's registration controller and work manager, a managed control plane with the
// registration and work agents joined as `cell-remote`, all built from the pinned archive. What a
// user of OCM would check with kubectl: the cluster is Joined and Available from the agent's own
// lease; a ManifestWork created on the hub lands on the managed apiserver and reports Applied,
// Available and JSONPath status feedback; deleting it removes what it applied; stopping the
// agents turns the cluster Available=Unknown within 5 lease durations, restarting them True again.
// Then KubeCell's stack on the real hub (`ocmHub: 'real'`): its Metacontroller and hook server
// hold no route to the managed cluster.
import { expect } from 'chai';
import type { ControlPlane } from '../../harness/cluster/control-plane.js';
import { upstreamCrdFiles } from '../../harness/cluster/crds.js';
import { kubectlOk } from '../../harness/cluster/kubecell.js';
import { startKubeCellStack, type KubeCellStack } from '../../harness/cluster/kubecell-stack.js';
import {
  kubeconfigServers,
  managedClusterCondition,
  startOcmTestbed,
  type OcmTestbed,
} from '../../harness/cluster/ocm.js';
import { poll, type PollOutcome } from '../../harness/poll.js';
import { CLUSTER_SETUP_TIMEOUT_MS } from './shared-cluster.js';

const CLUSTER = 'cell-remote';
const LEASE_SECONDS = 2;
/** OCM's hub judges a lease stale after 5 lease durations (pkg/registration/hub/lease/controller.go). */
const STALE_AFTER_SECONDS = 5 * LEASE_SECONDS;
/** Scheduling, the hub's requeue and our polling on a loaded 2-core machine. */
const SLACK_SECONDS = 15;

interface WorkStatus {
  status?: {
    conditions?: { type: string; status: string; reason?: string }[];
    resourceStatus?: {
      manifests?: {
        resourceMeta: { resource?: string; name?: string };
        conditions?: { type: string; status: string }[];
        statusFeedback?: {
          values?: {
            name: string;
            fieldValue: { type: string; string?: string; integer?: number };
          }[];
        };
      }[];
    };
  };
}

const SMOKE_NAMESPACE = 'ocm-smoke';
/** Written on the managed cluster by someone else (as KubeCell's cell agent writes its report). */
const AGENT_REPORT = { namespace: 'default', name: 'smoke-agent-report' };

/**
 * A ManifestWork with a namespace, a ConfigMap and a NodePort Service, and feedback of both; and
 * a ReadOnly ConfigMap the work agent only reads feedback from (UpdateStrategy ReadOnly: OCM
 * pkg/work/spoke/apply/read_only_apply.go applies nothing).
 */
function smokeWork(report: string): unknown {
  return {
    apiVersion: 'work.open-cluster-management.io/v1',
    kind: 'ManifestWork',
    metadata: { name: 'smoke', namespace: CLUSTER },
    spec: {
      workload: {
        manifests: [
          { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SMOKE_NAMESPACE } },
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'smoke-report', namespace: SMOKE_NAMESPACE },
            data: { report },
          },
          {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: 'smoke', namespace: SMOKE_NAMESPACE },
            spec: { type: 'NodePort', ports: [{ port: 80, protocol: 'TCP' }] },
          },
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...AGENT_REPORT } },
        ],
      },
      manifestConfigs: [
        {
          resourceIdentifier: {
            group: '',
            resource: 'configmaps',
            namespace: SMOKE_NAMESPACE,
            name: 'smoke-report',
          },
          feedbackRules: [
            { type: 'JSONPaths', jsonPaths: [{ name: 'report', path: '.data.report' }] },
          ],
        },
        {
          resourceIdentifier: {
            group: '',
            resource: 'services',
            namespace: SMOKE_NAMESPACE,
            name: 'smoke',
          },
          feedbackRules: [
            {
              type: 'JSONPaths',
              jsonPaths: [{ name: 'nodePort', path: '.spec.ports[0].nodePort' }],
            },
          ],
        },
        {
          resourceIdentifier: { group: '', resource: 'configmaps', ...AGENT_REPORT },
          updateStrategy: { type: 'ReadOnly' },
          feedbackRules: [
            { type: 'JSONPaths', jsonPaths: [{ name: 'agentReport', path: '.data.report' }] },
          ],
        },
      ],
    },
  };
}

/** The feedback value `name` of whichever manifest reports it. */
function feedback(
  work: WorkStatus,
  name: string,
): { type: string; string?: string; integer?: number } | undefined {
  return (work.status?.resourceStatus?.manifests ?? [])
    .flatMap((manifest) => manifest.statusFeedback?.values ?? [])
    .find((value) => value.name === name)?.fieldValue;
}

async function getWork(hub: ControlPlane): Promise<WorkStatus> {
  return JSON.parse(
    await kubectlOk(hub, ['get', 'manifestwork', 'smoke', '-n', CLUSTER, '-o', 'json']),
  ) as WorkStatus;
}

async function seconds<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await work();
  return [value, (performance.now() - started) / 1000];
}

describe('real OCM: hub and managed cluster cell-remote, built from the pinned archive', function () {
  let bed: OcmTestbed;
  let failed = false;

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    const [started, total] = await seconds(() =>
      startOcmTestbed({ managedCluster: { name: CLUSTER, leaseDurationSeconds: LEASE_SECONDS } }),
    );
    bed = started;
    console.log(
      `      hub control plane ${bed.hubCluster.startupSeconds.toFixed(1)} s, OCM hub ${bed.hub.startupSeconds.toFixed(1)} s, ` +
        `managed control plane ${bed.managedCluster.controlPlaneSeconds.toFixed(1)} s, join ${bed.managedCluster.joinSeconds.toFixed(1)} s; ` +
        `${total.toFixed(1)} s in all`,
    );
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true;
  });
  after(async function () {
    this.timeout(120_000);
    await bed?.stop({ keepLogs: failed });
  });

  it('cell-remote is Joined and Available, its lease renewed by the real agent; the hub knows no URL of it', async function () {
    this.timeout(60_000);
    const hub = bed.hubCluster;
    for (const type of [
      'HubAcceptedManagedCluster',
      'ManagedClusterJoined',
      'ManagedClusterConditionAvailable',
    ]) {
      expect(await managedClusterCondition(hub, CLUSTER, type), type).to.include({
        status: 'True',
      });
    }
    const renewTime = async (): Promise<number> =>
      Date.parse(
        await kubectlOk(hub, [
          'get',
          'lease',
          'managed-cluster-lease',
          '-n',
          CLUSTER,
          '-o',
          'jsonpath={.spec.renewTime}',
        ]),
      );
    const first = await renewTime();
    await poll(
      'the agent renewing managed-cluster-lease again',
      async () => ((await renewTime()) > first ? { value: true } : { notYet: 'not renewed yet' }),
      { timeoutMs: 4 * LEASE_SECONDS * 1000, intervalMs: 500 },
    );
    const cluster = JSON.parse(
      await kubectlOk(hub, ['get', 'managedclusters', CLUSTER, '-o', 'json']),
    ) as { spec: { leaseDurationSeconds?: number; managedClusterClientConfigs?: unknown[] } };
    expect(cluster.spec.leaseDurationSeconds).to.equal(LEASE_SECONDS);
    expect(cluster.spec.managedClusterClientConfigs ?? []).to.deep.equal([]);
  });

  it('a ManifestWork on the hub lands on the managed apiserver: Applied, Available, String and Integer feedback, ReadOnly feedback', async function () {
    this.timeout(120_000);
    const hub = bed.hubCluster;
    const managed = bed.managedCluster.cluster;
    const writeAgentReport = (report: string): Promise<string> =>
      kubectlOk(
        managed,
        ['apply', '--server-side', '--field-manager=smoke-agent', '-f', '-'],
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: AGENT_REPORT,
          data: { report },
        }),
      );
    await writeAgentReport('written on the managed cluster');
    const [, applySeconds] = await seconds(async () => {
      await kubectlOk(hub, ['apply', '-f', '-'], JSON.stringify(smokeWork('hello from the hub')));
      await poll(
        'the ConfigMap on the managed apiserver',
        async () => {
          const result = await managed.kubectl([
            'get',
            'configmap',
            'smoke-report',
            '-n',
            SMOKE_NAMESPACE,
            '-o',
            'jsonpath={.data.report}',
          ]);
          return result.stdout === 'hello from the hub'
            ? { value: true }
            : { notYet: result.stderr.trim() || result.stdout };
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
    });
    // The hub's own apiserver has no such namespace: the work landed only on the managed cluster.
    expect((await hub.kubectl(['get', 'namespace', SMOKE_NAMESPACE])).code).to.not.equal(0);
    const nodePort = Number(
      await kubectlOk(managed, [
        'get',
        'service',
        'smoke',
        '-n',
        SMOKE_NAMESPACE,
        '-o',
        'jsonpath={.spec.ports[0].nodePort}',
      ]),
    );
    expect(nodePort).to.be.greaterThan(0);
    let work: WorkStatus = {};
    const [, feedbackSeconds] = await seconds(() =>
      poll(
        'Applied, Available and the feedback of ManifestWork smoke',
        async () => {
          work = await getWork(hub);
          const conditions = Object.fromEntries(
            (work.status?.conditions ?? []).map((condition) => [condition.type, condition.status]),
          );
          return conditions.Applied === 'True' &&
            conditions.Available === 'True' &&
            ['report', 'nodePort', 'agentReport'].every((name) => feedback(work, name))
            ? { value: true }
            : { notYet: JSON.stringify(work.status ?? {}).slice(0, 400) };
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      ),
    );
    expect(feedback(work, 'report')).to.deep.equal({
      type: 'String',
      string: 'hello from the hub',
    });
    expect(feedback(work, 'nodePort')).to.deep.equal({ type: 'Integer', integer: nodePort });
    expect(feedback(work, 'agentReport')).to.deep.equal({
      type: 'String',
      string: 'written on the managed cluster',
    });
    console.log(
      `      on the managed apiserver ${applySeconds.toFixed(1)} s after apply; feedback ${feedbackSeconds.toFixed(1)} s later`,
    );

    // The ReadOnly ConfigMap is the managed cluster's: a change there comes back as feedback with
    // a later status sync, and the work agent writes nothing back.
    await writeAgentReport('changed on the managed cluster');
    const [, changeSeconds] = await seconds(() =>
      poll(
        'the changed report as feedback',
        async () => {
          const value = feedback(await getWork(hub), 'agentReport')?.string;
          return value === 'changed on the managed cluster'
            ? { value: true }
            : { notYet: String(value) };
        },
        { timeoutMs: 30_000, intervalMs: 500 },
      ),
    );
    expect(
      await kubectlOk(managed, [
        'get',
        'configmap',
        AGENT_REPORT.name,
        '-n',
        AGENT_REPORT.namespace,
        '-o',
        'jsonpath={.data.report}',
      ]),
    ).to.equal('changed on the managed cluster');
    console.log(
      `      a change of the ReadOnly ConfigMap fed back in ${changeSeconds.toFixed(1)} s`,
    );
  });

  it('deleting the ManifestWork on the hub removes what it applied from the managed cluster, not the ReadOnly ConfigMap', async function () {
    this.timeout(120_000);
    const hub = bed.hubCluster;
    const managed = bed.managedCluster.cluster;
    const [, deleteSeconds] = await seconds(async () => {
      await kubectlOk(hub, ['delete', 'manifestwork', 'smoke', '-n', CLUSTER, '--wait=true']);
      await poll(
        'ConfigMap and namespace gone from the managed cluster',
        async () => {
          const result = await managed.kubectl(['get', 'namespace', SMOKE_NAMESPACE, '-o', 'name']);
          return result.code !== 0 && result.stderr.includes('NotFound')
            ? { value: true }
            : { notYet: result.stdout };
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
    });
    console.log(`      work and its objects gone in ${deleteSeconds.toFixed(1)} s`);
    const agentReport = await managed.kubectl([
      'get',
      'configmap',
      AGENT_REPORT.name,
      '-n',
      AGENT_REPORT.namespace,
    ]);
    expect(agentReport.code, agentReport.stderr).to.equal(0);
  });

  it('stopping the agents turns Available Unknown (ManagedClusterLeaseUpdateStopped) within 5 lease durations; restarting turns it True', async function () {
    this.timeout(180_000);
    const hub = bed.hubCluster;
    const available = async (status: string): Promise<PollOutcome<true>> => {
      const condition = await managedClusterCondition(
        hub,
        CLUSTER,
        'ManagedClusterConditionAvailable',
      );
      if (typeof condition === 'string') return { notYet: condition };
      return condition.status === status
        ? { value: true }
        : { notYet: `${condition.status} ${condition.reason ?? ''}` };
    };
    await bed.managedCluster.stopAgents();
    expect(bed.managedCluster.agents()).to.equal(undefined);
    const [, staleSeconds] = await seconds(() =>
      poll('Available=Unknown', () => available('Unknown'), {
        timeoutMs: (STALE_AFTER_SECONDS + SLACK_SECONDS) * 1000,
        intervalMs: 500,
      }),
    );
    expect(
      await managedClusterCondition(hub, CLUSTER, 'ManagedClusterConditionAvailable'),
    ).to.include({
      status: 'Unknown',
      reason: 'ManagedClusterLeaseUpdateStopped',
    });
    const [, recoverSeconds] = await seconds(async () => {
      await bed.managedCluster.startAgents();
      await poll('Available=True again', () => available('True'), {
        timeoutMs: (STALE_AFTER_SECONDS + SLACK_SECONDS) * 1000,
        intervalMs: 500,
      });
    });
    expect(bed.managedCluster.agents()).to.not.equal(undefined);
    console.log(
      `      Unknown ${staleSeconds.toFixed(1)} s after the agents stopped (lease ${LEASE_SECONDS} s, ` +
        `stale after ${STALE_AFTER_SECONDS} s); True ${recoverSeconds.toFixed(1)} s after restarting them`,
    );
  });
});

describe("KubeCell on the real OCM hub (ocmHub: 'real') with cell-remote joined", function () {
  let stack: KubeCellStack;
  let failed = false;

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    stack = await startKubeCellStack({
      ocmHub: 'real',
      ocmManagedCluster: {
        name: CLUSTER,
        leaseDurationSeconds: LEASE_SECONDS,
        // What a ManifestWork carrying a k3k Cluster needs on the managed cluster.
        extraCrdFiles: upstreamCrdFiles().filter((file) => file.endsWith('k3k.io_clusters.yaml')),
      },
      provisioners: ['kubevirt'],
      webhook: false,
    });
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true;
  });
  after(async function () {
    this.timeout(120_000);
    await stack?.stop({ keepLogs: failed });
  });

  it("serves OCM's own hub CRDs and runs no simulated lease controller; cell-remote is Joined and Available", async function () {
    this.timeout(60_000);
    const hub = stack.cluster;
    // ManagedClusterAddOn comes only with the archive's hub CRDs, not with the shared ones.
    await kubectlOk(hub, ['get', 'crd', 'managedclusteraddons.addon.open-cluster-management.io']);
    expect(stack.ocmHub).to.equal(undefined);
    expect(stack.ocm?.managedCluster?.name).to.equal(CLUSTER);
    for (const type of ['ManagedClusterJoined', 'ManagedClusterConditionAvailable']) {
      expect(await managedClusterCondition(hub, CLUSTER, type), type).to.include({
        status: 'True',
      });
    }
    const managed = stack.ocm?.managedCluster?.cluster;
    if (!managed) throw new Error('no managed cluster in the stack');
    await kubectlOk(managed, ['get', 'crd', 'clusters.k3k.io']);
    // KubeCell's CRDs are the hub's alone.
    expect((await managed.kubectl(['get', 'crd', 'cells.kubecell.io'])).code).to.not.equal(0);
  });

  it('Metacontroller and the hook server hold kubeconfigs of the hub only: no route to the managed apiserver', function () {
    const managedUrl = stack.ocm?.managedCluster?.cluster.apiserverUrl;
    expect(managedUrl).to.be.a('string');
    for (const [component, kubeconfig] of Object.entries(stack.hubComponentKubeconfigs)) {
      const servers = kubeconfigServers(kubeconfig);
      expect(servers, component).to.deep.equal([stack.cluster.apiserverUrl]);
      expect(servers, component).to.not.include(managedUrl);
    }
  });
});
