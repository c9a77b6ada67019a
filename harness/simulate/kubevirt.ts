// SIMULATED KubeVirt plus the cell inside each VM: for every `kubevirt.io/v1` VirtualMachine a
// GPUCellPool made, it plays KubeVirt (the VM's status: created, ready, printableStatus Running)
// and the booted cell (reads the user-data Secret the VM's cloudInitNoCloud disk names, key
// `userdata`, and registers the Node its join data describes, with the VM's firmware UUID as
// `status.nodeInfo.systemUUID`, Ready, and the GPU its device plugin advertises).
//
// What KubeCell's pool reads (hooks/gpucellpool/nodes.ts): the VM exists; a Node labelled
// `controller-uid=<pool uid>` (adopted through Metacontroller's selector) whose systemUUID equals
// the firmware UUID (case-insensitively) is the cell's current Node; its Ready condition makes the
// cell Ready. When a VM disappears, its kubelet stops posting: the Node turns Unknown, as the
// node lifecycle controller reports it (that controller does not run in the test control plane).
import { KubeClient, isNotFound, resourcePath, type KubeObject } from './kube-client.js';
import {
  CELL_KUBELET_FIELD_MANAGER,
  cellNodeRegistration,
  findSecret,
  isPoolMachine,
  listIfServed,
  poolNodeLabels,
  secretValue,
  bootIdentityFromUserData,
  type CellNode,
  type CellNodeOptions,
} from './gpu-cell.js';
import { markNodeUnreachable, registerNode } from './kubelet.js';
import { formatTime, PollingActor, type Log } from './support.js';

export const KUBEVIRT_FIELD_MANAGER = 'simulated-kubevirt';

export interface VirtualMachineObject extends KubeObject {
  spec?: {
    template?: {
      spec?: {
        domain?: {
          cpu?: { cores?: number; sockets?: number; threads?: number };
          memory?: { guest?: string };
          firmware?: { uuid?: string };
        };
        volumes?: {
          name: string;
          cloudInitNoCloud?: { secretRef?: { name?: string }; userData?: string };
        }[];
      };
    };
  };
  status?: Record<string, unknown>;
}

export function virtualMachinesPath(namespace?: string, name?: string): string {
  return resourcePath({
    apiVersion: 'kubevirt.io/v1',
    resource: 'virtualmachines',
    ...(namespace ? { namespace } : {}),
    ...(name ? { name } : {}),
  });
}

/** The VM's firmware UUID (what the guest's SMBIOS, and so its kubelet, reports). */
export function firmwareUuidOf(vm: VirtualMachineObject): string | undefined {
  return vm.spec?.template?.spec?.domain?.firmware?.uuid;
}

/** The user-data Secret the VM boots from (its cloudInitNoCloud disk's secretRef). */
export function userDataSecretOf(vm: VirtualMachineObject): string | undefined {
  return vm.spec?.template?.spec?.volumes?.find((volume) => volume.cloudInitNoCloud?.secretRef)
    ?.cloudInitNoCloud?.secretRef?.name;
}

/** The guest's CPU count and memory as its kubelet would report them (pure). */
export function vmResources(vm: VirtualMachineObject): { cpu?: string; memory?: string } {
  const domain = vm.spec?.template?.spec?.domain;
  const cpu = domain?.cpu;
  const count = cpu ? (cpu.cores ?? 1) * (cpu.sockets ?? 1) * (cpu.threads ?? 1) : undefined;
  return {
    ...(count ? { cpu: String(count) } : {}),
    ...(domain?.memory?.guest ? { memory: domain.memory.guest } : {}),
  };
}

/** KubeVirt's VM status while starting (no boot data yet) or running (pure). */
export function virtualMachineStatus(
  vm: VirtualMachineObject,
  running: boolean,
  now: Date,
): Record<string, unknown> {
  const generation = vm.metadata.generation;
  const previous = (
    vm.status?.conditions as
      { type: string; status: string; lastTransitionTime?: string }[] | undefined
  )?.find((condition) => condition.type === 'Ready');
  const status = running ? 'True' : 'False';
  return {
    created: true,
    ready: running,
    printableStatus: running ? 'Running' : 'Starting',
    ...(generation ? { observedGeneration: generation, desiredGeneration: generation } : {}),
    conditions: [
      {
        type: 'Ready',
        status,
        lastProbeTime: null,
        lastTransitionTime:
          previous?.status === status && previous.lastTransitionTime
            ? previous.lastTransitionTime
            : formatTime(now),
        ...(running
          ? {}
          : { reason: 'GuestNotRunning', message: 'Guest VM is not reported as running' }),
      },
    ],
  };
}

