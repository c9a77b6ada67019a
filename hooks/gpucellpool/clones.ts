/**
 * The Cluster API clones of a cell: its bootstrap config and infrastructure machine, cloned from
 * the pool's templates as Cluster API's MachineSet makes them: owned by the pool, but not as its
 * controller, so that Cluster API's Machine controller can make the Machine their controller
 * (docs/design/decisions.md D26). A KubeadmConfig clone gets the pool's Node labels in its
 * kubelet `node-labels`.
 */
import { API_VERSION } from '../api/kinds.js';
import type { GPUCellPool, TypedObjectReference } from '../generated/types/index.js';
import { isJsonObject } from '../json/json.js';
import type { KubernetesObject, OwnerReference } from '../metacontroller/protocol.js';
import {
  CLONED_FROM_GROUPKIND_ANNOTATION,
  CLONED_FROM_NAME_ANNOTATION,
  KUBEADM_BOOTSTRAP_GROUP,
  LABEL_KEYS,
  NODE_LABELS_ARG,
} from './constants.js';
import { childLabels, type CellIdentity } from './machines.js';
import { cloneRef, groupOf } from './names.js';
import type { TemplateObject } from './objects.js';
import { poolNodeLabels } from './template.js';

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
