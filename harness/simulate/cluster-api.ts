// SIMULATED Cluster API (core Machine controller, bootstrap and infrastructure providers) plus
// the cell's kubelet: for every `cluster.x-k8s.io/v1beta2` Machine a GPUCellPool made, it
//
// 1. waits for the Machine's bootstrap data: `spec.bootstrap.dataSecretName` (the pool's rendered
//    Secret, key `value`) or the KubeadmConfig `spec.bootstrap.configRef` names (the pool clones
//    it from the template once the Machine exists);
// 2. plays the infrastructure provider and the booted cell: the Node registers under the name and
//    labels of its join data (gpu-cell.ts), with `spec.providerID` `simulated://<ns>/<machine>`
//    and a systemUUID the infrastructure decided (derived from the Machine UID);
// 3. plays the Machine controller: `spec.providerID` copied onto the Machine, then the status
//    Cluster API writes: phase Running, `nodeRef`, addresses, nodeInfo, `initialization`, and
//    the Ready/Available/NodeReady conditions.
//
// What KubeCell's pool reads (hooks/gpucellpool/nodes.ts, currentNode): the Machine's
// `status.nodeRef.name` or `spec.providerID` to find the cell's Node, whose Ready condition makes
// the cell Ready, and whose reported systemUUID goes into status.cells. Until a Machine has one of
// the two, the pool keeps every Node it has (so the Node is registered before nodeRef is set).
// When a Machine is deleted, Cluster API deletes its Node; so does this simulator.
import { KubeClient, isNotFound, resourcePath, type KubeObject } from './kube-client.js';
import {
  CELL_KUBELET_FIELD_MANAGER,
  bootIdentityFromKubeadmConfig,
  bootIdentityFromUserData,
  cellNodeRegistration,
  findSecret,
  isPoolMachine,
  listIfServed,
  poolNodeLabels,
  secretValue,
  type BootIdentity,
  type CellNode,
  type CellNodeOptions,
} from './gpu-cell.js';
import { deleteNode, registerNode } from './kubelet.js';
import { formatTime, nameBasedUuid, PollingActor, type Log } from './support.js';

export const CLUSTER_API_FIELD_MANAGER = 'simulated-cluster-api';
export const MACHINE_API_VERSION = 'cluster.x-k8s.io/v1beta2';

export interface MachineObject extends KubeObject {
  spec?: {
    clusterName?: string;
    providerID?: string;
    bootstrap?: {
      dataSecretName?: string;
      configRef?: { apiGroup?: string; kind?: string; name?: string };
    };
  };
  status?: Record<string, unknown>;
}

export function machinesPath(namespace?: string, name?: string): string {
  return resourcePath({
    apiVersion: MACHINE_API_VERSION,
    resource: 'machines',
    ...(namespace ? { namespace } : {}),
    ...(name ? { name } : {}),
  });
}

/** The providerID the simulated infrastructure provider gives a Machine (pure). */
export function simulatedProviderID(machine: KubeObject): string {
  return `simulated://${machine.metadata.namespace ?? 'default'}/${machine.metadata.name}`;
}

/** The firmware UUID the simulated infrastructure gives a Machine: derived from its UID (pure). */
export function machineSystemUUID(machine: KubeObject): string {
  return nameBasedUuid(`machine/${machine.metadata.uid ?? machine.metadata.name}`);
}

interface MachineCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

