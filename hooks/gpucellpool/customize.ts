/**
 * The GPUCellPool customize hook (both controllers, kubecell-gpucellpool-kubevirt and
 * kubecell-gpucellpool-cluster-api): which objects the sync hook needs to see.
 *
 * Metacontroller caches this answer per pool UID and generation for 20 minutes, so it depends
 * on the spec and the name only (and the controller's settings), never on status. The rules
 * rely on `version: v2`: label-selector rules span every namespace, and `namespace` + `names`
 * rules may name spec.namespace (the pool itself is cluster-scoped).
 *
 * 1. the join Secret `spec.bootstrap.joinSecretRef` (Opaque bootstrap only);
 * 2. KubeVirt pools: the GPU's ResourceClaim or ResourceClaimTemplate (`resource.k8s.io/v1`),
 *    for the name of its device request (a Cluster API cell gets its GPU from the infrastructure
 *    template, so a Cluster API pool reads no claim);
 * 3. every pod (a pod not yet scheduled names no Node to select on; the hook keeps the pods of
 *    consumer namespaces) and the consumer namespaces (the configured label selector);
 * 4. Cluster API pools: the bootstrap config template and the infrastructure machine template,
 *    and the clones of both made for this pool's cells (labelled `kubecell.io/pool=<pool>`).
 *
 * The machines, the rendered Secrets and the Nodes are children, not related objects.
 *
 * Rules 2 and 4 name kinds a cluster may not serve (DRA's `resource.k8s.io/v1` before
 * Kubernetes 1.34, a Cluster API provider that is not installed). A single rule for a resource
 * the apiserver does not serve fails every sync of the pool inside Metacontroller, before the
 * sync hook is called (served-kinds.ts says where). So each of those kinds is first looked up
 * through API discovery: a kind that is not served is left out, and the sync hook, which then
 * finds its group missing from `related`, reports it (`KindNotServed`). A kind whose answer is
 * not known (no API credentials, discovery failing) is asked for as before, under the plural
 * Cluster API providers use (names.ts, `pluralOf`). Metacontroller caches the answer for 20
 * minutes per pool generation (pkg/controller/common/customize/manager.go, `newResponseCache`):
 * a kind installed later is seen within that time, or at once after a change to the pool's spec.
 */
import type { GPUCellPool } from '../generated/types/index.js';
import type {
  CustomizeHookRequest,
  CustomizeHookResponse,
  RelatedResourceRule,
} from '../metacontroller/protocol.js';
import type { GPUCellPoolConfig } from './config.js';
import { API_VERSIONS, LABEL_KEYS } from './constants.js';
import { clonedKind, pluralOf } from './names.js';
import type { KindLookup, ServedKinds } from './served-kinds.js';

/** A rule whose resource is looked up: its kind, and the rule without apiVersion and resource. */
interface LookedUp {
  apiVersion: string;
  kind: string;
  rule: Omit<RelatedResourceRule, 'apiVersion' | 'resource'>;
}

/** A rule of a core kind, or one to look up, in the order of the answer. */
type Entry = RelatedResourceRule | LookedUp;

function entries(
  pool: GPUCellPool,
  config: Pick<GPUCellPoolConfig, 'consumerNamespaceLabels'>,
): Entry[] {
  const { spec } = pool;
  const namespace = spec.namespace;
  const out: Entry[] = [];
  const joinSecret =
    spec.bootstrap?.provider === 'Opaque' ? spec.bootstrap.joinSecretRef : undefined;
  if (joinSecret !== undefined) {
    out.push({ apiVersion: 'v1', resource: 'secrets', namespace, names: [joinSecret.name] });
  }
  const kubeVirt = spec.provisioner.type === 'KubeVirt';
  if (kubeVirt && spec.gpu.resourceClaimName !== undefined) {
    out.push({
      apiVersion: API_VERSIONS.resource,
      kind: 'ResourceClaim',
      rule: { namespace, names: [spec.gpu.resourceClaimName] },
    });
  }
  if (kubeVirt && spec.gpu.resourceClaimTemplateName !== undefined) {
    out.push({
      apiVersion: API_VERSIONS.resource,
      kind: 'ResourceClaimTemplate',
      rule: { namespace, names: [spec.gpu.resourceClaimTemplateName] },
    });
  }
  out.push(
    { apiVersion: 'v1', resource: 'pods', labelSelector: {} },
    {
      apiVersion: 'v1',
      resource: 'namespaces',
      labelSelector: { matchLabels: { ...config.consumerNamespaceLabels } },
    },
  );
  const capi = spec.provisioner.type === 'ClusterAPI' ? spec.provisioner.clusterAPI : undefined;
  if (capi !== undefined) {
    const ownClones = { matchLabels: { [LABEL_KEYS.pool]: pool.metadata.name } };
    for (const template of [capi.bootstrapConfigTemplateRef, capi.infrastructureTemplateRef]) {
      if (template === undefined) continue;
      out.push(
        {
          apiVersion: template.apiVersion,
          kind: template.kind,
          rule: { namespace, names: [template.name] },
        },
        {
          apiVersion: template.apiVersion,
          kind: clonedKind(template.kind),
          rule: { labelSelector: ownClones },
        },
      );
    }
  }
  return out;
}

function resolve(
  wanted: readonly Entry[],
  answers: readonly (KindLookup | undefined)[],
): RelatedResourceRule[] {
  return wanted.flatMap((entry, index): RelatedResourceRule[] => {
    if (!('kind' in entry)) return [entry];
    const answer = answers[index];
    if (answer?.state === 'notServed') return [];
    const resource = answer?.state === 'served' ? answer.resource : pluralOf(entry.kind);
    return [{ apiVersion: entry.apiVersion, resource, ...entry.rule }];
  });
}

/** Every rule of one pool, each kind taken as served under the plural providers use. */
export function gpuCellPoolRelatedResources(
  pool: GPUCellPool,
  config: Pick<GPUCellPoolConfig, 'consumerNamespaceLabels'>,
): RelatedResourceRule[] {
  return resolve(entries(pool, config), []);
}

/**
 * The rules of one pool as the customize hook answers them: the kinds API discovery says are not
 * served are left out, and the others take the resource name discovery gives.
 */
export async function servedRelatedResources(
  pool: GPUCellPool,
  config: Pick<GPUCellPoolConfig, 'consumerNamespaceLabels'>,
  served: ServedKinds,
): Promise<RelatedResourceRule[]> {
  const wanted = entries(pool, config);
  const answers = await Promise.all(
    wanted.map((entry) =>
      'kind' in entry ? served.lookup(entry.apiVersion, entry.kind) : undefined,
    ),
  );
  return resolve(wanted, answers);
}

export async function customizeGPUCellPool(
  request: CustomizeHookRequest<GPUCellPool>,
  config: Pick<GPUCellPoolConfig, 'consumerNamespaceLabels'>,
  served: ServedKinds,
): Promise<CustomizeHookResponse> {
  return { relatedResources: await servedRelatedResources(request.parent, config, served) };
}
