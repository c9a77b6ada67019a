/**
 * The names that make up the host-namespace baseline. They are part of KubeCell's contract with
 * the platform: the annotations say what the controller applied, and the NetworkPolicy names and
 * labels are what `kubectl get networkpolicy` shows.
 */

/**
 * Version of the baseline's shape (which labels, which policies). It changes when a KubeCell
 * release changes the baseline, not when a setting such as the Pod Security level changes.
 * v2: `kubecell-allow-api-server` selects only k3k's own server pods and admits only the k3k
 * controller's namespace and the API client CIDRs; the `pod-security-weaker` report.
 */
export const BASELINE_VERSION = 'v2';

export const HOST_NAMESPACE_ANNOTATIONS = {
  /** The baseline version applied, e.g. `v1`. */
  baseline: 'kubecell.io/baseline',
  /** The Pod Security labels KubeCell wrote, e.g. `audit=baseline,enforce=baseline,warn=baseline`. */
  podSecurityApplied: 'kubecell.io/pod-security-applied',
  /** The Pod Security labels the platform set and KubeCell left alone, e.g. `enforce=restricted`. */
  podSecurityKept: 'kubecell.io/pod-security-kept',
  /**
   * Those of the kept labels whose level is weaker than the configured one, e.g.
   * `enforce=privileged` under `baseline`: the namespace is less isolated than the platform's
   * setting says. A decorator cannot emit Events, so this annotation is the report.
   */
  podSecurityWeaker: 'kubecell.io/pod-security-weaker',
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

/**
 * k3k's server pods: labels `cluster=<name>, role=server` (the StatefulSet's selector and pod
 * template, `pkg/controller/cluster/server/server.go` of rancher/k3k v1.1.0), API on 6443
 * (`k3sServerPort`, `pkg/controller/cluster/server/ingress.go`).
 */
export const K3K_SERVER_ROLE = 'server';
export const K3K_CLUSTER_LABEL = 'cluster';
export const K3K_API_PORT = 6443;

/**
 * The label k3k's virtual kubelet puts on every pod it copies from the virtual cluster into the
 * host namespace (shared mode), keeping the tenant's own labels (`TranslateTo`,
 * `k3k-kubelet/translate/host.go`, called by `createPod` in `k3k-kubelet/provider/provider.go`).
 * k3k's server pods never carry it, so a tenant pod labelled `role=server, cluster=…` is told apart
 * by it.
 */
export const K3K_TENANT_POD_LABEL = 'k3k.io/clusterName';

/** The cluster DNS the egress policy allows: kube-system pods labelled k8s-app=kube-dns. */
export const CLUSTER_DNS = { namespace: 'kube-system', podLabels: { 'k8s-app': 'kube-dns' } };