function machineConditions(
  machine: MachineObject,
  running: boolean,
  now: Date,
): MachineCondition[] {
  const previous = (machine.status?.conditions as MachineCondition[] | undefined) ?? [];
  const generation = machine.metadata.generation;
  const entry = (type: string, holds: boolean, reason: string, message = ''): MachineCondition => {
    const status = holds ? 'True' : 'False';
    const prior = previous.find((condition) => condition.type === type);
    return {
      type,
      status,
      reason,
      message,
      lastTransitionTime: prior?.status === status ? prior.lastTransitionTime : formatTime(now),
      ...(generation ? { observedGeneration: generation } : {}),
    };
  };
  return [
    entry('BootstrapConfigReady', true, 'Ready'),
    entry('InfrastructureReady', running, running ? 'Ready' : 'NotReady'),
    entry('NodeReady', running, running ? 'NodeReady' : 'NodeDoesNotExist'),
    entry('NodeHealthy', running, running ? 'NodeHealthy' : 'NodeDoesNotExist'),
    entry('Ready', running, running ? 'Ready' : 'NotReady'),
    entry('Available', running, running ? 'Available' : 'NotReady'),
  ];
}

/**
 * The status the Machine controller writes (pure): Provisioning while no Node has joined,
 * Running with nodeRef, addresses and nodeInfo once it has.
 */
export function machineStatus(
  machine: MachineObject,
  node: { name: string; address: string; nodeInfo: Record<string, string> } | undefined,
  now: Date,
): Record<string, unknown> {
  const generation = machine.metadata.generation;
  return {
    ...(generation ? { observedGeneration: generation } : {}),
    phase: node ? 'Running' : 'Provisioning',
    lastUpdated: formatTime(now),
    initialization: {
      bootstrapDataSecretCreated: true,
      infrastructureProvisioned: node !== undefined,
    },
    ...(node
      ? {
          nodeRef: { name: node.name },
          addresses: [
            { type: 'InternalIP', address: node.address },
            { type: 'Hostname', address: node.name },
          ],
          nodeInfo: node.nodeInfo,
        }
      : {}),
    conditions: machineConditions(machine, node !== undefined, now),
  };
}

export interface ClusterAPISimulatorOptions extends CellNodeOptions {
  /** How often Machines are listed; default 1 s. */
  intervalMs?: number;
  /** Time from first sight of a Machine (with its bootstrap data) until its Node registers; default 0. */
  bootMs?: number;
  /** Handle only Machines this returns true for; default those of a GPUCellPool. */
  filter?: (machine: MachineObject) => boolean;
  log?: Log;
}

export interface JoinedMachine extends CellNode {
  namespace: string;
  machine: string;
  machineUid: string;
  joinedAt: Date;
}

/**
 * The Cluster API simulator: every `intervalMs` it lists the Machines in all namespaces and brings
 * each new one (by UID) up once its bootstrap data exists.
 */
export class ClusterAPISimulator extends PollingActor<ClusterAPISimulatorOptions> {
  private readonly seen = new Map<string, Date>();
  /** Machines whose Node has joined, by Machine UID. */
  readonly joined = new Map<string, JoinedMachine>();

  constructor(client: KubeClient, options: ClusterAPISimulatorOptions = {}) {
    super(client, options, 'cluster-api simulator', 1000);
  }

  async pollOnce(): Promise<void> {
    const machines = (await listIfServed(this.client, machinesPath())) as MachineObject[];
    const now = new Date();
    const present = new Set<string>();
    for (const machine of machines) {
      const uid = machine.metadata.uid ?? `${machine.metadata.namespace}/${machine.metadata.name}`;
      present.add(uid);
      if (this.joined.has(uid) || machine.metadata.deletionTimestamp) continue;
      if (!(this.options.filter ?? isPoolMachine)(machine)) continue;
      try {
        await this.bringUp(machine, uid, now);
      } catch (error) {
        if (!isNotFound(error)) throw error; // the Machine went away meanwhile
      }
    }
    for (const [uid, joined] of this.joined) {
      if (present.has(uid)) continue;
      this.joined.delete(uid);
      this.seen.delete(uid);
      await deleteNode(this.client, joined.registration.name);
    }
  }

