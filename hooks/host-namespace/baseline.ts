/**
 * The names that make up the host-namespace baseline. They are part of KubeCell's contract with
 * the platform: the annotations say what the controller applied, and the NetworkPolicy names and
 * labels are what `kubectl get networkpolicy` shows.
 */

/**
 * Version of the baseline's shape (which labels, which policies). It changes when a KubeCell
 * release changes the baseline, not when a setting such as the Pod Security level changes.
 */
export const BASELINE_VERSION = 'v1';

export const HOST_NAMESPACE_ANNOTATIONS = {
  /** The baseline version applied, e.g. `v1`. */
  baseline: 'kubecell.io/baseline',
  /** The Pod Security labels KubeCell wrote, e.g. `audit=baseline,enforce=baseline,warn=baseline`. */
  podSecurityApplied: 'kubecell.io/pod-security-applied',
  /** The Pod Security labels the platform set and KubeCell left alone, e.g. `enforce=restricted`. */
  podSecurityKept: 'kubecell.io/pod-security-kept',
} as const;

/** Prefix of the Pod Security Admission labels. */
export const POD_SECURITY_LABEL_PREFIX = 'pod-security.kubernetes.io/';

/**
 * The Pod Security modes KubeCell sets, all at the configured level. The `<mode>-version` labels
 * are left to the platform: absent, Pod Security Admission uses `latest`.
 */
export const POD_SECURITY_MODES = ['audit', 'enforce', 'warn'] as const;
export type PodSecurityMode = (typeof POD_SECURITY_MODES)[number];

/** Labels on every attached NetworkPolicy. */
export const POLICY_LABELS = {
  'app.kubernetes.io/part-of': 'kubecell',
  [HOST_NAMESPACE_ANNOTATIONS.baseline]: BASELINE_VERSION,
} as const;

/** The attached NetworkPolicies, by purpose. */
export const POLICY_NAMES = {
  denyIngress: 'kubecell-deny-ingress',
  allowSameNamespace: 'kubecell-allow-same-namespace',
  allowApiServer: 'kubecell-allow-api-server',
  egress: 'kubecell-egress',
} as const;

/** k3k's server pods: labels `cluster=<name>, role=server`, API on 6443. */
export const K3K_SERVER_ROLE = 'server';
export const K3K_API_PORT = 6443;

/** The cluster DNS the egress policy allows: kube-system pods labelled k8s-app=kube-dns. */
export const CLUSTER_DNS = { namespace: 'kube-system', podLabels: { 'k8s-app': 'kube-dns' } };
