/**
 * The ManifestWork `kubecell-vc-<uid>` of one VirtualCluster on a ManifestWork Cell (decision
 * D34): everything its local children would be, for the Cell's cluster.
 *
 * - The host Namespace, labelled as a KubeCell host namespace, with the Pod Security labels and
 *   annotations the host-namespace controller gives a new host namespace, and the
 *   VirtualCluster's UID (label) and name (annotation) the agent seals its kubeconfig for
 *   (HOST_NAMESPACE_VIRTUALCLUSTER).
 * - The isolation baseline's NetworkPolicies, from the host-namespace controller's own
 *   `renderNetworkPolicies` and settings.
 * - The ResourceQuota, LimitRange, k3k Cluster and API NodePort Service, from the
 *   VirtualCluster controller's own render functions: byte for byte its local children. The
 *   k3k Cluster is `CreateOnly`, as the local one is `OnDelete`: created once, never rewritten.
 * - What the cell agent needs to seal the kubeconfig (agent-rbac.ts): the ConfigMap it seals
 *   into, created empty and never rewritten (`CreateOnly`), and a Role with its RoleBinding that
 *   let the agent's ServiceAccount get k3k's kubeconfig Secret and get and update that ConfigMap,
 *   by name: the agent holds nothing on Secrets or ConfigMaps cluster-wide.
 *
 * Feedback: k3k's status of the Cluster (its phase and `Ready` condition, K3K_STATUS_PATHS), the
 * Service's `spec.ports[0].nodePort` (FEEDBACK.nodePort) and the sealed kubeconfig
 * (FEEDBACK.sealedKubeconfig). Deleting the work deletes every manifest but the
 * Namespace and the NetworkPolicies (`SelectivelyOrphan`): VirtualClusters of one namespace
 * share them. The sealed ConfigMap and the Role go with the work.
 */
import type { ResolvedPlacement, VirtualCluster } from '../generated/types/index.js';
import { renderNetworkPolicies } from '../host-namespace/network-policies.js';
import { appliedAnnotations } from '../host-namespace/annotations.js';
import { planPodSecurity } from '../host-namespace/pod-security.js';
import { isLabelValue, LABELS } from '../kube/labels.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import {
  CELL_AGENT_KEY_ANNOTATION,
  FEEDBACK,
  HOST_NAMESPACE_VIRTUALCLUSTER,
  SEALED_KUBECONFIG_KEY,
  sealedKubeconfigConfigMapName,
  virtualClusterWorkName,
} from '../remote/contract.js';
import { CHILD_LABELS, MANAGED_BY } from '../virtualcluster/constants.js';
import { placedChildren } from '../virtualcluster/render.js';
import type { DeliveryConfig } from './config.js';
import {
  createOnly,
  feedbackOf,
  manifestWork,
  orphaning,
  type ManifestWork,
} from '../remote/manifest-work.js';
import {
  AGENT_LABELS,
  agentRoleAndBinding,
  virtualClusterAgentRoleName,
  virtualClusterAgentRules,
  agentConfigMap,
} from './agent-rbac.js';

/** The feedback JSONPaths of a VirtualCluster's work. */
export const NODE_PORT_PATH = '.spec.ports[0].nodePort';
export const SEALED_KUBECONFIG_PATH = `.data.${SEALED_KUBECONFIG_KEY}`;
/**
 * k3k's own status of its Cluster, which K3kReady reads as it reads a local Cluster's. The work
 * agent evaluates a path with k8s.io/client-go/util/jsonpath (missing keys allowed) and keeps
 * the first match (ocm v1.3.1 `pkg/work/spoke/statusfeedback/reader.go`); a filter expression
 * picks the `Ready` condition, as OCM's own well-known Pod rule does
 * (`pkg/work/spoke/statusfeedback/rules/rule.go`). A field k3k has not set comes back as no value.
 */
export const K3K_STATUS_PATHS = Object.freeze([
  { name: FEEDBACK.k3kPhase, path: '.status.phase' },
  { name: FEEDBACK.k3kReadyStatus, path: '.status.conditions[?(@.type=="Ready")].status' },
  { name: FEEDBACK.k3kReadyReason, path: '.status.conditions[?(@.type=="Ready")].reason' },
  { name: FEEDBACK.k3kReadyMessage, path: '.status.conditions[?(@.type=="Ready")].message' },
]);

