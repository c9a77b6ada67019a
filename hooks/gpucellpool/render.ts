/**
 * The children of a pool's cells, rendered from the pool's spec and the cell's identity.
 *
 * KubeVirt (`kubevirt.io/v1` VirtualMachine, one per cell incarnation):
 * - `spec.runStrategy: Always` (`spec.running` is deprecated and mutually exclusive with it);
 * - `template.spec.domain.cpu.cores`, `domain.memory.guest` (KubeVirt derives the memory
 *   request from it);
 * - `domain.firmware.uuid` = the incarnation's firmware UUID, and `firmware.bootloader`
 *   `{efi: {secureBoot: false}}` for `uefi` (KubeVirt's EFI defaults to secure boot, which
 *   needs SMM and signed images) or `{bios: {}}` for `bios`;
 * - the GPU through DRA: `template.spec.resourceClaims[{name: gpu, resourceClaimName |
 *   resourceClaimTemplateName}]` and `domain.devices.gpus[{name: gpu, claimName: gpu,
 *   requestName}]` (KubeVirt's GPUsWithDRA feature gate);
 * - the pod network (`masquerade`) plus one `bridge` interface per Multus network
 *   (`networks[].multus.networkName: <namespace>/<name>`);
 * - the boot disk from the containerDisk image, and a `cloudInitNoCloud` disk whose
 *   `secretRef` is the rendered user-data Secret (key `userdata`).
 *
 * Cluster API (`cluster.x-k8s.io/v1beta2` Machine, one per cell incarnation): `clusterName`,
 * `version`, `infrastructureRef` and either `bootstrap.configRef` (a clone of the bootstrap
 * config template) or `bootstrap.dataSecretName` (the rendered user-data Secret, key `value`).
 * The clones of the templates are rendered once the Machine exists, with the Machine as their
 * controller, which is what Cluster API's Machine controller sets anyway.
 *
 * Every child carries `app.kubernetes.io/managed-by: kubecell`, `kubecell.io/pool` and
 * `kubecell.io/gpu-cell`; Metacontroller adds `controller-uid` and the owner reference.
 */
import type { GPUCellPool, TypedObjectReference } from '../generated/types/index.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import {
  API_VERSIONS,
  CLONED_FROM_GROUPKIND_ANNOTATION,
  CLONED_FROM_NAME_ANNOTATION,
  CLUSTER_API_DATA_KEY,
  EXCLUDE_NODE_DRAINING_ANNOTATION,
  KUBEVIRT_USER_DATA_KEY,
  LABEL_KEYS,
  MANAGED_BY,
  RETIRING_TAINT,
  SPEC_DEFAULTS,
  VM_NAMES,
  VM_RUN_STRATEGY,
} from './constants.js';
import { cloneRef, groupOf } from './names.js';
import type { MachineObject, NodeObject, TemplateObject } from './objects.js';

/** What identifies one cell incarnation. */
export interface CellIdentity {
  cell: string;
  machine: string;
  uuid: string;
  secret: string;
}

export function childLabels(pool: GPUCellPool, cell: string): Record<string, string> {
  return {
    [LABEL_KEYS.managedBy]: MANAGED_BY,
    [LABEL_KEYS.cell]: cell,
    [LABEL_KEYS.pool]: pool.metadata.name,
  };
}

export function renderVirtualMachine(
  pool: GPUCellPool,
  identity: CellIdentity,
  gpuRequestName: string,
): KubernetesObject & { spec: Record<string, unknown> } {
  const kubeVirt = pool.spec.provisioner.kubeVirt;
  if (kubeVirt === undefined) throw new Error('renderVirtualMachine: not a KubeVirt pool');
  const firmware = kubeVirt.firmware ?? SPEC_DEFAULTS.firmware;
  const { gpu } = pool.spec;
  const claim =
    gpu.resourceClaimName !== undefined
      ? { name: VM_NAMES.claim, resourceClaimName: gpu.resourceClaimName }
      : { name: VM_NAMES.claim, resourceClaimTemplateName: gpu.resourceClaimTemplateName };
  // The name `default` is the pod network's; a Multus network of that name makes KubeVirt
  // refuse the VM (a CEL rule on spec.provisioner.kubeVirt.networks should say so first).
  const multus = kubeVirt.networks ?? [];
  const labels = childLabels(pool, identity.cell);
  return {
    apiVersion: API_VERSIONS.virtualMachine,
    kind: 'VirtualMachine',
    metadata: { name: identity.machine, namespace: pool.spec.namespace, labels },
    spec: {
      runStrategy: VM_RUN_STRATEGY,
      template: {
        metadata: {
          labels: { [LABEL_KEYS.cell]: identity.cell, [LABEL_KEYS.pool]: pool.metadata.name },
        },
        spec: {
          domain: {
            cpu: { cores: kubeVirt.cpu },
            memory: { guest: kubeVirt.memory },
            firmware: {
              uuid: identity.uuid,
              bootloader: firmware === 'bios' ? { bios: {} } : { efi: { secureBoot: false } },
            },
            devices: {
              disks: [
                { name: VM_NAMES.rootDisk, disk: { bus: 'virtio' } },
                { name: VM_NAMES.cloudInitDisk, disk: { bus: 'virtio' } },
              ],
              interfaces: [
                { name: VM_NAMES.podNetwork, masquerade: {} },
                ...multus.map((network) => ({ name: network.name, bridge: {} })),
              ],
              gpus: [
                { name: VM_NAMES.gpu, claimName: VM_NAMES.claim, requestName: gpuRequestName },
              ],
            },
          },
          networks: [
            { name: VM_NAMES.podNetwork, pod: {} },
            ...multus.map((network) => ({
              name: network.name,
              multus: { networkName: network.networkAttachmentDefinition },
            })),
          ],
          resourceClaims: [claim],
          volumes: [
            { name: VM_NAMES.rootDisk, containerDisk: { image: kubeVirt.image.containerDisk } },
            {
              name: VM_NAMES.cloudInitDisk,
              cloudInitNoCloud: { secretRef: { name: identity.secret } },
            },
          ],
        },
      },
    },
  };
}

