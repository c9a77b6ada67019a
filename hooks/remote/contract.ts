/**
 * What the hub and a remote Cell's cluster agree on (decision D34): the names of the
 * ManifestWorks the hub writes into the ManagedCluster's namespace, the objects the KubeCell
 * cell agent keeps on the managed cluster, and the feedback names through which OCM's work
 * agent carries their values back. The hub never connects to a managed cluster's apiserver:
 * everything it learns about one arrives as ManifestWork status feedback.
 */

/** The ManifestWork (in the ManagedCluster's hub namespace) that installs the cell agent. */
export const AGENT_WORK_NAME = 'kubecell-cell-agent';

/** Namespace of the cell agent and its reports on the managed cluster. */
export const AGENT_NAMESPACE = 'kubecell-system';

/** The agent's ServiceAccount, Deployment and RBAC objects on the managed cluster. */
export const AGENT_NAME = 'kubecell-cell-agent';

/** ConfigMap (in AGENT_NAMESPACE) holding the hub's public sealing key for the agent. */
export const SEALING_PUBLIC_KEY_CONFIGMAP = 'kubecell-sealing-public-key';
export const SEALING_PUBLIC_KEY_KEY = 'public-key.pem';

/**
 * The agent's signing key (sealing.ts: it signs each sealed kubeconfig): made by the agent on its
 * cluster and kept in this Secret (in AGENT_NAMESPACE, key AGENT_SIGNING_KEY_KEY, PKCS#8 PEM),
 * which the agent's work creates empty; it never leaves the managed cluster.
 */
export const AGENT_SIGNING_KEY_SECRET = 'kubecell-cell-agent-signing-key';
export const AGENT_SIGNING_KEY_KEY = 'signing-key.pem';
/**
 * The public half of that key, published by the agent in this ConfigMap (in AGENT_NAMESPACE, key
 * AGENT_PUBLIC_SIGNING_KEY_KEY: base64 of its DER SubjectPublicKeyInfo), which the agent's work
 * feeds back (FEEDBACK.agentSigningKey).
 */
export const AGENT_IDENTITY_CONFIGMAP = 'kubecell-cell-agent-identity';
export const AGENT_PUBLIC_SIGNING_KEY_KEY = 'signingKey';
/**
 * Annotation of a VirtualCluster's ManifestWork: the public signing key of the agent of the
 * work's ManagedCluster, as that cluster's agent work fed it back (hooks/delivery writes it;
 * hooks/virtualcluster accepts only a sealed kubeconfig signed with it).
 */
export const CELL_AGENT_KEY_ANNOTATION = 'kubecell.io/cell-agent-signing-key';

/** ConfigMap (in AGENT_NAMESPACE) where the agent reports one machine profile's inventory. */
export function reportConfigMapName(machineProfile: string): string {
  return `kubecell-cell-report-${machineProfile}`;
}
/** Data key of the report (a JSON CellReport) in that ConfigMap. */
export const REPORT_KEY = 'report';

/** The ManifestWork (in the ManagedCluster's hub namespace) carrying one VirtualCluster. */
export function virtualClusterWorkName(virtualClusterUid: string): string {
  return `kubecell-vc-${virtualClusterUid}`;
}

/** ConfigMap (in the host namespace) where the agent seals a VirtualCluster's k3k kubeconfig. */
export function sealedKubeconfigConfigMapName(virtualClusterName: string): string {
  return `kubecell-${virtualClusterName}-sealed-kubeconfig`;
}
/** Data key of the sealed kubeconfig in that ConfigMap. */
export const SEALED_KUBECONFIG_KEY = 'sealed';

/** Status feedback names (ManifestWork status.resourceStatus.manifests[].statusFeedback). */
export const FEEDBACK = {
  /** The report ConfigMap's data.report (String). */
  report: 'report',
  /** The identity ConfigMap's data.signingKey (String): the agent's public signing key. */
  agentSigningKey: 'agentSigningKey',
  /** The sealed-kubeconfig ConfigMap's data.sealed (String). */
  sealedKubeconfig: 'sealedKubeconfig',
  /** The API Service's spec.ports[0].nodePort (Integer). */
  nodePort: 'nodePort',
  /** The k3k Cluster's status.phase (String). */
  k3kPhase: 'k3kPhase',
  /** The status, reason and message of the k3k Cluster's `Ready` condition (String). */
  k3kReadyStatus: 'k3kReadyStatus',
  k3kReadyReason: 'k3kReadyReason',
  k3kReadyMessage: 'k3kReadyMessage',
} as const;

/**
 * On a remote host Namespace (rendered into the VirtualCluster's ManifestWork by
 * hooks/delivery): which VirtualCluster it carries. The agent seals k3k's kubeconfig of each
 * host namespace (label `kubecell.io/host-namespace=true`) for the UID label, into
 * sealedKubeconfigConfigMapName(<the name annotation>). The name is an annotation because a
 * VirtualCluster's name may be longer than a label value.
 */
export const HOST_NAMESPACE_VIRTUALCLUSTER = {
  /** Label: the VirtualCluster's UID. */
  uidLabel: 'kubecell.io/virtualcluster-uid',
  /** Annotation: the VirtualCluster's name. */
  nameAnnotation: 'kubecell.io/virtualcluster',
} as const;

/** Settings the agent's Deployment (hooks/delivery) passes to the agent (hooks/agent). */
export const AGENT_ENV = {
  /** Comma-separated machine profiles to report on: those of the Cells bound to the cluster. */
  machineProfiles: 'KUBECELL_AGENT_MACHINE_PROFILES',
  /** The ManagedCluster the agent runs on, which it names in what it seals. */
  managedCluster: 'KUBECELL_AGENT_MANAGED_CLUSTER',
  /** File holding the hub's public sealing key (SEALING_PUBLIC_KEY_CONFIGMAP, mounted). */
  publicKeyFile: 'KUBECELL_SEALING_PUBLIC_KEY_FILE',
  /**
   * The provider baseline's names (`<namespace>/<name>`), the hub's own settings of them, which
   * the agent reads with the Cell controller's loader (hooks/cell/config.ts).
   */
  k3kController: 'KUBECELL_K3K_CONTROLLER',
  cniDaemonSet: 'KUBECELL_CNI_DAEMONSET',
  topolvmDaemonSet: 'KUBECELL_TOPOLVM_DAEMONSET',
} as const;
/** Where the Deployment mounts SEALING_PUBLIC_KEY_CONFIGMAP (file SEALING_PUBLIC_KEY_KEY). */
export const AGENT_PUBLIC_KEY_DIR = '/etc/kubecell/sealing';
