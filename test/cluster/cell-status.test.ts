// The Cell and plan hooks against objects as the real apiserver serves them, and their status
// accepted by the real status subresource. Metacontroller cannot be built here (the Go module
// proxy refuses it), so this test does not drive a sync loop: it lists the related objects with
// kubectl, calls the pure sync functions, and writes the status they return.
import { expect } from 'chai';
import { stringify } from 'yaml';
import { DEFAULT_CELL_CONFIG } from '../../hooks/cell/config.js';
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
import { listRelated } from './related-objects.js';
import type { ControlPlane } from './control-plane.js';
import { installKubeCellApi, kubectlOk } from './kubecell.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getCluster } from './shared-cluster.js';

const CLUSTER_NAME = 'status-test-cluster';
const PROFILE = 'status-test-a100';

const cellManifest = {
  apiVersion: 'kubecell.io/v1alpha1',
  kind: 'Cell',
  metadata: { name: 'status-test', namespace: 'kubecell-system' },
  spec: {
    managedClusterRef: { name: CLUSTER_NAME },
    machineProfile: { name: PROFILE, devices: [{ name: 'gpu', resourceName: 'nvidia.com/gpu' }] },
  },
};

describe('Cell status from objects served by the real apiserver', function () {
  let cluster: ControlPlane;

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    cluster = await getCluster();
    await installKubeCellApi(cluster);
    // The test plays OCM and the kubelet: a ManagedCluster, its lease, two profile Nodes.
    await kubectlOk(cluster, ['create', 'namespace', CLUSTER_NAME]);
    await kubectlOk(
      cluster,
      ['apply', '-f', '-'],
      stringify({
        apiVersion: 'cluster.open-cluster-management.io/v1',
        kind: 'ManagedCluster',
        metadata: { name: CLUSTER_NAME },
        spec: { hubAcceptsClient: true, leaseDurationSeconds: 60 },
      }),
    );
    await kubectlOk(cluster, [
      'patch',
      'managedcluster',
      CLUSTER_NAME,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          conditions: [
            {
              type: 'ManagedClusterJoined',
              status: 'True',
              reason: 'Joined',
              message: 'joined',
              lastTransitionTime: '2026-11-30T00:00:00Z',
            },
            {
              type: 'ManagedClusterConditionAvailable',
              status: 'True',
              reason: 'Available',
              message: 'available',
              lastTransitionTime: '2026-11-30T00:00:00Z',
            },
          ],
        },
      }),
    ]);
    for (const name of ['status-test-n1', 'status-test-n2']) {
      await kubectlOk(
        cluster,
        ['apply', '-f', '-'],
        stringify({
          apiVersion: 'v1',
          kind: 'Node',
          metadata: {
            name,
            labels: { 'kubecell.io/machine-profile': PROFILE },
            annotations: { 'capacity.topolvm.io/00default': '100Gi' },
          },
        }),
      );
      await kubectlOk(cluster, [
        'patch',
        'node',
        name,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({
          status: {
            capacity: { cpu: '32', memory: '256Gi', 'nvidia.com/gpu': '4', pods: '110' },
            allocatable: { cpu: '31500m', memory: '250Gi', 'nvidia.com/gpu': '4', pods: '110' },
            conditions: [
              {
                type: 'Ready',
                status: 'True',
                reason: 'KubeletReady',
                message: 'ready',
                lastHeartbeatTime: new Date().toISOString(),
                lastTransitionTime: new Date().toISOString(),
              },
            ],
          },
        }),
      ]);
    }
    await kubectlOk(cluster, ['apply', '-f', '-'], stringify(cellManifest));
  });

  async function renewLease(renewTime: Date): Promise<void> {
    await kubectlOk(
      cluster,
      ['apply', '--server-side', '--field-manager=ocm-agent', '-f', '-'],
      stringify({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'managed-cluster-lease', namespace: CLUSTER_NAME },
        spec: {
          holderIdentity: 'registration-agent',
          leaseDurationSeconds: 60,
          renewTime: renewTime.toISOString().replace('Z', '000Z'),
        },
      }),
    );
  }

  async function syncAndWrite(now: Date): Promise<CellStatus> {
    const cell = JSON.parse(
      await kubectlOk(cluster, [
        'get',
        'cell',
        '-n',
        'kubecell-system',
        'status-test',
        '-o',
        'json',
      ]),
    ) as Cell;
    const response = syncCell(
      {
        parent: cell,
        children: {},
        related: await listRelated(cluster, cellRelatedResources(cell, DEFAULT_CELL_CONFIG)),
        finalizing: false,
      },
      DEFAULT_CELL_CONFIG,
      now,
    );
    await kubectlOk(cluster, [
      'patch',
      'cell',
      '-n',
      'kubecell-system',
      'status-test',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: response.status }),
    ]);
    return JSON.parse(
      await kubectlOk(cluster, [
        'get',
        'cell',
        '-n',
        'kubecell-system',
        'status-test',
        '-o',
        'jsonpath={.status}',
      ]),
    ) as CellStatus;
  }

  it('reads a fresh lease and real Nodes, and the apiserver stores the whole status', async function () {
    this.timeout(60_000);
    const now = new Date();
    await renewLease(now);
    const stored = await syncAndWrite(now);
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
      'kubecell-system',
      'status-test',
      '--no-headers',
    ]);
    expect(columns).to.contain('Provisioning');
  });

  it('turns Degraded when the lease is not renewed for 5 lease durations', async function () {
    this.timeout(60_000);
    const now = new Date();
    await renewLease(new Date(now.getTime() - 301_000));
    const stored = await syncAndWrite(now);
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
    await syncAndWrite(now);
    await kubectlOk(
      cluster,
      ['apply', '-f', '-'],
      stringify({
        apiVersion: 'kubecell.io/v1alpha1',
        kind: 'VirtualNodeClass',
        metadata: { name: 'status-test-too-big' },
        spec: {
          storageClassName: 'topolvm-provisioner',
          entitlement: { workloadHard: { 'requests.nvidia.com/gpu': '9' } },
        },
      }),
    );
    const plan = {
      apiVersion: 'kubecell.io/v1alpha1',
      kind: 'VirtualClusterPlan',
      metadata: { name: 'status-test-plan', namespace: 'tenant-a' },
      spec: { cellRef: { name: 'status-test' }, classRef: { name: 'status-test-too-big' } },
    };
    await kubectlOk(cluster, ['apply', '-f', '-'], stringify(plan));
    const stored = JSON.parse(
      await kubectlOk(cluster, ['get', 'vcp', '-n', 'tenant-a', 'status-test-plan', '-o', 'json']),
    ) as VirtualClusterPlan;
    const rules = customizePlan(
      { parent: stored },
      { cellNamespace: 'kubecell-system' },
    ).relatedResources;
    const response = syncPlan(
      {
        parent: stored,
        children: {},
        related: await listRelated(cluster, rules),
        finalizing: false,
      },
      loadPlanConfig({}),
      now,
    );
    await kubectlOk(cluster, [
      'patch',
      'vcp',
      '-n',
      'tenant-a',
      'status-test-plan',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: response.status }),
    ]);
    const written = JSON.parse(
      await kubectlOk(cluster, [
        'get',
        'vcp',
        '-n',
        'tenant-a',
        'status-test-plan',
        '-o',
        'jsonpath={.status}',
      ]),
    ) as VirtualClusterPlanStatus;
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
    const template = (app: string) => ({
      selector: { matchLabels: { app } },
      template: {
        metadata: { labels: { app } },
        spec: { containers: [{ name: app, image: `example.invalid/${app}:v1.1.0` }] },
      },
    });
    await kubectlOk(
      cluster,
      ['apply', '-f', '-'],
      stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: k3kController,
        spec: template('k3k'),
      }),
    );
    await kubectlOk(cluster, [
      'patch',
      'deployment',
      '-n',
      k3kController.namespace,
      k3kController.name,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          replicas: 1,
          readyReplicas: 1,
          availableReplicas: 1,
          conditions: [
            {
              type: 'Available',
              status: 'True',
              reason: 'MinimumReplicasAvailable',
              message: 'ok',
            },
          ],
        },
      }),
    ]);
    for (const daemonSet of [cniDaemonSet, topolvmNodeDaemonSet]) {
      await kubectlOk(
        cluster,
        ['apply', '-f', '-'],
        stringify({
          apiVersion: 'apps/v1',
          kind: 'DaemonSet',
          metadata: daemonSet,
          spec: template(daemonSet.name),
        }),
      );
      await kubectlOk(cluster, [
        'patch',
        'daemonset',
        '-n',
        daemonSet.namespace,
        daemonSet.name,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({
          status: {
            desiredNumberScheduled: 2,
            numberReady: 2,
            currentNumberScheduled: 2,
            numberMisscheduled: 0,
          },
        }),
      ]);
    }
    const now = new Date();
    await renewLease(now);
    const cell = JSON.parse(
      await kubectlOk(cluster, [
        'get',
        'cell',
        '-n',
        'kubecell-system',
        'status-test',
        '-o',
        'json',
      ]),
    ) as Cell;
    const cellResponse = syncCell(
      {
        parent: cell,
        children: {},
        related: await listRelated(cluster, cellRelatedResources(cell, config)),
        finalizing: false,
      },
      config,
      now,
    );
    await kubectlOk(cluster, [
      'patch',
      'cell',
      '-n',
      'kubecell-system',
      'status-test',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: cellResponse.status }),
    ]);
    expect((cellResponse.status as CellStatus).phase).to.equal('Ready');

    await kubectlOk(
      cluster,
      ['apply', '-f', '-'],
      stringify({
        apiVersion: 'kubecell.io/v1alpha1',
        kind: 'VirtualNodeClass',
        metadata: { name: 'status-test-fits' },
        spec: {
          storageClassName: 'topolvm-provisioner',
          entitlement: {
            workloadHard: {
              'requests.cpu': '8',
              'requests.nvidia.com/gpu': '2',
              'requests.storage': '50Gi',
            },
          },
        },
      }),
    );
    await kubectlOk(
      cluster,
      ['apply', '-f', '-'],
      stringify({
        apiVersion: 'kubecell.io/v1alpha1',
        kind: 'VirtualClusterPlan',
        metadata: { name: 'status-test-fits', namespace: 'tenant-b' },
        spec: { cellRef: { name: 'status-test' }, classRef: { name: 'status-test-fits' } },
      }),
    );
    const plan = JSON.parse(
      await kubectlOk(cluster, ['get', 'vcp', '-n', 'tenant-b', 'status-test-fits', '-o', 'json']),
    ) as VirtualClusterPlan;
    const rules = customizePlan(
      { parent: plan },
      { cellNamespace: 'kubecell-system' },
    ).relatedResources;
    const response = syncPlan(
      { parent: plan, children: {}, related: await listRelated(cluster, rules), finalizing: false },
      loadPlanConfig({}),
      now,
    );
    await kubectlOk(cluster, [
      'patch',
      'vcp',
      '-n',
      'tenant-b',
      'status-test-fits',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: response.status }),
    ]);
    const written = JSON.parse(
      await kubectlOk(cluster, [
        'get',
        'vcp',
        '-n',
        'tenant-b',
        'status-test-fits',
        '-o',
        'jsonpath={.status}',
      ]),
    ) as VirtualClusterPlanStatus;
    expect(written.decision, JSON.stringify(written.checks)).to.equal('Accepted');
  });
});