/** A VirtualCluster with its UID, as Metacontroller always sends it. */
export type DeliveredVirtualCluster = VirtualCluster & { metadata: { uid: string } };

/** Labels naming the VirtualCluster: its name when it is a label value, and its UID. */
function virtualClusterLabels(vc: DeliveredVirtualCluster): Record<string, string> {
  return {
    [CHILD_LABELS.managedBy]: MANAGED_BY,
    ...(isLabelValue(vc.metadata.name) ? { [CHILD_LABELS.virtualCluster]: vc.metadata.name } : {}),
    [HOST_NAMESPACE_VIRTUALCLUSTER.uidLabel]: vc.metadata.uid,
  };
}

/** The annotations the host-namespace controller writes on a new host namespace. */
function baselineAnnotations(config: DeliveryConfig): Record<string, string> {
  const podSecurity = planPodSecurity({}, {}, config.hostNamespace.podSecurityLevel);
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(appliedAnnotations(podSecurity))) {
    if (value !== null) annotations[key] = value;
  }
  return annotations;
}

export function hostNamespaceManifest(
  vc: DeliveredVirtualCluster,
  resolved: ResolvedPlacement,
  config: DeliveryConfig,
): KubernetesObject {
  const podSecurity = planPodSecurity({}, {}, config.hostNamespace.podSecurityLevel);
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: resolved.hostNamespace,
      labels: {
        [LABELS.hostNamespace]: 'true',
        ...podSecurity.labels,
        ...virtualClusterLabels(vc),
      },
      annotations: {
        ...baselineAnnotations(config),
        [HOST_NAMESPACE_VIRTUALCLUSTER.nameAnnotation]: vc.metadata.name,
      },
    },
  };
}

/**
 * The work of `vc`, placed by `resolved` on a ManifestWork Cell of its ManagedCluster. `agentKey`
 * is the public signing key the agent of that ManagedCluster fed back (render.ts), recorded on
 * the work (CELL_AGENT_KEY_ANNOTATION) for the VirtualCluster controller, which accepts only a
 * sealed kubeconfig signed with it; undefined while the agent has published none.
 */
export function renderVirtualClusterWork(
  vc: DeliveredVirtualCluster,
  resolved: ResolvedPlacement,
  config: DeliveryConfig,
  agentKey?: string,
): ManifestWork {
  const { cluster, quota, limitRange, service } = placedChildren(vc, resolved);
  const namespace = hostNamespaceManifest(vc, resolved, config);
  const policies = renderNetworkPolicies(resolved.hostNamespace, config.hostNamespace);
  const sealed = agentConfigMap(
    sealedKubeconfigConfigMapName(vc.metadata.name),
    resolved.hostNamespace,
    AGENT_LABELS,
  );
  const access = agentRoleAndBinding(
    virtualClusterAgentRoleName(vc.metadata.name),
    resolved.hostNamespace,
    virtualClusterAgentRules(vc.metadata.name),
  );
  const manifests = [
    namespace,
    ...policies,
    quota,
    limitRange,
    cluster,
    service,
    ...access,
    sealed,
  ];
  return manifestWork(
    {
      name: virtualClusterWorkName(vc.metadata.uid),
      namespace: resolved.cell.managedClusterName,
      labels: virtualClusterLabels(vc),
      ...(agentKey === undefined ? {} : { annotations: { [CELL_AGENT_KEY_ANNOTATION]: agentKey } }),
    },
    manifests,
    {
      deleteOption: orphaning([namespace, ...policies]),
      manifestConfigs: [
        createOnly(
          cluster,
          K3K_STATUS_PATHS.map((path) => ({ ...path })),
        ),
        feedbackOf(service, [{ name: FEEDBACK.nodePort, path: NODE_PORT_PATH }]),
        createOnly(sealed, [{ name: FEEDBACK.sealedKubeconfig, path: SEALED_KUBECONFIG_PATH }]),
      ],
    },
  );
}
