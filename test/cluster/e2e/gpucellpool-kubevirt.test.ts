// GPUCellPool with KubeVirt through the real Metacontroller, on a control plane that serves only
// KubeVirt's kinds (the permissive stand-in VirtualMachine CRD; no Cluster API CRD), with only
// the kubecell-gpucellpool-kubevirt component installed: the scenarios of
// gpucellpool-scenarios.ts, plus what only KubeVirt does (the VMs and user-data Secrets; a VM
// lost and its cell joining again as a new incarnation).
//
// The test plays only KubeVirt and the cells' kubelets (harness/simulate/kubevirt.ts: VM status, the
// Node each booted cell registers from its user-data, systemUUID = the VM's firmware UUID), a
// kubelet that registers a stale Node, the tenant's pods, and the infrastructure losing a VM.
import { expect } from 'chai';
import {
  KUBEVIRT_FIELD_MANAGER,
  registerNode,
  virtualMachineStatus,
  virtualMachinesPath,
  type Simulation,
  type VirtualMachineObject,
} from '../../../harness/simulate/index.js';
import { describeGpuCellPool } from './gpucellpool-scenarios.js';
import {
  cellsOf,
  controllerRefOf,
  eventuallyColumns,
  poolNodeLabels,
  sampleIn,
  samplesIn,
  type CellStatus,
} from './gpucellpool-support.js';
import { PROFILE, type PoolProvisioner, type PoolWorld } from './gpucellpool-world.js';
import { apply, eventually, eventuallyGone, getObject, kubectl } from './support.js';

const VIRTUAL_MACHINES = 'virtualmachines.kubevirt.io';

const userDataSecret = (vm: string) => `${vm}-user-data`;

/** With the claim template, a VM and a user-data Secret per replica, as the pool renders them. */
function createsMachines(world: PoolWorld): void {
  it('with the claim template it creates a VM and a user-data Secret per replica', async function () {
    await apply(
      world.stack,
      sampleIn('32-gpucellpool-gpu-claims.yaml', 'ResourceClaimTemplate', world.namespace),
    );
    const names = [world.machine(0), world.machine(1)];
    const cells = await eventually<CellStatus[]>(
      world.stack,
      'a VM, its user-data Secret and its firmware UUID per cell',
      async () => {
        const vms = await world.machineNames();
        const secrets = await Promise.all(
          names.map((vm) => getObject(world.stack, 'secret', userDataSecret(vm), world.namespace)),
        );
        const listed = cellsOf(await world.pool());
        return vms.join() === names.join() &&
          secrets.every((secret) => secret !== undefined) &&
          listed.length === 2 &&
          listed.every((c) => c.systemUUID !== undefined)
          ? { value: listed }
          : { notYet: `VMs ${vms.join()}; cells ${JSON.stringify(listed)}` };
      },
      120_000,
    );
    const uid = (await world.pool()).metadata.uid;
    expect(cells.map((c) => c.vm)).to.deep.equal(names);
    for (const { vm: name = '', systemUUID } of cells) {
      const vm = await world.readMachine(name);
      expect(vm?.spec, `${name} firmware`).to.have.nested.property(
        'template.spec.domain.firmware.uuid',
        systemUUID,
      );
      expect(vm?.spec).to.have.deep.nested.property('template.spec.resourceClaims', [
        { name: 'gpu', resourceClaimTemplateName: 'a100-vfio' },
      ]);
      expect(controllerRefOf(vm)).to.include({ kind: 'GPUCellPool', name: world.poolName, uid });
      const secret = await getObject(world.stack, 'secret', userDataSecret(name), world.namespace);
      const userData = Buffer.from(secret?.data?.['userdata'] ?? '', 'base64').toString('utf8');
      expect(userData).to.contain('token: "abcdef.0123456789abcdef"');
      expect(userData).to.contain(`name: ${name}\n`);
      expect(userData).to.contain(
        `value: controller-uid=${uid},kubecell.io/machine-profile=${PROFILE},kubecell.io/pool=${world.poolName}\n`,
      );
      expect(userData, 'an escaped $${ stays literal').to.contain('bits=${subnet#*/}');
    }
  });
}

/** The infrastructure loses a VM; its Node stays behind, and the cell comes back as a new one. */
function reapsEarlierIncarnation(world: PoolWorld): void {
  it('reaps the Node of an earlier incarnation when its VM is lost, and the cell joins again as a new incarnation', async function () {
    const before = cellsOf(await world.pool())[0];
    const [lost, next] = [world.machine(0, 0), world.machine(0, 1)];
    // The kubelet stops posting; the Node stays.
    await kubectl(world.stack, ['delete', 'virtualmachine', lost, '-n', world.namespace]);
    // Metacontroller deletes the children a sync leaves out before it writes that sync's status,
    // so the Node's absence is no sign that the status is written: wait for the cell itself.
    const after = await eventually<CellStatus>(
      world.stack,
      `${world.cell(0)} Ready again`,
      async () => {
        const first = cellsOf(await world.pool())[0];
        return first?.vm === next && first.node === next && first.phase === 'Ready'
          ? { value: first }
          : { notYet: JSON.stringify(first ?? null) };
      },
    );
    await eventuallyGone(world.stack, 'node', lost, undefined, 120_000);
    await eventuallyColumns(world.stack, world.poolName, { DESIRED: 2, CURRENT: 2, READY: 2 });
    expect(after.systemUUID, 'a new firmware UUID').to.not.equal(before?.systemUUID);
    expect(await world.machineNames()).to.deep.equal([next, world.machine(1)]);
    expect(await getObject(world.stack, 'secret', userDataSecret(lost), world.namespace)).to.equal(
      undefined,
    );
    const joined = await world.node(next);
    expect(joined?.status?.['nodeInfo']).to.have.property('systemUUID', after.systemUUID);
  });
}

