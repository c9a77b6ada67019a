// GPUCellPool with Cluster API through the real Metacontroller, on a control plane that serves
// only Cluster API's kinds (the real Machine, KubeadmConfig, KubeadmConfigTemplate and
// KubevirtMachineTemplate CRDs pinned in test/cluster/upstream-inputs.json; a permissive
// stand-in, labelled as such, for KubevirtMachine, which no pinned CRD defines; no KubeVirt
// CRD), with only the kubecell-gpucellpool-cluster-api component installed. A platform engineer
// creates the templates of the samples and a pool, and checks with kubectl what it did: the
// Machines and their KubeadmConfig and KubevirtMachine, which Cluster API can take over; the
// cells' Nodes adopted (READY); a stale Node reaped; a cell retired by cordon and taint, with no
// pod ever evicted.
//
// The test plays only Cluster API and the cells' kubelets (test/simulate/cluster-api.ts: the
// Machine's providerID and status, the Node each cell registers from its KubeadmConfig; and here,
// the Machine controller making the Machine the controller of its bootstrap config and
// infrastructure machine, as `ensureExternalOwnershipAndWatch` does), a kubelet that registers a
// stale Node, and the tenant's pods. Everything the pool does is Metacontroller calling the hooks.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import {
  isPoolMachine,
  registerNode,
  startSimulation,
  type Simulation,
} from '../../simulate/index.js';
import { CLUSTER_SETUP_TIMEOUT_MS } from '../shared-cluster.js';
import {
  METACONTROLLER_USER,
  auditedPodRequests,
  cellsOf,
  conditionsLine,
  consumerPod,
  controllerRefOf,
  endPod,
  eventuallyColumns,
  isRetiring,
  poolColumns,
  poolNodeLabels,
  samplesIn,
  startAuditedStack,
  type AuditedStack,
  type CellStatus,
  type NodeObject,
} from './gpucellpool-support.js';
import {
  apply,
  conditionOf,
  eventually,
  eventuallyGone,
  getObject,
  hookCalls,
  kubectl,
  listObjects,
  uniqueName,
  type ObjectWithStatus,
} from './support.js';

const PROFILE = 'e2e-a100';
const KUBEADM_CONFIGS = 'kubeadmconfigs.bootstrap.cluster.x-k8s.io';
const KUBEVIRT_MACHINES = 'kubevirtmachines.infrastructure.cluster.x-k8s.io';
const MACHINES = 'machines.cluster.x-k8s.io';
/** What Metacontroller v4.17.2 got from the apiserver for clones it made controller of twice. */
const SECOND_CONTROLLER = 'Only one reference can have Controller set to true';

