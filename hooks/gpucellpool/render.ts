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
 * The clones of the templates are rendered with the Machine, as Cluster API's MachineSet makes
 * them: owned by the pool, but not as its controller, so that Cluster API's Machine controller
 * can make the Machine their controller (docs/design/decisions.md D26). A KubeadmConfig clone
 * gets the pool's Node labels in its kubelet `node-labels`.
 *
 * Every child carries `app.kubernetes.io/managed-by: kubecell`, `kubecell.io/pool` and
 * `kubecell.io/gpu-cell`; Metacontroller adds `controller-uid` and the owner reference.
 */
import { API_VERSION } from '../api/kinds.js';
import type { GPUCellPool, TypedObjectReference } from '../generated/types/index.js';
import { isJsonObject } from '../json/json.js';
import type { KubernetesObject, OwnerReference } from '../metacontroller/protocol.js';
import {
  API_VERSIONS,
  CLONED_FROM_GROUPKIND_ANNOTATION,
  CLONED_FROM_NAME_ANNOTATION,
  CLUSTER_API_DATA_KEY,
  EXCLUDE_NODE_DRAINING_ANNOTATION,
  KUBEADM_BOOTSTRAP_GROUP,
  KUBEVIRT_USER_DATA_KEY,
  LABEL_KEYS,
  MANAGED_BY,
  NODE_LABELS_ARG,
  RETIRING_TAINT,
  SPEC_DEFAULTS,
  VM_NAMES,
  VM_RUN_STRATEGY,
} from './constants.js';
import { cloneRef, groupOf } from './names.js';
import type { NodeObject, TemplateObject } from './objects.js';
import { poolNodeLabels } from './template.js';

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
 * The owner reference of a Cluster API clone: the pool, **not** as controller. Metacontroller adds
 * its own controller reference to every object a sync hook returns unless one of the object's
 * ownerReferences already has the pool's UID (`claimOwnership`,
 * pkg/controller/common/manage_children.go), and Cluster API's Machine controller makes the
 * Machine the controller of its bootstrap config and infrastructure machine, which
 * `controllerutil.SetControllerReference` refuses while another controller is set
 * (`ensureExternalOwnershipAndWatch`, internal/controllers/machine/machine_controller_phases.go).
 * A plain owner reference satisfies both, as the MachineSet's does on the clones it makes
 * (`syncReplicas`, internal/controllers/machineset/machineset_controller.go). It also lets the
 * garbage collector remove a clone left behind once the pool is gone.
 */
export function poolOwnerReference(pool: GPUCellPool): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: 'GPUCellPool',
    name: pool.metadata.name,
    uid: pool.metadata.uid ?? '',
    controller: false,
  };
}

/** The kubeadm bootstrap provider's template, whose clone carries the kubelet's node labels. */
export function isKubeadmConfigTemplate(ref: TypedObjectReference): boolean {
  return (
    groupOf(ref.apiVersion) === KUBEADM_BOOTSTRAP_GROUP && ref.kind === 'KubeadmConfigTemplate'
  );
}

/**
 * `a=b,c=d` with the pool's labels set: the template's other labels first, as written, then the
 * pool's, sorted (they win over the template's values for the same keys).
 */
export function mergeNodeLabels(written: unknown, pool: Readonly<Record<string, string>>): string {
  const kept = (typeof written === 'string' ? written.split(',') : [])
    .map((entry) => entry.trim())
    .filter((entry) => {
      const at = entry.indexOf('=');
      return at > 0 && !Object.hasOwn(pool, entry.slice(0, at));
    });
  const ours = Object.keys(pool)
    .sort()
    .map((key) => `${key}=${pool[key] ?? ''}`);
  return [...kept, ...ours].join(',');
}

/**
 * A KubeadmConfig spec whose `joinConfiguration.nodeRegistration.kubeletExtraArgs` registers the
 * Node with the pool's labels (`node-labels`, merged with the template's): the list form of
 * v1beta2, or the map form of v1beta1, as the template writes it.
 */
function withPoolNodeLabels(
  spec: Record<string, unknown>,
  apiVersion: string,
  labels: Readonly<Record<string, string>>,
): Record<string, unknown> {
  const join = isJsonObject(spec['joinConfiguration']) ? spec['joinConfiguration'] : {};
  const registration = isJsonObject(join['nodeRegistration']) ? join['nodeRegistration'] : {};
  const args = registration['kubeletExtraArgs'];
  let kubeletExtraArgs: unknown;
  if (Array.isArray(args)) {
    const list = args as unknown[];
    const index = list.findIndex((arg) => isJsonObject(arg) && arg['name'] === NODE_LABELS_ARG);
    const current = index >= 0 ? (list[index] as Record<string, unknown>) : undefined;
    const entry = { name: NODE_LABELS_ARG, value: mergeNodeLabels(current?.['value'], labels) };
    kubeletExtraArgs =
      index >= 0 ? list.map((arg, at) => (at === index ? entry : arg)) : [...list, entry];
  } else if (isJsonObject(args)) {
    kubeletExtraArgs = {
      ...args,
      [NODE_LABELS_ARG]: mergeNodeLabels(args[NODE_LABELS_ARG], labels),
    };
  } else {
    const value = mergeNodeLabels(undefined, labels);
    kubeletExtraArgs = apiVersion.endsWith('/v1beta1')
      ? { [NODE_LABELS_ARG]: value }
      : [{ name: NODE_LABELS_ARG, value }];
  }
  return {
    ...spec,
    joinConfiguration: {
      ...join,
      nodeRegistration: { ...registration, kubeletExtraArgs },
    },
  };
}

/**
 * A Cluster API template cloned for one cell, as Cluster API's own `GenerateTemplate`
 * (controllers/external/util.go) does: the template's `spec.template.spec`, its labels and
 * annotations, the cloned-from annotations and the cluster-name label; owned by the pool but not
 * controlled by it (`poolOwnerReference`), so that the Machine controller takes it over. A
 * KubeadmConfig clone also registers the Node with the pool's labels (`controller-uid=<pool
 * uid>`, which no template written before the pool existed can know).
 */
export function renderClone(
  pool: GPUCellPool,
  identity: CellIdentity,
  templateRef: TypedObjectReference,
  template: TemplateObject,
): KubernetesObject {
  const capi = pool.spec.provisioner.clusterAPI;
  const clone = cloneRef(templateRef, identity.machine);
  const source = template.spec?.template;
  const spec = structuredClone(source?.spec ?? {});
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
      ownerReferences: [poolOwnerReference(pool)],
    },
    spec: isKubeadmConfigTemplate(templateRef)
      ? withPoolNodeLabels(
          spec,
          templateRef.apiVersion,
          poolNodeLabels(pool.metadata.name, pool.metadata.uid ?? '', pool.spec.machineProfile),
        )
      : spec,
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