export interface KubeVirtSimulatorOptions extends CellNodeOptions {
  /** How often VMs are listed; default 1 s. */
  intervalMs?: number;
  /** Time from first sight of a VM until its Node registers; default 0. */
  bootMs?: number;
  /** The case of the systemUUID the kubelet reports; default as written in the VM spec. */
  systemUUIDCase?: 'as-is' | 'upper' | 'lower';
  /** Handle only VMs this returns true for; default those of a GPUCellPool. */
  filter?: (vm: VirtualMachineObject) => boolean;
  log?: Log;
}

export interface BootedCell extends CellNode {
  namespace: string;
  vm: string;
  vmUid: string;
  joinedAt: Date;
}

function vmKey(vm: KubeObject): string {
  return `${vm.metadata.namespace ?? ''}/${vm.metadata.name}`;
}

/**
 * The KubeVirt simulator: every `intervalMs` it lists the VirtualMachines in all namespaces and
 * brings each new one (by UID) up: status, then — once its user-data Secret exists — its Node.
 */
export class KubeVirtSimulator extends PollingActor<KubeVirtSimulatorOptions> {
  private readonly seen = new Map<string, Date>();
  /** Booted cells by VM UID. */
  readonly booted = new Map<string, BootedCell>();

  constructor(client: KubeClient, options: KubeVirtSimulatorOptions = {}) {
    super(client, options, 'kubevirt simulator', 1000);
  }

  /** The booted cell of VM `namespace/name`, if any. */
  cellOf(namespace: string, name: string): BootedCell | undefined {
    return [...this.booted.values()].find(
      (cell) => cell.namespace === namespace && cell.vm === name,
    );
  }

  async pollOnce(): Promise<void> {
    const vms = (await listIfServed(this.client, virtualMachinesPath())) as VirtualMachineObject[];
    const now = new Date();
    const present = new Set<string>();
    for (const vm of vms) {
      const uid = vm.metadata.uid ?? vmKey(vm);
      present.add(uid);
      if (this.booted.has(uid) || vm.metadata.deletionTimestamp) continue;
      if (!(this.options.filter ?? isPoolMachine)(vm)) continue;
      if (!this.seen.has(uid)) this.seen.set(uid, now);
      try {
        await this.bringUp(vm, uid, now);
      } catch (error) {
        if (!isNotFound(error)) throw error; // the VM went away meanwhile
      }
    }
    for (const [uid, cell] of this.booted) {
      if (present.has(uid)) continue;
      this.booted.delete(uid);
      this.seen.delete(uid);
      try {
        await markNodeUnreachable(this.client, cell.registration.name);
      } catch (error) {
        if (!isNotFound(error)) throw error; // the pool reaped the Node already
      }
    }
  }

  private async bringUp(vm: VirtualMachineObject, uid: string, now: Date): Promise<void> {
    const namespace = vm.metadata.namespace ?? 'default';
    const path = virtualMachinesPath(namespace, vm.metadata.name);
    const secretName = userDataSecretOf(vm);
    const userData = secretName
      ? secretValue(await findSecret(this.client, namespace, secretName), 'userdata', 'userData')
      : vm.spec?.template?.spec?.volumes?.find((volume) => volume.cloudInitNoCloud?.userData)
          ?.cloudInitNoCloud?.userData;
    const seenAt = this.seen.get(uid) ?? now;
    const booting = now.getTime() - seenAt.getTime() < (this.options.bootMs ?? 0);
    if (userData === undefined || booting) {
      // KubeVirt cannot start the VMI without its cloud-init Secret; the guest is still booting.
      if (vm.status?.printableStatus !== 'Starting') {
        await this.client.patchStatus(
          path,
          { status: virtualMachineStatus(vm, false, now) },
          KUBEVIRT_FIELD_MANAGER,
        );
      }
      return;
    }
    await this.client.patchStatus(
      path,
      { status: virtualMachineStatus(vm, true, now) },
      KUBEVIRT_FIELD_MANAGER,
    );
    const firmware = firmwareUuidOf(vm) ?? uid;
    const systemUUID =
      this.options.systemUUIDCase === 'upper'
        ? firmware.toUpperCase()
        : this.options.systemUUIDCase === 'lower'
          ? firmware.toLowerCase()
          : firmware;
    const cell = cellNodeRegistration({
      machineName: vm.metadata.name,
      boot: bootIdentityFromUserData(userData),
      poolLabels: await poolNodeLabels(this.client, vm),
      systemUUID,
      ...vmResources(vm),
      options: this.options,
    });
    await registerNode(this.client, cell.registration, {
      fieldManager: CELL_KUBELET_FIELD_MANAGER,
    });
    this.booted.set(uid, {
      ...cell,
      namespace,
      vm: vm.metadata.name,
      vmUid: uid,
      joinedAt: new Date(),
    });
    this.options.log?.(
      `kubevirt: VM ${namespace}/${vm.metadata.name} booted; Node ${cell.registration.name} registered (labels from ${cell.labelSource})`,
    );
  }
}
