/**
 * The NetworkPolicies attached to every host namespace. NetworkPolicies only ever add what is
 * allowed: a pod selected by any policy of a type is isolated for that type, and may then do what
 * at least one of those policies allows. The baseline is therefore the sum of four policies.
 */
import type { KubernetesObject } from '../metacontroller/protocol.js';
import {
  CLUSTER_DNS,
  K3K_API_PORT,
  K3K_SERVER_ROLE,
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
  matchExpressions?: { key: string; operator: 'Exists'; values?: string[] }[];
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
 * - `kubecell-allow-api-server`: k3k's server pods accept TCP 6443 from anywhere, the path of the
 *   API NodePort (a NodePort's traffic may arrive from any node address or client address);
 * - `kubecell-egress`: pods may reach the cluster DNS (kube-system, k8s-app=kube-dns, port 53
 *   UDP and TCP), their own namespace, and the configured CIDRs (all addresses by default).
 */
export function renderNetworkPolicies(
  namespace: string,
  config: HostNamespaceConfig,
): NetworkPolicy[] {
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
  return [
    policy(namespace, POLICY_NAMES.denyIngress, {
      podSelector: ALL_PODS,
      policyTypes: ['Ingress'],
    }),
    policy(namespace, POLICY_NAMES.allowSameNamespace, {
      podSelector: ALL_PODS,
      policyTypes: ['Ingress'],
      ingress: [{ from: [{ podSelector: ALL_PODS }] }],
    }),
    policy(namespace, POLICY_NAMES.allowApiServer, {
      podSelector: {
        matchLabels: { role: K3K_SERVER_ROLE },
        matchExpressions: [{ key: 'cluster', operator: 'Exists' }],
      },
      policyTypes: ['Ingress'],
      ingress: [{ ports: [{ protocol: 'TCP', port: K3K_API_PORT }] }],
    }),
    policy(namespace, POLICY_NAMES.egress, {
      podSelector: ALL_PODS,
      policyTypes: ['Egress'],
      egress,
    }),
  ];
}
