// The Cell and plan hooks against objects as the real apiserver serves them, and their status
// accepted by the real status subresource. Metacontroller cannot be built here (the Go module
// proxy refuses it), so this test does not drive a sync loop: it lists the related objects with
// kubectl, calls the pure sync functions, and writes the status they return.
import { expect } from 'chai';
import { DEFAULT_CELL_CONFIG, type CellControllerConfig } from '../../hooks/cell/config.js';
import { cellRelatedResources } from '../../hooks/cell/customize.js';
import { syncCell } from '../../hooks/cell/hooks.js';
import type {
  Cell,
  CellStatus,
  VirtualClusterPlan,
  VirtualClusterPlanStatus,
} from '../../hooks/generated/types/index.js';
import { loadPlanConfig } from '../../hooks/plan/config.js';
import { customizePlan } from '../../hooks/plan/customize.js';
import { syncPlan } from '../../hooks/plan/sync.js';
import type { ControlPlane } from './control-plane.js';
import { applyObject, getObject, installKubeCellApi, kubectlOk, writeStatus } from './kubecell.js';
import { listRelated } from './related-objects.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getCluster } from './shared-cluster.js';

const CLUSTER_NAME = 'status-test-cluster';
const PROFILE = 'status-test-a100';
const CELL = 'status-test';
const CONTROLLER_NAMESPACE = 'kubecell-system';

const readyCondition = (type: string, reason: string) => ({
  type,
  status: 'True',
  reason,
  message: reason,
  lastTransitionTime: '2026-11-30T00:00:00Z',
});

