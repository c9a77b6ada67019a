/**
 * The kubecell-gpucellpool customize hook: which objects the sync hook needs to see.
 *
 * Metacontroller caches this answer per pool UID and generation for 20 minutes, so it depends
 * on the spec and the name only (and the controller's settings), never on status. The rules
 * rely on `version: v2`: label-selector rules span every namespace, and `namespace` + `names`
 * rules may name spec.namespace (the pool itself is cluster-scoped).
 *
 * 1. the join Secret `spec.bootstrap.joinSecretRef` (Opaque bootstrap only);
 * 2. the GPU's ResourceClaim or ResourceClaimTemplate (`resource.k8s.io/v1`), for the name of
 *    its device request;
 * 3. every pod (a pod not yet scheduled names no Node to select on; the hook keeps the pods of
 *    consumer namespaces) and the consumer namespaces (the configured label selector);
 * 4. Cluster API pools: the bootstrap config template and the infrastructure machine template,
 *    and the clones of both made for this pool's cells (labelled `kubecell.io/pool=<pool>`).
 *
 * The machines, the rendered Secrets and the Nodes are children, not related objects.
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

export function gpuCellPoolRelatedResources(
  pool: GPUCellPool,
  config: Pick<GPUCellPoolConfig, 'consumerNamespaceLabels'>,
): RelatedResourceRule[] {
  const { spec } = pool;
  const namespace = spec.namespace;
  const rules: RelatedResourceRule[] = [];
  const joinSecret =
    spec.bootstrap?.provider === 'Opaque' ? spec.bootstrap.joinSecretRef : undefined;
  if (joinSecret !== undefined) {
    rules.push({ apiVersion: 'v1', resource: 'secrets', namespace, names: [joinSecret.name] });
  }
  if (spec.gpu.resourceClaimName !== undefined) {
    rules.push({
      apiVersion: API_VERSIONS.resource,
      resource: 'resourceclaims',
      namespace,
      names: [spec.gpu.resourceClaimName],
    });
  }
  if (spec.gpu.resourceClaimTemplateName !== undefined) {
    rules.push({
      apiVersion: API_VERSIONS.resource,
      resource: 'resourceclaimtemplates',
      namespace,
      names: [spec.gpu.resourceClaimTemplateName],
    });
  }
  rules.push(
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
      rules.push(
        {
          apiVersion: template.apiVersion,
          resource: pluralOf(template.kind),
          namespace,
          names: [template.name],
        },
        {
          apiVersion: template.apiVersion,
          resource: pluralOf(clonedKind(template.kind)),
          labelSelector: ownClones,
        },
      );
    }
  }
  return rules;
}

export function customizeGPUCellPool(
  request: CustomizeHookRequest<GPUCellPool>,
  config: Pick<GPUCellPoolConfig, 'consumerNamespaceLabels'>,
): CustomizeHookResponse {
  return { relatedResources: gpuCellPoolRelatedResources(request.parent, config) };
}