  /** The join data of a Machine, or undefined while it does not exist yet. */
  private async bootIdentity(machine: MachineObject): Promise<BootIdentity | undefined> {
    const namespace = machine.metadata.namespace ?? 'default';
    const bootstrap = machine.spec?.bootstrap;
    if (bootstrap?.dataSecretName) {
      const secret = await findSecret(this.client, namespace, bootstrap.dataSecretName);
      const value = secretValue(secret, 'value');
      return value === undefined ? undefined : bootIdentityFromUserData(value);
    }
    const ref = bootstrap?.configRef;
    if (ref?.apiGroup && ref.kind && ref.name) {
      const resources = await this.servedResources(ref.apiGroup);
      const served = resources.find((entry) => entry.kind === ref.kind);
      if (!served) return undefined;
      const config = await this.client.find(
        resourcePath({
          apiVersion: served.apiVersion,
          resource: served.resource,
          namespace,
          name: ref.name,
        }),
      );
      return config ? bootIdentityFromKubeadmConfig(config) : undefined;
    }
    return undefined;
  }

  private async servedResources(
    group: string,
  ): Promise<{ apiVersion: string; resource: string; kind: string }[]> {
    try {
      const discovered = await this.client.request<{
        preferredVersion?: { groupVersion: string };
      }>('GET', `/apis/${group}`);
      const apiVersion = discovered.preferredVersion?.groupVersion;
      if (!apiVersion) return [];
      return (await this.client.resources(apiVersion)).map((entry) => ({
        apiVersion,
        resource: entry.name,
        kind: entry.kind,
      }));
    } catch (error) {
      if (isNotFound(error)) return [];
      throw error;
    }
  }

  private async bringUp(machine: MachineObject, uid: string, now: Date): Promise<void> {
    const namespace = machine.metadata.namespace ?? 'default';
    const path = machinesPath(namespace, machine.metadata.name);
    const boot = await this.bootIdentity(machine);
    if (boot === undefined) return; // Pending: no bootstrap data yet
    if (!this.seen.has(uid)) this.seen.set(uid, now);
    const seenAt = this.seen.get(uid) ?? now;
    if (now.getTime() - seenAt.getTime() < (this.options.bootMs ?? 0)) {
      if (machine.status?.phase !== 'Provisioning') {
        await this.client.patchStatus(
          path,
          { status: machineStatus(machine, undefined, now) },
          CLUSTER_API_FIELD_MANAGER,
        );
      }
      return;
    }
    const providerID = simulatedProviderID(machine);
    const cell = cellNodeRegistration({
      machineName: machine.metadata.name,
      boot,
      poolLabels: await poolNodeLabels(this.client, machine),
      systemUUID: machineSystemUUID(machine),
      providerID,
      options: this.options,
    });
    // The kubelet registers first; the Machine controller then finds the Node by providerID.
    const node = await registerNode(this.client, cell.registration, {
      fieldManager: CELL_KUBELET_FIELD_MANAGER,
    });
    const nodeStatus = node.status as {
      addresses?: { type: string; address: string }[];
      nodeInfo?: Record<string, string>;
    };
    if (machine.spec?.providerID !== providerID) {
      await this.client.patch(path, { spec: { providerID } }, CLUSTER_API_FIELD_MANAGER);
    }
    const current = await this.client.get<MachineObject>(path);
    await this.client.patchStatus(
      path,
      {
        status: machineStatus(
          current,
          {
            name: cell.registration.name,
            address:
              nodeStatus.addresses?.find((address) => address.type === 'InternalIP')?.address ??
              cell.registration.address ??
              '',
            nodeInfo: nodeStatus.nodeInfo ?? {},
          },
          new Date(),
        ),
      },
      CLUSTER_API_FIELD_MANAGER,
    );
    this.joined.set(uid, {
      ...cell,
      namespace,
      machine: machine.metadata.name,
      machineUid: uid,
      joinedAt: new Date(),
    });
    this.options.log?.(
      `cluster-api: Machine ${namespace}/${machine.metadata.name} running; Node ${cell.registration.name} registered (labels from ${cell.labelSource})`,
    );
  }
}
