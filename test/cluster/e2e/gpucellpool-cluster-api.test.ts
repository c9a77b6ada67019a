// GPUCellPool with Cluster API through the real Metacontroller, on a control plane that serves
// only Cluster API's kinds (the real Machine, KubeadmConfig, KubeadmConfigTemplate and
// KubevirtMachineTemplate CRDs pinned in test/cluster/upstream-inputs.json; a permissive
// stand-in, labelled as such, for KubevirtMachine, which no pinned CRD defines; no KubeVirt
// CRD), with only the kubecell-gpucellpool-cluster-api component installed: the scenarios of
// gpucellpool-scenarios.ts, plus what only Cluster API does (the Machines' KubeadmConfig and
// KubevirtMachine, owned by the pool but not controlled, so that Cluster API can take them over).
//
// The test plays only Cluster API and the cells' kubelets (harness/simulate/cluster-api.ts: the
// Machine's providerID and status, the Node each cell registers from its KubeadmConfig; and here,
// the Machine controller making the Machine the controller of its bootstrap config and
// infrastructure machine, as `ensureExternalOwnershipAndWatch` does), a kubelet that registers a
// stale Node, and the tenant's pods.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { registerNode } from '../../../harness/simulate/index.js';
import { describeGpuCellPool } from './gpucellpool-scenarios.js';
import {
  conditionsLine,
  controllerRefOf,
  poolNodeLabels,
  samplesIn,
} from './gpucellpool-support.js';
import { PROFILE, type PoolProvisioner, type PoolWorld } from './gpucellpool-world.js';
import { apply, eventually, getObject, kubectl, listObjects } from './support.js';

const KUBEADM_CONFIGS = 'kubeadmconfigs.bootstrap.cluster.x-k8s.io';
const KUBEVIRT_MACHINES = 'kubevirtmachines.infrastructure.cluster.x-k8s.io';
const MACHINES = 'machines.cluster.x-k8s.io';
/** The clones of a Machine's templates, named as the Machine. */
const CLONES = [KUBEADM_CONFIGS, KUBEVIRT_MACHINES];
/** What Metacontroller v4.17.2 got from the apiserver for clones it made controller of twice. */
const SECOND_CONTROLLER = 'Only one reference can have Controller set to true';
/** Cluster API's own drain, which a retiring cell must not get either. */
const EXCLUDE_NODE_DRAINING = { 'machine.cluster.x-k8s.io/exclude-node-draining': 'true' };

/** The Machines whose clones Cluster API took over, by name: their UIDs. */
const takenOver = new Map<string, string>();

/**
 * What Cluster API's Machine controller does with the bootstrap config and infrastructure
 * machine a Machine names (`ensureExternalOwnershipAndWatch`,
 * internal/controllers/machine/machine_controller_phases.go): it makes the Machine their
 * controller with `controllerutil.SetControllerReference`, which fails while another owner
 * reference is the controller.
 */
