/**
 * The cell agent's RBAC on a managed cluster (decision D34): exactly what hooks/agent calls
 * (hooks/delivery/agent-rbac.test.ts, and the remote-Cell e2e against a real managed cluster),
 * cluster-wide only where the call cannot be narrowed, by name everywhere else.
 *
 * - ClusterRole `kubecell-cell-agent` (the agent's work): list Nodes, PersistentVolumes, pods,
 *   Services and Namespaces (a report counts them all; RBAC cannot narrow a label selector), and
 *   watch Namespaces (the host namespaces, hooks/agent/watches.ts: what the list already shows);
 *   get the k3k Namespace, k3k's CRDs, its controller Deployment and the CNI and TopoLVM
 *   DaemonSets by name. Nothing on Secrets or ConfigMaps.
 * - Role `kubecell-cell-agent` in AGENT_NAMESPACE (the agent's work): get and update its report
 *   ConfigMaps, the ConfigMap it publishes its signing key in and the Secret it keeps that key
 *   in, get the public-key ConfigMap, by name.
 * - Role `kubecell-<name>-cell-agent` in each host namespace (that VirtualCluster's work): get
 *   and watch k3k's kubeconfig Secret and get and update the sealed-kubeconfig ConfigMap, by
 *   name. A watch with `fieldSelector=metadata.name=<name>` is authorized as a request for that
 *   name (k8s.io/apiserver v0.35.4 `pkg/endpoints/request/requestinfo.go`), so `watch` by name
 *   shows the agent the one Secret `get` already does. It comes and goes with the
 *   VirtualCluster's work.
 *
 * The agent creates nothing. RBAC cannot name what may be created: a POST goes to the collection,
 * so the request has no name (k8s.io/apiserver v0.35.4 `pkg/endpoints/request/requestinfo.go`),
 * and a rule with resourceNames matches only a request naming one of them (k8s.io/kubernetes
 * v1.35.4 `pkg/apis/rbac/v1/evaluation_helpers.go` ResourceNameMatches, used by
 * `plugin/pkg/auth/authorizer/rbac/rbac.go` RuleAllows). So each work creates the ConfigMaps the
 * agent fills, empty and `CreateOnly` (hooks/remote/manifest-work.ts), and the agent only reads and updates
 * them.
 */
import type { KubernetesObject } from '../metacontroller/protocol.js';
import {
  AGENT_IDENTITY_CONFIGMAP,
  AGENT_NAME,
  AGENT_NAMESPACE,
  AGENT_SIGNING_KEY_SECRET,
  SEALING_PUBLIC_KEY_CONFIGMAP,
  sealedKubeconfigConfigMapName,
} from '../remote/contract.js';
import { boundedName, k3kKubeconfigSecretName } from '../virtualcluster/names.js';
import type { ProviderBaseline } from './config.js';

/** Labels of the agent's objects and of its work. */
export const AGENT_LABELS = Object.freeze({
  'app.kubernetes.io/name': 'kubecell',
  'app.kubernetes.io/component': 'cell-agent',
  'app.kubernetes.io/managed-by': 'kubecell',
});

/** One rule of a Role or ClusterRole (rbac.authorization.k8s.io/v1 PolicyRule). */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}

const RBAC_API = 'rbac.authorization.k8s.io/v1';
const names = (...list: string[]): string[] => [...new Set(list)].sort();

/**
 * The ClusterRole's rules: the cluster-wide reads of a report, the watch of the host namespaces,
 * the provider baseline by name.
 */
export function agentClusterRules(baseline: ProviderBaseline): PolicyRule[] {
  return [
    {
      apiGroups: [''],
      resources: ['namespaces', 'nodes', 'persistentvolumes', 'pods', 'services'],
      verbs: ['list'],
    },
    { apiGroups: [''], resources: ['namespaces'], verbs: ['watch'] },
    {
      apiGroups: [''],
      resources: ['namespaces'],
      resourceNames: [baseline.k3kController.namespace],
      verbs: ['get'],
    },
    {
      apiGroups: ['apps'],
      resources: ['deployments'],
      resourceNames: names(baseline.k3kController.name),
      verbs: ['get'],
    },
    {
      apiGroups: ['apps'],
      resources: ['daemonsets'],
      resourceNames: names(baseline.cniDaemonSet.name, baseline.topolvmNodeDaemonSet.name),
      verbs: ['get'],
    },
    {
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions'],
      resourceNames: names(...baseline.k3kCRDs),
      verbs: ['get'],
    },
  ];
}

/**
 * The Role's rules in AGENT_NAMESPACE: its reports (`reportNames`), its signing key's Secret and
 * identity ConfigMap and, when the hub has a sealing key, the public-key ConfigMap (the agent's
 * fallback when no key file is mounted). A rule without names would grant every name, so an empty
 * list gives no rule.
 */
export function agentNamespaceRules(reportNames: string[], publicKey: boolean): PolicyRule[] {
  const named = (resource: string, resourceNames: string[], verbs: string[]): PolicyRule[] =>
    resourceNames.length === 0
      ? []
      : [{ apiGroups: [''], resources: [resource], resourceNames: names(...resourceNames), verbs }];
  return [
    ...named('configmaps', [...reportNames, AGENT_IDENTITY_CONFIGMAP], ['get', 'update']),
    ...named('configmaps', publicKey ? [SEALING_PUBLIC_KEY_CONFIGMAP] : [], ['get']),
    ...named('secrets', [AGENT_SIGNING_KEY_SECRET], ['get', 'update']),
  ];
}

/** The Role's rules in the host namespace of VirtualCluster `name`: what sealing it takes. */
export function virtualClusterAgentRules(name: string): PolicyRule[] {
  return [
    {
      apiGroups: [''],
      resources: ['secrets'],
      resourceNames: [k3kKubeconfigSecretName(name)],
      verbs: ['get', 'watch'],
    },
    {
      apiGroups: [''],
      resources: ['configmaps'],
      resourceNames: [sealedKubeconfigConfigMapName(name)],
      verbs: ['get', 'update'],
    },
  ];
}

/** The Role (and RoleBinding) in a host namespace: `kubecell-<name>-cell-agent`, bounded. */
export function virtualClusterAgentRoleName(name: string): string {
  return boundedName('kubecell-', name, '-cell-agent', 253);
}

/**
 * A Role (namespace given) or ClusterRole with `rules`, and its binding to the agent's
 * ServiceAccount, both called `name`.
 */
export function agentRoleAndBinding(
  name: string,
  namespace: string | undefined,
  rules: PolicyRule[],
): KubernetesObject[] {
  const kind = namespace === undefined ? 'ClusterRole' : 'Role';
  const metadata = {
    name,
    ...(namespace === undefined ? {} : { namespace }),
    labels: { ...AGENT_LABELS },
  };
  return [
    { apiVersion: RBAC_API, kind, metadata, rules } as KubernetesObject,
    {
      apiVersion: RBAC_API,
      kind: `${kind}Binding`,
      metadata: structuredClone(metadata),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name },
      subjects: [{ kind: 'ServiceAccount', name: AGENT_NAME, namespace: AGENT_NAMESPACE }],
    } as KubernetesObject,
  ];
}

/**
 * A ConfigMap the cell agent fills: the work creates it empty (give it `createOnly`) and the agent
 * only reads and updates it by name, since RBAC cannot name what may be created (agent-rbac.ts).
 */
export function agentConfigMap(
  name: string,
  namespace: string,
  labels: Readonly<Record<string, string>>,
): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, labels: { ...labels } },
  };
}