/** KubeVirt writes the VM's status: `status` over what the simulator would write now. */
async function patchVmStatus(
  world: PoolWorld,
  name: string,
  status: (vm: VirtualMachineObject) => Record<string, unknown>,
): Promise<void> {
  const { client } = world.simulation;
  const path = virtualMachinesPath(world.namespace, name);
  const vm = await client.get<VirtualMachineObject>(path);
  await client.patchStatus(path, { status: status(vm) }, KUBEVIRT_FIELD_MANAGER);
}

const KUBEVIRT: PoolProvisioner = {
  type: 'kubevirt',
  title: 'KubeVirt',
  column: 'KubeVirt',
  prefixes: { namespace: 'e2e-cells', pool: 'kv' },
  machine: { word: 'VM', resource: VIRTUAL_MACHINES },
  simulation: (filter) => ({ kubevirt: { intervalMs: 300, filter } }),
  // The join Secret of the samples, as a platform engineer would adapt it.
  prepare: (world) => apply(world.stack, samplesIn('30-cell-join-secret.yaml', world.namespace)),
  poolObject: (world, replicas) => ({
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'GPUCellPool',
    // No kubecell.io/provisioner label: the admission webhook sets it from the type.
    metadata: { name: world.poolName },
    spec: {
      replicas,
      machineProfile: PROFILE,
      namespace: world.namespace,
      provisioner: {
        type: 'KubeVirt',
        kubeVirt: {
          cpu: 8,
          memory: '64Gi',
          image: { containerDisk: 'registry.example/kubecell/cell:1.0' },
        },
      },
      gpu: { resourceClaimTemplateName: 'a100-vfio' },
      bootstrap: { provider: 'Opaque', joinSecretRef: { name: 'cell-join' } },
    },
  }),

  missing: {
    what: 'ResourceClaimTemplate',
    waiting: {
      type: 'Ready',
      status: 'False',
      reason: 'GPUClaimNotFound',
    },
    message: (world) => `ResourceClaimTemplate ${world.namespace}/a100-vfio does not exist`,
    other: { type: 'BootstrapValid', status: 'True', reason: 'TemplateValid' },
  },
  joined: {
    from: 'user-data',
    bootstrapValidReason: 'TemplateValid',
    labelSources: (simulation: Simulation) =>
      [...(simulation.kubevirt?.booted.values() ?? [])].map((booted) => booted.labelSource),
  },
  earlyNode: {
    title: 'reaps a Node that registered with a cell’s systemUUID before the cell’s own Node',
    // A kubelet registers a Node under another name with the pool's labels and the cell's
    // systemUUID before the cell's VM has booted (the same machine joined under a stale name):
    // it is taken for the cell's Node until the VM's own registers.
    async whileHeld(world, name) {
      const cell = world.cell(2);
      const pending = await eventually<CellStatus>(
        world.stack,
        `cell ${cell} with a firmware UUID`,
        async () => {
          const third = await world.cellNamed(cell);
          return third?.systemUUID ? { value: third } : { notYet: JSON.stringify(third ?? null) };
        },
      );
      await registerNode(world.simulation.client, {
        name,
        labels: poolNodeLabels(await world.pool(), PROFILE),
        systemUUID: pending.systemUUID?.toUpperCase(),
      });
      await eventually(world.stack, `${name} taken for ${cell}'s Node`, async () => {
        const third = await world.cellNamed(cell);
        return third?.node === name ? { value: third } : { notYet: JSON.stringify(third ?? null) };
      });
    },
  },
  retired: {
    what: 'VM and user-data Secret are',
    objects: (vm) => [
      [VIRTUAL_MACHINES, vm],
      ['secret', userDataSecret(vm)],
    ],
  },
  health: {
    // The VMI runs (the VM's Ready turns True) but the guest hangs before kubeadm join.
    runsWithoutNode: (world, name) =>
      patchVmStatus(world, name, (vm) => virtualMachineStatus(vm, true, new Date())),
    failed: {
      title: 'a VM in CrashLoopBackOff',
      fail: (world, name) =>
        patchVmStatus(world, name, (vm) => ({
          ...virtualMachineStatus(vm, false, new Date()),
          printableStatus: 'CrashLoopBackOff',
        })),
    },
  },
  only: { createsMachines, withTwoCells: reapsEarlierIncarnation },
};

describeGpuCellPool(KUBEVIRT);