function contractRef(ref: { apiVersion: string; kind: string; name: string }) {
  return { apiGroup: groupOf(ref.apiVersion), kind: ref.kind, name: ref.name };
}

export function renderMachine(
  pool: GPUCellPool,
  identity: CellIdentity,
): KubernetesObject & { spec: Record<string, unknown> } {
  const capi = pool.spec.provisioner.clusterAPI;
  if (capi === undefined) throw new Error('renderMachine: not a ClusterAPI pool');
  const bootstrap =
    capi.bootstrapConfigTemplateRef !== undefined
      ? { configRef: contractRef(cloneRef(capi.bootstrapConfigTemplateRef, identity.machine)) }
      : { dataSecretName: identity.secret };
  return {
    apiVersion: API_VERSIONS.machine,
    kind: 'Machine',
    metadata: {
      name: identity.machine,
      namespace: pool.spec.namespace,
      labels: { ...childLabels(pool, identity.cell), [LABEL_KEYS.clusterName]: capi.clusterName },
      // Cluster API drains a Node (with evictions) before deleting its Machine; the pool only
      // deletes a Machine once no consumer pod holds its GPU, and never evicts.
      annotations: { [EXCLUDE_NODE_DRAINING_ANNOTATION]: 'true' },
    },
    spec: {
      clusterName: capi.clusterName,
      bootstrap,
      infrastructureRef: contractRef(cloneRef(capi.infrastructureTemplateRef, identity.machine)),
      ...(capi.version !== undefined ? { version: capi.version } : {}),
    },
  };
}

/**
 * A Cluster API template cloned for one Machine, as Cluster API's own `CreateFromTemplate` does:
 * the template's `spec.template.spec`, its labels and annotations, the cloned-from annotations,
 * the cluster-name label, and the Machine as controller owner (so that Cluster API's Machine
 * controller, which sets exactly that owner, does not find the object owned by another
 * controller).
 */
export function renderClone(
  pool: GPUCellPool,
  identity: CellIdentity,
  templateRef: TypedObjectReference,
  template: TemplateObject,
  machine: MachineObject,
): KubernetesObject {
  const capi = pool.spec.provisioner.clusterAPI;
  const clone = cloneRef(templateRef, identity.machine);
  const source = template.spec?.template;
  return {
    apiVersion: clone.apiVersion,
    kind: clone.kind,
    metadata: {
      name: clone.name,
      namespace: pool.spec.namespace,
      labels: {
        ...(source?.metadata?.labels ?? {}),
        ...childLabels(pool, identity.cell),
        ...(capi ? { [LABEL_KEYS.clusterName]: capi.clusterName } : {}),
      },
      annotations: {
        ...(source?.metadata?.annotations ?? {}),
        [CLONED_FROM_NAME_ANNOTATION]: templateRef.name,
        [CLONED_FROM_GROUPKIND_ANNOTATION]: `${templateRef.kind}.${groupOf(templateRef.apiVersion)}`,
      },
      ownerReferences: [
        {
          apiVersion: API_VERSIONS.machine,
          kind: 'Machine',
          name: machine.metadata.name,
          uid: machine.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: structuredClone(source?.spec ?? {}),
  } as KubernetesObject;
}

export function renderUserDataSecret(
  pool: GPUCellPool,
  identity: CellIdentity,
  userData: string,
): KubernetesObject {
  const key =
    pool.spec.provisioner.type === 'ClusterAPI' ? CLUSTER_API_DATA_KEY : KUBEVIRT_USER_DATA_KEY;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: identity.secret,
      namespace: pool.spec.namespace,
      labels: childLabels(pool, identity.cell),
    },
    type: 'Opaque',
    data: { [key]: Buffer.from(userData, 'utf8').toString('base64') },
  } as KubernetesObject;
}

/**
 * A Node the pool keeps. Only the fields the pool manages are returned: everything else
 * belongs to the kubelet and the node controllers, and returning it would make Metacontroller
 * write it back (an older copy, or with server-side apply, take it over).
 */
export function keptNode(node: NodeObject): KubernetesObject {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name: node.metadata.name } };
}

/**
 * A retiring cell's Node: cordoned and tainted `kubecell.io/retiring:NoSchedule`, with the
 * taints it already has (the list is written whole).
 */
export function retiringNode(node: NodeObject): KubernetesObject {
  const taints = (node.spec?.taints ?? []).filter(
    (taint) => !(taint.key === RETIRING_TAINT.key && taint.effect === RETIRING_TAINT.effect),
  );
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: node.metadata.name },
    spec: {
      unschedulable: true,
      taints: [...taints, { key: RETIRING_TAINT.key, effect: RETIRING_TAINT.effect }],
    },
  } as KubernetesObject;
}

export function isRetiringNode(node: NodeObject): boolean {
  return (
    node.spec?.unschedulable === true &&
    (node.spec.taints ?? []).some(
      (taint) => taint.key === RETIRING_TAINT.key && taint.effect === RETIRING_TAINT.effect,
    )
  );
}
