/**
 * The objects of one cell incarnation, rendered from the pool's spec and the cell's identity.
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
 * config template, clones.ts) or `bootstrap.dataSecretName` (the rendered user-data Secret, key
 * `value`).
 *
 * Every child carries `app.kubernetes.io/managed-by: kubecell`, `kubecell.io/pool` and
 * `kubecell.io/gpu-cell`; Metacontroller adds `controller-uid` and the owner reference.
 */
import type { GPUCellPool } from '../generated/types/index.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import {
  API_VERSIONS,
  CLUSTER_API_DATA_KEY,
  EXCLUDE_NODE_DRAINING_ANNOTATION,
  JOIN_CONTENT_HASH_ANNOTATION,
  KUBEVIRT_USER_DATA_KEY,
  LABEL_KEYS,
  MANAGED_BY,
  SPEC_DEFAULTS,
  VM_NAMES,
  VM_RUN_STRATEGY,
} from './constants.js';
import { cloneRef, groupOf } from './names.js';

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

type KubeVirtSpec = NonNullable<GPUCellPool['spec']['provisioner']['kubeVirt']>;
type MultusNetwork = NonNullable<KubeVirtSpec['networks']>[number];

export function renderVirtualMachine(
  pool: GPUCellPool,
  identity: CellIdentity,
  gpuRequestName: string,
): KubernetesObject & { spec: Record<string, unknown> } {
  const kubeVirt = pool.spec.provisioner.kubeVirt;
  if (kubeVirt === undefined) throw new Error('renderVirtualMachine: not a KubeVirt pool');
  // The name `default` is the pod network's; a Multus network of that name makes KubeVirt
  // refuse the VM (a CEL rule on spec.provisioner.kubeVirt.networks should say so first).
  const multus = kubeVirt.networks ?? [];
  return {
    apiVersion: API_VERSIONS.virtualMachine,
    kind: 'VirtualMachine',
    metadata: {
      name: identity.machine,
      namespace: pool.spec.namespace,
      labels: childLabels(pool, identity.cell),
    },
    spec: {
      runStrategy: VM_RUN_STRATEGY,
      template: {
        metadata: {
          labels: { [LABEL_KEYS.cell]: identity.cell, [LABEL_KEYS.pool]: pool.metadata.name },
        },
        spec: {
          domain: vmDomain(kubeVirt, identity, multus, gpuRequestName),
          networks: [
            { name: VM_NAMES.podNetwork, pod: {} },
            ...multus.map((network) => ({
              name: network.name,
              multus: { networkName: network.networkAttachmentDefinition },
            })),
          ],
          resourceClaims: [vmClaim(pool.spec.gpu)],
          volumes: vmVolumes(kubeVirt, identity),
        },
      },
    },
  };
}

/** The VM's `template.spec.domain`: CPU, memory, firmware, disks, interfaces and the GPU. */
function vmDomain(
  kubeVirt: KubeVirtSpec,
  identity: CellIdentity,
  multus: readonly MultusNetwork[],
  gpuRequestName: string,
): Record<string, unknown> {
  const firmware = kubeVirt.firmware ?? SPEC_DEFAULTS.firmware;
  return {
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
      gpus: [{ name: VM_NAMES.gpu, claimName: VM_NAMES.claim, requestName: gpuRequestName }],
    },
  };
}

/** The VM's DRA claim: the named ResourceClaim, or one from the ResourceClaimTemplate. */
function vmClaim(gpu: GPUCellPool['spec']['gpu']): Record<string, unknown> {
  return gpu.resourceClaimName !== undefined
    ? { name: VM_NAMES.claim, resourceClaimName: gpu.resourceClaimName }
    : { name: VM_NAMES.claim, resourceClaimTemplateName: gpu.resourceClaimTemplateName };
}

/** The boot disk and the cloud-init disk (the rendered user-data Secret). */
function vmVolumes(kubeVirt: KubeVirtSpec, identity: CellIdentity): Record<string, unknown>[] {
  return [
    { name: VM_NAMES.rootDisk, containerDisk: { image: kubeVirt.image.containerDisk } },
    {
      name: VM_NAMES.cloudInitDisk,
      cloudInitNoCloud: { secretRef: { name: identity.secret } },
    },
  ];
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
 * A cell's user-data Secret, annotated with the join Secret content it was rendered from
 * (kubecell.io/join-content-hash).
 */
export function renderUserDataSecret(
  pool: GPUCellPool,
  identity: CellIdentity,
  userData: string,
  joinContentHash: string,
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
      annotations: { [JOIN_CONTENT_HASH_ANNOTATION]: joinContentHash },
    },
    type: 'Opaque',
    data: { [key]: Buffer.from(userData, 'utf8').toString('base64') },
  } as KubernetesObject;
}
