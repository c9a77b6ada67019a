/**
 * The NetworkPolicies attached to every host namespace. NetworkPolicies only ever add what is
 * allowed: a pod selected by any policy of a type is isolated for that type, and may then do what
 * at least one of those policies allows. The baseline is therefore the sum of four policies.
 */
import type { KubernetesObject } from '../metacontroller/protocol.js';
import {
  CLUSTER_DNS,
  K3K_API_PORT,
  K3K_CLUSTER_LABEL,
  K3K_SERVER_ROLE,
  K3K_TENANT_POD_LABEL,
  POLICY_LABELS,
  POLICY_NAMES,
} from './baseline.js';
import type { HostNamespaceConfig } from './config.js';

type Protocol = 'TCP' | 'UDP';

interface PolicyPeer {
  podSelector?: LabelSelectorSpec;
  namespaceSelector?: LabelSelectorSpec;
  ipBlock?: { cidr: string };
}

interface LabelSelectorSpec {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

interface PolicyRule {
  from?: PolicyPeer[];
  to?: PolicyPeer[];
  ports?: { protocol: Protocol; port: number }[];
}

export interface NetworkPolicy extends KubernetesObject {
  apiVersion: 'networking.k8s.io/v1';
  kind: 'NetworkPolicy';
  spec: {
    podSelector: LabelSelectorSpec;
    policyTypes: ('Ingress' | 'Egress')[];
    ingress?: PolicyRule[];
    egress?: PolicyRule[];
  };
}

function policy(namespace: string, name: string, spec: NetworkPolicy['spec']): NetworkPolicy {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name, namespace, labels: { ...POLICY_LABELS } },
    spec,
  };
}

/** Every pod of the namespace. */
const ALL_PODS: LabelSelectorSpec = {};

/**
 * The baseline's NetworkPolicies for one host namespace, always in the same order:
 *
 * - `kubecell-deny-ingress`: every pod is isolated for ingress, so nothing from another namespace
 *   (another tenant) reaches it unless a policy below allows it;
 * - `kubecell-allow-same-namespace`: pods of the namespace reach each other (k3k's server and
 *   agent, and the tenant's pods, which k3k's shared mode runs here);
 * - `kubecell-allow-api-server`: k3k's server pods accept TCP 6443 from the k3k controller's
 *   namespace (it reads the server's bootstrap data through k3k's Service) and from the API client
 *   CIDRs (`KUBECELL_API_CLIENT_CIDRS`, all addresses by default): the path of the API NodePort,
 *   whose traffic arrives from the client's address or, once kube-proxy masquerades it, from a
 *   Node's. "k3k's server pods" are those with `role=server` and a `cluster` label that do not
 *   carry `k3k.io/clusterName`: k3k's virtual kubelet puts that label on every tenant pod it copies
 *   into the namespace, keeping the tenant's own labels, so a tenant pod labelled
 *   `role=server, cluster=x` is not opened. The namespace hosts one VirtualCluster, so these are
 *   that VirtualCluster's server pods (the decorator sees the namespace, not its VirtualCluster);
 * - `kubecell-egress`: pods may reach the cluster DNS (kube-system, k8s-app=kube-dns, port 53
 *   UDP and TCP), their own namespace, and the configured CIDRs (all addresses by default).
 */
export function renderNetworkPolicies(
  namespace: string,
  config: HostNamespaceConfig,
): NetworkPolicy[] {
  return [
    denyIngressPolicy(namespace),
    allowSameNamespacePolicy(namespace),
    allowApiServerPolicy(namespace, config),
    egressPolicy(namespace, config),
  ];
}

function denyIngressPolicy(namespace: string): NetworkPolicy {
  return policy(namespace, POLICY_NAMES.denyIngress, {
    podSelector: ALL_PODS,
    policyTypes: ['Ingress'],
  });
}

function allowSameNamespacePolicy(namespace: string): NetworkPolicy {
  return policy(namespace, POLICY_NAMES.allowSameNamespace, {
    podSelector: ALL_PODS,
    policyTypes: ['Ingress'],
    ingress: [{ from: [{ podSelector: ALL_PODS }] }],
  });
}

function allowApiServerPolicy(namespace: string, config: HostNamespaceConfig): NetworkPolicy {
  return policy(namespace, POLICY_NAMES.allowApiServer, {
    podSelector: {
      matchLabels: { role: K3K_SERVER_ROLE },
      matchExpressions: [
        { key: K3K_CLUSTER_LABEL, operator: 'Exists' },
        { key: K3K_TENANT_POD_LABEL, operator: 'DoesNotExist' },
      ],
    },
    policyTypes: ['Ingress'],
    ingress: [
      {
        from: [
          {
            namespaceSelector: {
              matchLabels: { 'kubernetes.io/metadata.name': config.k3kNamespace },
            },
          },
          ...config.apiClientCidrs.map((cidr) => ({ ipBlock: { cidr } })),
        ],
        ports: [{ protocol: 'TCP', port: K3K_API_PORT }],
      },
    ],
  });
}

function egressPolicy(namespace: string, config: HostNamespaceConfig): NetworkPolicy {
  const egress: PolicyRule[] = [
    {
      to: [
        {
          namespaceSelector: {
            matchLabels: { 'kubernetes.io/metadata.name': CLUSTER_DNS.namespace },
          },
          podSelector: { matchLabels: { ...CLUSTER_DNS.podLabels } },
        },
      ],
      ports: [
        { protocol: 'UDP', port: 53 },
        { protocol: 'TCP', port: 53 },
      ],
    },
    { to: [{ podSelector: ALL_PODS }] },
  ];
  if (config.egressCidrs.length > 0) {
    egress.push({ to: config.egressCidrs.map((cidr) => ({ ipBlock: { cidr } })) });
  }
  return policy(namespace, POLICY_NAMES.egress, {
    podSelector: ALL_PODS,
    policyTypes: ['Egress'],
    egress,
  });
}