describe('e2e: GPUCellPool on Cluster API through Metacontroller', function () {
  this.timeout(300_000);
  let audited: AuditedStack;
  let simulation: Simulation | undefined;
  /** Machines the simulated Cluster API does not bring up until the test lets it. */
  const held = new Set<string>();
  const namespace = uniqueName('e2e-capi-cells');
  const tenants = uniqueName('e2e-gpu-tenant');
  const poolName = uniqueName('capi');
  const cell = (ordinal: number) => `${poolName}-${ordinal}`;

  const stack = () => audited.stack;
  const pool = async (): Promise<ObjectWithStatus> => {
    const object = await getObject(stack(), 'gpucellpool', poolName);
    if (!object) throw new Error(`gpucellpool ${poolName} does not exist`);
    return object;
  };
  /** samples/36-gpucellpool-clusterapi.yaml, renamed, in the test's namespace. */
  const poolObject = (replicas: number) => {
    const sample = samplesIn('36-gpucellpool-clusterapi.yaml', namespace)[0] as {
      metadata: Record<string, unknown>;
      spec: Record<string, unknown>;
    };
    return {
      ...sample,
      // No kubecell.io/provisioner label: the admission webhook sets it from the type.
      metadata: { name: poolName },
      spec: { ...sample.spec, replicas, machineProfile: PROFILE, namespace },
    };
  };
  const node = (name: string) =>
    getObject(stack(), 'node', name) as Promise<NodeObject | undefined>;
  const machineNames = async () =>
    (await listObjects(stack(), MACHINES, { namespace })).map((m) => m.metadata.name).sort();
  const cellNamed = async (name: string) => cellsOf(await pool()).find((c) => c.name === name);

  /**
   * What Cluster API's Machine controller does with the bootstrap config and infrastructure
   * machine a Machine names (`ensureExternalOwnershipAndWatch`,
   * internal/controllers/machine/machine_controller_phases.go): it makes the Machine their
   * controller with `controllerutil.SetControllerReference`, which fails while another owner
   * reference is the controller.
   */
  async function machineControllerTakesOver(resource: string, name: string): Promise<void> {
    const machine = await getObject(stack(), MACHINES, name, namespace);
    const object = await getObject(stack(), resource, name, namespace);
    if (!machine || !object) throw new Error(`${resource} ${name} or its Machine is missing`);
    const refs = object.metadata.ownerReferences ?? [];
    const other = refs.find((ref) => ref.controller === true && ref.uid !== machine.metadata.uid);
    if (other) {
      throw new Error(
        `${resource} ${name} is already controlled by ${other.kind} ${other.name}: Cluster API ` +
          'cannot make the Machine its controller (AlreadyOwnedError)',
      );
    }
    if (refs.some((ref) => ref.uid === machine.metadata.uid)) return;
    await kubectl(stack(), [
      'patch',
      resource,
      name,
      '-n',
      namespace,
      '--type=merge',
      '--field-manager=simulated-cluster-api',
      '-p',
      JSON.stringify({
        metadata: {
          ownerReferences: [
            ...refs,
            {
              apiVersion: 'cluster.x-k8s.io/v1beta2',
              kind: 'Machine',
              name,
              uid: machine.metadata.uid,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
      }),
    ]);
  }

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    audited = await startAuditedStack('cluster-api');
    simulation = await startSimulation(stack().cluster.kubeconfigPath, {
      ocm: false,
      providerBaseline: false,
      profileNodes: false,
      k3k: false,
      kubevirt: false,
      clusterAPIStandInCrds: true,
      clusterAPI: {
        intervalMs: 300,
        filter: (machine) => isPoolMachine(machine) && !held.has(machine.metadata.name),
      },
    });
    await kubectl(stack(), ['create', 'namespace', namespace]);
    await kubectl(stack(), ['create', 'namespace', tenants]);
    await kubectl(stack(), ['label', 'namespace', tenants, 'kubecell.io/host-namespace=true']);
  });

  let failed = false;
  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true;
  });

  after(async function () {
    this.timeout(120_000);
    await simulation?.stop();
    await audited?.stop(failed);
  });

  it('without its templates the pool creates no Machine and says so: DESIRED 2, CURRENT 0, READY 0', async function () {
    await apply(stack(), poolObject(2));
    expect((await pool()).metadata.labels?.['kubecell.io/provisioner']).to.equal('cluster-api');
    const waiting = await eventually(
      stack(),
      'BootstrapValid=False BootstrapTemplateNotFound',
      async () => {
        const object = await pool();
        return conditionOf(object, 'BootstrapValid')?.reason === 'BootstrapTemplateNotFound'
          ? { value: object }
          : { notYet: conditionsLine(object) };
      },
      120_000,
    );
    expect(conditionOf(waiting, 'BootstrapValid')?.message).to.contain(
      `KubeadmConfigTemplate ${namespace}/gpu-cell does not exist`,
    );
    expect(conditionOf(waiting, 'Ready')).to.include({
      status: 'False',
      reason: 'BootstrapInvalid',
    });
    expect(await poolColumns(stack(), poolName)).to.include({
      PROVISIONER: 'ClusterAPI',
      DESIRED: '2',
      CURRENT: '0',
      READY: '0',
    });
    expect(await machineNames()).to.deep.equal([]);
  });

  it('with the templates of the samples it creates a Machine per replica and its KubeadmConfig and KubevirtMachine, owned by the pool but not controlled', async function () {
    await apply(stack(), samplesIn('33-gpucellpool-clusterapi-templates.yaml', namespace));
    const object = await pool();
    const uid = object.metadata.uid;
    const names = [`${cell(0)}-0`, `${cell(1)}-0`];
    await eventually(
      stack(),
      'the Machines and their clones',
      async () => {
        const machines = await machineNames();
        const configs = (await listObjects(stack(), KUBEADM_CONFIGS, { namespace })).length;
        const infra = (await listObjects(stack(), KUBEVIRT_MACHINES, { namespace })).length;
        return machines.join() === names.join() && configs === 2 && infra === 2
          ? { value: true }
          : {
              notYet: `Machines ${machines.join()}; ${configs} KubeadmConfigs; ${infra} KubevirtMachines; ${conditionsLine(await pool())}`,
            };
      },
      120_000,
    );
    for (const name of names) {
      const machine = await getObject(stack(), MACHINES, name, namespace);
      expect(controllerRefOf(machine)).to.include({ kind: 'GPUCellPool', name: poolName, uid });
      expect(machine?.metadata.annotations).to.include({
        'machine.cluster.x-k8s.io/exclude-node-draining': 'true',
      });
      expect(machine?.spec).to.deep.include({
        clusterName: 'host',
        bootstrap: {
          configRef: { apiGroup: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfig', name },
        },
        infrastructureRef: {
          apiGroup: 'infrastructure.cluster.x-k8s.io',
          kind: 'KubevirtMachine',
          name,
        },
      });
      for (const resource of [KUBEADM_CONFIGS, KUBEVIRT_MACHINES]) {
        const clone = await getObject(stack(), resource, name, namespace);
        // Owned by the pool, as a plain owner: Metacontroller added no controller reference of
        // its own, and Cluster API's Machine controller can become the controller.
        expect(clone?.metadata.ownerReferences, `${resource} ${name}`).to.deep.equal([
          {
            apiVersion: 'kubecell.io/v1alpha1',
            kind: 'GPUCellPool',
            name: poolName,
            uid,
            controller: false,
          },
        ]);
        expect(clone?.metadata.labels).to.include({
          'kubecell.io/pool': poolName,
          'cluster.x-k8s.io/cluster-name': 'host',
        });
        await machineControllerTakesOver(resource, name);
      }
      // The KubeadmConfig (against Cluster API's real CRD) registers the Node with the pool's
      // labels, the template's own label kept.
      const config = await getObject(stack(), KUBEADM_CONFIGS, name, namespace);
      expect(config?.spec).to.have.deep.nested.property(
        'joinConfiguration.nodeRegistration.kubeletExtraArgs[0]',
        {
          name: 'node-labels',
          value: `nvidia.com/gpu.present=true,controller-uid=${uid},kubecell.io/machine-profile=${PROFILE},kubecell.io/pool=${poolName}`,
        },
      );
      expect(config?.spec).to.have.nested.property('files[0].path', '/etc/containerd/config.toml');
    }
  });

  it('the cells join from their KubeadmConfig; their Nodes are adopted: READY 2', async function () {
    await eventuallyColumns(stack(), poolName, { DESIRED: 2, CURRENT: 2, READY: 2 });
    const object = await pool();
    const uid = object.metadata.uid;
    expect(conditionOf(object, 'Ready')).to.include({ status: 'True', reason: 'AllCellsReady' });
    expect(conditionOf(object, 'BootstrapValid')).to.include({
      status: 'True',
      reason: 'ClusterAPIBootstrap',
    });
    for (const c of cellsOf(object)) {
      expect(c.phase).to.equal('Ready');
      const machine = await getObject(stack(), MACHINES, c.vm ?? '', namespace);
      expect(machine?.status).to.have.nested.property('nodeRef.name', c.node);
      const joined = await node(c.node ?? '');
      expect(joined?.metadata.labels).to.include(poolNodeLabels(object, PROFILE));
      expect(joined?.spec?.providerID).to.equal(machine?.spec?.['providerID']);
      // The systemUUID the infrastructure gave the machine, as its Node reports it.
      expect(joined?.status?.['nodeInfo']).to.have.property('systemUUID', c.systemUUID);
      expect(controllerRefOf(joined)).to.include({ kind: 'GPUCellPool', name: poolName, uid });
    }
    // The simulated kubelets took the labels from the KubeadmConfigs, not from the pool.
    expect(
      [...(simulation?.clusterAPI?.joined.values() ?? [])].map((joined) => joined.labelSource),
    ).to.deep.equal(['join-data', 'join-data']);
  });

  it('reaps a Node that reports a current cell’s systemUUID but is not its Machine’s', async function () {
    const first = cellsOf(await pool())[0];
    const stale = `earlier-${cell(0)}`;
    if (!simulation) throw new Error('no simulation');
    await registerNode(simulation.client, {
      name: stale,
      labels: poolNodeLabels(await pool(), PROFILE),
      ...(first?.systemUUID ? { systemUUID: first.systemUUID } : {}),
    });
    await eventuallyGone(stack(), 'node', stale, undefined, 120_000);
    expect(await cellNamed(cell(0))).to.include({ node: first?.node, phase: 'Ready' });
    await eventuallyColumns(stack(), poolName, { DESIRED: 2, CURRENT: 2, READY: 2 });
  });

  it('reaps a Node registered before a new cell’s Machine was matched, once it is', async function () {
    const machine = `${cell(2)}-0`;
    held.add(machine);
    await apply(stack(), poolObject(3));
    await eventually(stack(), `Machine ${machine}`, async () =>
      (await machineNames()).includes(machine)
        ? { value: true }
        : { notYet: (await machineNames()).join() },
    );
    const stale = `earlier-${cell(2)}`;
    if (!simulation) throw new Error('no simulation');
    await registerNode(simulation.client, {
      name: stale,
      labels: poolNodeLabels(await pool(), PROFILE),
    });
    for (const resource of [KUBEADM_CONFIGS, KUBEVIRT_MACHINES]) {
      await eventually(stack(), `${resource} ${machine}`, async () =>
        (await getObject(stack(), resource, machine, namespace))
          ? { value: true }
          : { notYet: 'absent' },
      );
      await machineControllerTakesOver(resource, machine);
    }
    held.delete(machine);
    const third = await eventually<CellStatus>(stack(), `${cell(2)} Ready`, async () => {
      const c = await cellNamed(cell(2));
      return c?.phase === 'Ready' && c.node === machine
        ? { value: c }
        : { notYet: JSON.stringify(c ?? null) };
    });
    expect(third.systemUUID).to.be.a('string');
    await eventuallyGone(stack(), 'node', stale, undefined, 120_000);
    await eventuallyColumns(stack(), poolName, { DESIRED: 3, CURRENT: 3, READY: 3 });
  });

  describe('scale-down retires a busy cell: cordoned and tainted, never evicted', function () {
    const pods: Record<string, string> = {};

    before(async function () {
      for (const c of cellsOf(await pool())) {
        pods[c.name] = `train-${c.name}`;
        await apply(stack(), consumerPod(tenants, `train-${c.name}`, c.node ?? ''));
      }
      // A Ready cell's `since` is absent while a consumer pod holds its GPU: every pod is seen.
      await eventually(stack(), 'every cell seen busy', async () => {
        const cells = cellsOf(await pool());
        return cells.length === 3 &&
          cells.every((c) => c.phase === 'Ready' && c.since === undefined)
          ? { value: cells }
          : { notYet: JSON.stringify(cells) };
      });
      await apply(stack(), poolObject(2));
    });

    it('the retiring cell’s Node is cordoned and tainted kubecell.io/retiring:NoSchedule; its Machine and the pod stay', async function () {
      const retiring = await eventually(stack(), `${cell(2)} Retiring`, async () => {
        const third = await cellNamed(cell(2));
        const current = await node(`${cell(2)}-0`);
        return third?.phase === 'Retiring' && isRetiring(current)
          ? { value: current }
          : {
              notYet: `${JSON.stringify(third ?? null)}; node spec ${JSON.stringify(current?.spec)}`,
            };
      });
      expect(retiring?.spec?.taints).to.deep.include({
        key: 'kubecell.io/retiring',
        effect: 'NoSchedule',
      });
      expect(await poolColumns(stack(), poolName)).to.include({
        DESIRED: '2',
        CURRENT: '3',
        READY: '2',
      });
      const machine = await getObject(stack(), MACHINES, `${cell(2)}-0`, namespace);
      expect(machine?.metadata.deletionTimestamp).to.equal(undefined);
      expect(machine?.metadata.annotations, 'Cluster API must not drain either').to.include({
        'machine.cluster.x-k8s.io/exclude-node-draining': 'true',
      });
      const pod = await getObject(stack(), 'pod', pods[cell(2)] ?? '', tenants);
      expect(pod?.metadata.deletionTimestamp).to.equal(undefined);
    });

    it('once its pod has ended, the cell’s Machine is deleted, then its Node: CURRENT 2', async function () {
      await endPod(stack(), tenants, pods[cell(2)] ?? '');
      await eventuallyGone(stack(), MACHINES, `${cell(2)}-0`, namespace, 120_000);
      await eventuallyGone(stack(), 'node', `${cell(2)}-0`, undefined, 120_000);
      await eventually(stack(), `${cell(2)} gone from the status`, async () => {
        const names = cellsOf(await pool()).map((c) => c.name);
        return names.join() === [cell(0), cell(1)].join()
          ? { value: names }
          : { notYet: names.join() };
      });
      await eventuallyColumns(stack(), poolName, { DESIRED: 2, CURRENT: 2, READY: 2 });
      for (const c of [cell(0), cell(1)]) {
        const pod = await getObject(stack(), 'pod', pods[c] ?? '', tenants);
        expect(pod?.metadata.deletionTimestamp, `${pods[c] ?? ''}`).to.equal(undefined);
      }
    });

    it('nothing was evicted: the apiserver saw no eviction, and no pod deletion but the tenant’s', async function () {
      const { evictions, deletions } = auditedPodRequests(audited.auditLog);
      expect(evictions).to.deep.equal([]);
      expect(deletions.map((deletion) => deletion.pod)).to.deep.equal([
        `${tenants}/${pods[cell(2)] ?? ''}`,
      ]);
      expect(deletions.map((deletion) => deletion.user)).to.not.include(METACONTROLLER_USER);
    });
  });

  describe('afterwards', function () {
    it('Cluster API stays the controller of the clones; Metacontroller never added itself', async function () {
      const object = await pool();
      for (const name of [`${cell(0)}-0`, `${cell(1)}-0`]) {
        const machine = await getObject(stack(), MACHINES, name, namespace);
        for (const resource of [KUBEADM_CONFIGS, KUBEVIRT_MACHINES]) {
          const clone = await getObject(stack(), resource, name, namespace);
          const refs = clone?.metadata.ownerReferences ?? [];
          expect(
            refs.filter((ref) => ref.controller === true).map((ref) => `${ref.kind}/${ref.uid}`),
            `${resource} ${name}`,
          ).to.deep.equal([`Machine/${machine?.metadata.uid ?? ''}`]);
          expect(refs.map((ref) => ref.uid)).to.include(object.metadata.uid);
        }
      }
      const log = readFileSync(stack().metacontroller.process.logFile, 'utf8');
      expect(log, 'Metacontroller log').to.not.contain(SECOND_CONTROLLER);
    });

    it('every GPUCellPool hook call was answered 200', async function () {
      const calls = await hookCalls(stack());
      const failures = [...calls.failed.entries()].filter(([key]) =>
        key.startsWith('gpucellpool/'),
      );
      expect(failures).to.deep.equal([]);
      expect(calls.ok.get('gpucellpool/sync') ?? 0).to.be.greaterThan(0);
    });
  });
});