describe('Cell status from objects served by the real apiserver', function () {
  let cluster: ControlPlane;

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    cluster = await getCluster();
    await installKubeCellApi(cluster);
    // The test plays OCM and the kubelet: a ManagedCluster, its lease, two profile Nodes.
    await kubectlOk(cluster, ['create', 'namespace', CLUSTER_NAME]);
    await applyObject(cluster, {
      apiVersion: 'cluster.open-cluster-management.io/v1',
      kind: 'ManagedCluster',
      metadata: { name: CLUSTER_NAME },
      spec: { hubAcceptsClient: true, leaseDurationSeconds: 60 },
    });
    await writeStatus(cluster, 'managedcluster', CLUSTER_NAME, undefined, {
      conditions: [
        readyCondition('ManagedClusterJoined', 'Joined'),
        readyCondition('ManagedClusterConditionAvailable', 'Available'),
      ],
    });
    for (const name of ['status-test-n1', 'status-test-n2']) {
      await applyObject(cluster, {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name,
          labels: { 'kubecell.io/machine-profile': PROFILE },
          annotations: { 'capacity.topolvm.io/00default': '100Gi' },
        },
      });
      await writeStatus(cluster, 'node', name, undefined, {
        capacity: { cpu: '32', memory: '256Gi', 'nvidia.com/gpu': '4', pods: '110' },
        allocatable: { cpu: '31500m', memory: '250Gi', 'nvidia.com/gpu': '4', pods: '110' },
        conditions: [
          {
            ...readyCondition('Ready', 'KubeletReady'),
            lastHeartbeatTime: new Date().toISOString(),
          },
        ],
      });
    }
    await applyObject(cluster, {
      apiVersion: 'kubecell.io/v1alpha1',
      kind: 'Cell',
      metadata: { name: CELL, namespace: CONTROLLER_NAMESPACE },
      spec: {
        managedClusterRef: { name: CLUSTER_NAME },
        machineProfile: {
          name: PROFILE,
          devices: [{ name: 'gpu', resourceName: 'nvidia.com/gpu' }],
        },
      },
    });
  });

  async function renewLease(renewTime: Date): Promise<void> {
    await applyObject(
      cluster,
      {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'managed-cluster-lease', namespace: CLUSTER_NAME },
        spec: {
          holderIdentity: 'registration-agent',
          leaseDurationSeconds: 60,
          renewTime: renewTime.toISOString().replace('Z', '000Z'),
        },
      },
      'ocm-agent',
    );
  }

  async function syncCellAndWrite(
    now: Date,
    config: CellControllerConfig = DEFAULT_CELL_CONFIG,
  ): Promise<CellStatus> {
    const cell = await getObject<Cell>(cluster, 'cell', CELL, CONTROLLER_NAMESPACE);
    const related = await listRelated(cluster, cellRelatedResources(cell, config));
    const { status } = syncCell(
      { parent: cell, children: {}, related, finalizing: false },
      config,
      now,
    );
    return writeStatus<CellStatus>(cluster, 'cell', CELL, CONTROLLER_NAMESPACE, status);
  }

  async function planAndWrite(
    name: string,
    namespace: string,
    className: string,
    now: Date,
  ): Promise<VirtualClusterPlanStatus> {
    await applyObject(cluster, {
      apiVersion: 'kubecell.io/v1alpha1',
      kind: 'VirtualClusterPlan',
      metadata: { name, namespace },
      spec: { cellRef: { name: CELL }, classRef: { name: className } },
    });
    const plan = await getObject<VirtualClusterPlan>(cluster, 'vcp', name, namespace);
    const rules = customizePlan(
      { parent: plan },
      { cellNamespace: CONTROLLER_NAMESPACE },
    ).relatedResources;
    const related = await listRelated(cluster, rules);
    const { status } = syncPlan(
      { parent: plan, children: {}, related, finalizing: false },
      loadPlanConfig({}),
      now,
    );
    return writeStatus<VirtualClusterPlanStatus>(cluster, 'vcp', name, namespace, status);
  }

  const applyClass = (name: string, workloadHard: Record<string, string>) =>
    applyObject(cluster, {
      apiVersion: 'kubecell.io/v1alpha1',
      kind: 'VirtualNodeClass',
      metadata: { name },
      spec: { storageClassName: 'topolvm-provisioner', entitlement: { workloadHard } },
    });

  it('reads a fresh lease and real Nodes, and the apiserver stores the whole status', async function () {
    this.timeout(60_000);
    const now = new Date();
    await renewLease(now);
    const stored = await syncCellAndWrite(now);
    expect(stored.managedCluster).to.include({
      name: CLUSTER_NAME,
      joined: true,
      leaseFresh: true,
    });
    expect(stored.inventory?.['nvidia.com/gpu']).to.include({ allocatable: '8' });
    expect(stored.inventory?.['cpu']).to.include({ allocatable: '63' });
    expect(stored.storageInventory).to.include({ freeCapacity: '200Gi', freeCapacityKnown: true });
    // No k3k, CNI or TopoLVM runs here, so the Cell truthfully waits for its provider baseline.
    expect(stored.phase).to.equal('Provisioning');
    const columns = await kubectlOk(cluster, [
      'get',
      'cells',
      '-n',
      CONTROLLER_NAMESPACE,
      CELL,
      '--no-headers',
    ]);
    expect(columns).to.contain('Provisioning');
  });

  it('turns Degraded when the lease is not renewed for 5 lease durations', async function () {
    this.timeout(60_000);
    const now = new Date();
    await renewLease(new Date(now.getTime() - 301_000));
    const stored = await syncCellAndWrite(now);
    expect(stored.phase).to.equal('Degraded');
    expect(stored.conditions?.find((c) => c.type === 'LeaseFresh')).to.include({
      status: 'False',
      reason: 'LeaseStale',
    });
  });

  it('computes a plan decision from the stored Cell, and the apiserver stores it', async function () {
    this.timeout(60_000);
    const now = new Date();
    await renewLease(now);
    await syncCellAndWrite(now);
    await applyClass('status-test-too-big', { 'requests.nvidia.com/gpu': '9' });
    const written = await planAndWrite('status-test-plan', 'tenant-a', 'status-test-too-big', now);
    expect(written.decision).to.equal('Rejected');
    const gpu = written.checks?.find(
      (check) => check.name === 'Capacity' && check.resource === 'nvidia.com/gpu',
    );
    expect(gpu).to.include({ result: 'Fail', required: '9' });
  });

  it('is Ready once the provider baseline reports ready, and a plan that fits is Accepted', async function () {
    this.timeout(90_000);
    // Only clusters.k3k.io is among the upstream CRDs available here.
    const config = { ...DEFAULT_CELL_CONFIG, k3kCRDs: ['clusters.k3k.io'] };
    const { k3kController, cniDaemonSet, topolvmNodeDaemonSet } = config;
    for (const namespace of new Set([
      k3kController.namespace,
      cniDaemonSet.namespace,
      topolvmNodeDaemonSet.namespace,
    ])) {
      await cluster.kubectl(['create', 'namespace', namespace]);
    }
    const workload = (kind: string, where: { namespace: string; name: string }) => ({
      apiVersion: 'apps/v1',
      kind,
      metadata: where,
      spec: {
        selector: { matchLabels: { app: where.name } },
        template: {
          metadata: { labels: { app: where.name } },
          spec: {
            containers: [{ name: where.name, image: `example.invalid/${where.name}:v1.1.0` }],
          },
        },
      },
    });
    await applyObject(cluster, workload('Deployment', k3kController));
    await writeStatus(cluster, 'deployment', k3kController.name, k3kController.namespace, {
      replicas: 1,
      readyReplicas: 1,
      availableReplicas: 1,
      conditions: [
        { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'ok' },
      ],
    });
    for (const daemonSet of [cniDaemonSet, topolvmNodeDaemonSet]) {
      await applyObject(cluster, workload('DaemonSet', daemonSet));
      await writeStatus(cluster, 'daemonset', daemonSet.name, daemonSet.namespace, {
        desiredNumberScheduled: 2,
        numberReady: 2,
        currentNumberScheduled: 2,
        numberMisscheduled: 0,
      });
    }
    const now = new Date();
    await renewLease(now);
    expect((await syncCellAndWrite(now, config)).phase).to.equal('Ready');

    await applyClass('status-test-fits', {
      'requests.cpu': '8',
      'requests.nvidia.com/gpu': '2',
      'requests.storage': '50Gi',
    });
    const written = await planAndWrite('status-test-fits', 'tenant-b', 'status-test-fits', now);
    expect(written.decision, JSON.stringify(written.checks)).to.equal('Accepted');
  });
});