async function machineControllerTakesOver(
  world: PoolWorld,
  resource: string,
  name: string,
): Promise<void> {
  const machine = await world.readMachine(name);
  const object = await getObject(world.stack, resource, name, world.namespace);
  if (!machine || !object) throw new Error(`${resource} ${name} or its Machine is missing`);
  const refs = object.metadata.ownerReferences ?? [];
  const other = refs.find((ref) => ref.controller === true && ref.uid !== machine.metadata.uid);
  if (other) {
    throw new Error(
      `${resource} ${name} is already controlled by ${other.kind} ${other.name}: Cluster API ` +
        'cannot make the Machine its controller (AlreadyOwnedError)',
    );
  }
  takenOver.set(name, machine.metadata.uid);
  if (refs.some((ref) => ref.uid === machine.metadata.uid)) return;
  await kubectl(world.stack, [
    'patch',
    resource,
    name,
    '-n',
    world.namespace,
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

/** With the templates, a Machine per replica and the clones it names. */
function createsMachines(world: PoolWorld): void {
  it('with the templates of the samples it creates a Machine per replica and its KubeadmConfig and KubevirtMachine, owned by the pool but not controlled', async function () {
    await apply(
      world.stack,
      samplesIn('33-gpucellpool-clusterapi-templates.yaml', world.namespace),
    );
    const uid = (await world.pool()).metadata.uid;
    const names = [world.machine(0), world.machine(1)];
    const count = async (resource: string) =>
      (await listObjects(world.stack, resource, { namespace: world.namespace })).length;
    await eventually(
      world.stack,
      'the Machines and their clones',
      async () => {
        const machines = await world.machineNames();
        const [configs, infra] = [await count(KUBEADM_CONFIGS), await count(KUBEVIRT_MACHINES)];
        return machines.join() === names.join() && configs === 2 && infra === 2
          ? { value: true }
          : {
              notYet: `Machines ${machines.join()}; ${configs} KubeadmConfigs; ${infra} KubevirtMachines; ${conditionsLine(await world.pool())}`,
            };
      },
      120_000,
    );
    for (const name of names) {
      const machine = await world.readMachine(name);
      expect(controllerRefOf(machine)).to.include({
        kind: 'GPUCellPool',
        name: world.poolName,
        uid,
      });
      expect(machine?.metadata.annotations).to.include(EXCLUDE_NODE_DRAINING);
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
      for (const resource of CLONES) {
        const clone = await getObject(world.stack, resource, name, world.namespace);
        // Owned by the pool, as a plain owner: Metacontroller added no controller reference of
        // its own, and Cluster API's Machine controller can become the controller.
        expect(clone?.metadata.ownerReferences, `${resource} ${name}`).to.deep.equal([
          {
            apiVersion: 'kubecell.io/v1alpha1',
            kind: 'GPUCellPool',
            name: world.poolName,
            uid,
            controller: false,
          },
        ]);
        expect(clone?.metadata.labels).to.include({
          'kubecell.io/pool': world.poolName,
          'cluster.x-k8s.io/cluster-name': 'host',
        });
        await machineControllerTakesOver(world, resource, name);
      }
      // The KubeadmConfig (against Cluster API's real CRD) registers the Node with the pool's
      // labels, the template's own label kept.
      const config = await getObject(world.stack, KUBEADM_CONFIGS, name, world.namespace);
      expect(config?.spec).to.have.deep.nested.property(
        'joinConfiguration.nodeRegistration.kubeletExtraArgs[0]',
        {
          name: 'node-labels',
          value: `nvidia.com/gpu.present=true,controller-uid=${uid},kubecell.io/machine-profile=${PROFILE},kubecell.io/pool=${world.poolName}`,
        },
      );
      expect(config?.spec).to.have.nested.property('files[0].path', '/etc/containerd/config.toml');
    }
  });
}

/** Once every scenario has run: the clones of the first two cells. */
function clusterAPIControlsTheClones(world: PoolWorld): void {
  it('Cluster API stays the controller of the clones; Metacontroller never added itself', async function () {
    const object = await world.pool();
    // The Machines taken over that remain (the health scenarios replace some; a name can come
    // back as a new Machine, which the test did not hand to Cluster API).
    const names: string[] = [];
    for (const [name, uid] of takenOver) {
      if ((await world.readMachine(name))?.metadata.uid === uid) names.push(name);
    }
    expect(names, 'a Machine Cluster API took over').to.not.deep.equal([]);
    for (const name of names) {
      const machine = await world.readMachine(name);
      for (const resource of CLONES) {
        const clone = await getObject(world.stack, resource, name, world.namespace);
        const refs = clone?.metadata.ownerReferences ?? [];
        expect(
          refs.filter((ref) => ref.controller === true).map((ref) => `${ref.kind}/${ref.uid}`),
          `${resource} ${name}`,
        ).to.deep.equal([`Machine/${machine?.metadata.uid ?? ''}`]);
        expect(refs.map((ref) => ref.uid)).to.include(object.metadata.uid);
      }
    }
    const log = readFileSync(world.stack.metacontroller.process.logFile, 'utf8');
    expect(log, 'Metacontroller log').to.not.contain(SECOND_CONTROLLER);
  });
}

/** Cluster API writes the Machine's status. */
async function patchMachineStatus(
  world: PoolWorld,
  name: string,
  status: Record<string, unknown>,
): Promise<void> {
  await kubectl(world.stack, [
    'patch',
    MACHINES,
    name,
    '-n',
    world.namespace,
    '--subresource=status',
    '--type=merge',
    '--field-manager=simulated-cluster-api',
    '-p',
    JSON.stringify({ status }),
  ]);
}

const CLUSTER_API: PoolProvisioner = {
  type: 'cluster-api',
  title: 'Cluster API',
  column: 'ClusterAPI',
  prefixes: { namespace: 'e2e-capi-cells', pool: 'capi' },
  machine: { word: 'Machine', resource: MACHINES },
  simulation: (filter) => ({
    clusterAPIStandInCrds: true,
    clusterAPI: { intervalMs: 300, filter },
  }),
  /** samples/36-gpucellpool-clusterapi.yaml, renamed, in the test's namespace. */
  poolObject(world, replicas) {
    const sample = samplesIn('36-gpucellpool-clusterapi.yaml', world.namespace)[0] as {
      metadata: Record<string, unknown>;
      spec: Record<string, unknown>;
    };
    return {
      ...sample,
      // No kubecell.io/provisioner label: the admission webhook sets it from the type.
      metadata: { name: world.poolName },
      spec: { ...sample.spec, replicas, machineProfile: PROFILE, namespace: world.namespace },
    };
  },

  missing: {
    what: 'templates',
    waiting: { type: 'BootstrapValid', status: 'False', reason: 'BootstrapTemplateNotFound' },
    message: (world) => `KubeadmConfigTemplate ${world.namespace}/gpu-cell does not exist`,
    other: { type: 'Ready', status: 'False', reason: 'BootstrapInvalid' },
  },
  joined: {
    from: 'KubeadmConfig',
    bootstrapValidReason: 'ClusterAPIBootstrap',
    labelSources: (simulation) =>
      [...(simulation.clusterAPI?.joined.values() ?? [])].map((joined) => joined.labelSource),
    // The Machine names its Node; the Node reports the Machine's providerID.
    async expectCell(world, cell, node) {
      const machine = await world.readMachine(cell.vm ?? '');
      expect(machine?.status).to.have.nested.property('nodeRef.name', cell.node);
      expect(node?.spec?.providerID).to.equal(machine?.spec?.['providerID']);
    },
  },
  earlyNode: {
    title: 'reaps a Node registered before a new cell’s Machine was matched, once it is',
    // A Node with the pool's labels and no systemUUID registers while the Machine has neither
    // providerID nor nodeRef (the pool keeps every Node then); Cluster API takes the clones over.
    async whileHeld(world, name, machine) {
      await registerNode(world.simulation.client, {
        name,
        labels: poolNodeLabels(await world.pool(), PROFILE),
      });
      for (const resource of CLONES) {
        await eventually(world.stack, `${resource} ${machine}`, async () =>
          (await getObject(world.stack, resource, machine, world.namespace))
            ? { value: true }
            : { notYet: 'absent' },
        );
        await machineControllerTakesOver(world, resource, machine);
      }
    },
  },
  retired: {
    what: 'Machine is',
    objects: (machine) => [[MACHINES, machine]],
    expectKept(machine) {
      expect(machine.metadata.annotations, 'Cluster API must not drain either').to.include(
        EXCLUDE_NODE_DRAINING,
      );
    },
  },
  health: {
    // The infrastructure machine is provisioned (InfrastructureReady True) but the guest hangs
    // before kubeadm join: no Node, no nodeRef.
    runsWithoutNode: (world, name) =>
      patchMachineStatus(world, name, {
        phase: 'Provisioned',
        conditions: [
          {
            type: 'InfrastructureReady',
            status: 'True',
            reason: 'Ready',
            message: '',
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          },
        ],
      }),
    failed: {
      title: 'a failed Machine (v1beta2: status.deprecated.v1beta1.failureReason)',
      // What a v1beta2 Machine controller keeps of a terminal failure; it no longer sets Failed.
      fail: (world, name) =>
        patchMachineStatus(world, name, {
          deprecated: {
            v1beta1: {
              failureReason: 'UpdateError',
              failureMessage: 'the infrastructure provider reported a terminal error',
            },
          },
        }),
    },
  },
  only: { createsMachines, afterwards: clusterAPIControlsTheClones },
};

describeGpuCellPool(CLUSTER_API);
