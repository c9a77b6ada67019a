/**
 * The ManifestWork `kubecell-cell-agent`: KubeCell's cell agent on a managed cluster, its RBAC,
 * the hub's public sealing key, and the report ConfigMaps (one per machine profile of a Cell
 * bound to the cluster) the hub reads back as status feedback (decision D34).
 *
 * The agent is the hook server's image run as `kubecell agent`
 * (`node --import tsx hooks/cli/kubecell.ts agent`, the Dockerfile's runtime). Its settings:
 * AGENT_ENV.machineProfiles (the profiles to report, sorted), AGENT_ENV.publicKeyFile (the
 * mounted SEALING_PUBLIC_KEY_CONFIGMAP; optional, absent when the hub has no sealing key) and the
 * provider baseline's names as the hub's Cell controller has them (AGENT_ENV.k3kController,
 * cniDaemonSet, topolvmDaemonSet), one source for the agent's checks and the NetworkPolicies.
 *
 * Deleting the work deletes the agent, its RBAC and the public key, but leaves its Namespace:
 * the managed cluster may be the hub itself, whose kubecell-system holds the hook server.
 */
import type { KubernetesObject } from '../metacontroller/protocol.js';
import {
  AGENT_ENV,
  AGENT_NAME,
  AGENT_NAMESPACE,
  AGENT_PUBLIC_KEY_DIR,
  AGENT_WORK_NAME,
  FEEDBACK,
  REPORT_KEY,
  SEALING_PUBLIC_KEY_CONFIGMAP,
  SEALING_PUBLIC_KEY_KEY,
  reportConfigMapName,
} from '../remote/contract.js';
import { DEFAULT_DELIVERY_CONFIG, type DeliveryConfig, type ProviderBaseline } from './config.js';
import {
  agentConfigMap,
  manifestWork,
  orphaning,
  readOnlyWithFeedback,
  type ManifestWork,
} from './manifest-work.js';

/** Labels of the agent's objects and of its work. */
export const AGENT_LABELS = Object.freeze({
  'app.kubernetes.io/name': 'kubecell',
  'app.kubernetes.io/component': 'cell-agent',
  'app.kubernetes.io/managed-by': 'kubecell',
});

/** The agent's command: the `kubecell` CLI of the image (package.json `bin`). */
export const AGENT_COMMAND = ['node', '--import', 'tsx', 'hooks/cli/kubecell.ts'];
export const AGENT_ARGS = ['agent'];

/** One rule of a ClusterRole (rbac.authorization.k8s.io/v1 PolicyRule). */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}

/**
 * Exactly what the agent calls (hooks/agent: observe.ts, write.ts, seal-kubeconfigs.ts), no
 * `watch`: it lists the profile Nodes, every pod, Service and PersistentVolume and the host
 * Namespaces; it reads by name the k3k Namespace, k3k's CRDs and controller Deployment, the CNI
 * and TopoLVM DaemonSets (those names only: the hub's provider baseline, as the Deployment
 * passes it) and k3k's kubeconfig Secrets (any name: one per VirtualCluster, `get` only); it
 * reads, creates and updates ConfigMaps (its reports, each host namespace's sealed kubeconfig).
 */
export function agentRules(baseline: ProviderBaseline): PolicyRule[] {
  const names = (...list: string[]) => [...new Set(list)].sort();
  return [
    {
      apiGroups: [''],
      resources: ['nodes', 'persistentvolumes', 'pods', 'services'],
      verbs: ['list'],
    },
    { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list'] },
    { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'update'] },
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

/** The settings the agent's work is rendered from (no providerBaseline: the defaults). */
export type AgentWorkConfig = Pick<DeliveryConfig, 'agentImage' | 'publicKeyPem'> &
  Partial<Pick<DeliveryConfig, 'providerBaseline'>>;

function meta(name: string, namespaced = true) {
  return {
    name,
    ...(namespaced ? { namespace: AGENT_NAMESPACE } : {}),
    labels: { ...AGENT_LABELS },
  };
}

function rbac(baseline: ProviderBaseline): KubernetesObject[] {
  const rbacApi = 'rbac.authorization.k8s.io/v1';
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(AGENT_NAME) },
    {
      apiVersion: rbacApi,
      kind: 'ClusterRole',
      metadata: meta(AGENT_NAME, false),
      rules: agentRules(baseline),
    } as KubernetesObject,
    {
      apiVersion: rbacApi,
      kind: 'ClusterRoleBinding',
      metadata: meta(AGENT_NAME, false),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: AGENT_NAME },
      subjects: [{ kind: 'ServiceAccount', name: AGENT_NAME, namespace: AGENT_NAMESPACE }],
    } as KubernetesObject,
  ];
}

function publicKeyConfigMap(pem: string): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta(SEALING_PUBLIC_KEY_CONFIGMAP),
    data: { [SEALING_PUBLIC_KEY_KEY]: pem },
  } as KubernetesObject;
}

/** The hub's provider-baseline names, as the agent's Cell controller settings read them. */
function baselineEnv(baseline: ProviderBaseline): { name: string; value: string }[] {
  const named = ({ namespace, name }: { namespace: string; name: string }) =>
    `${namespace}/${name}`;
  return [
    { name: AGENT_ENV.k3kController, value: named(baseline.k3kController) },
    { name: AGENT_ENV.cniDaemonSet, value: named(baseline.cniDaemonSet) },
    { name: AGENT_ENV.topolvmDaemonSet, value: named(baseline.topolvmNodeDaemonSet) },
  ];
}

/** The agent's container: non-root, read-only root filesystem, no capabilities. */
function agentContainer(profiles: readonly string[], image: string, baseline: ProviderBaseline) {
  return {
    name: 'agent',
    image,
    imagePullPolicy: 'IfNotPresent',
    command: [...AGENT_COMMAND],
    args: [...AGENT_ARGS],
    env: [
      { name: AGENT_ENV.machineProfiles, value: profiles.join(',') },
      {
        name: AGENT_ENV.publicKeyFile,
        value: `${AGENT_PUBLIC_KEY_DIR}/${SEALING_PUBLIC_KEY_KEY}`,
      },
      ...baselineEnv(baseline),
      { name: 'TSX_DISABLE_CACHE', value: '1' },
      { name: 'NODE_ENV', value: 'production' },
    ],
    resources: {
      requests: { cpu: '50m', memory: '128Mi' },
      limits: { cpu: '500m', memory: '1Gi' },
    },
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    },
    volumeMounts: [{ name: 'sealing-public-key', mountPath: AGENT_PUBLIC_KEY_DIR, readOnly: true }],
  };
}

/** One replica (one writer of the reports), replaced by Recreate, never two at once. */
function agentDeployment(
  profiles: readonly string[],
  image: string,
  baseline: ProviderBaseline,
): KubernetesObject {
  const selector = {
    'app.kubernetes.io/name': AGENT_LABELS['app.kubernetes.io/name'],
    'app.kubernetes.io/component': AGENT_LABELS['app.kubernetes.io/component'],
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(AGENT_NAME),
    spec: {
      replicas: 1,
      strategy: { type: 'Recreate' },
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: { ...AGENT_LABELS } },
        spec: {
          serviceAccountName: AGENT_NAME,
          automountServiceAccountToken: true,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 65532,
            runAsGroup: 65532,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [agentContainer(profiles, image, baseline)],
          volumes: [
            {
              name: 'sealing-public-key',
              configMap: { name: SEALING_PUBLIC_KEY_CONFIGMAP, optional: true },
            },
          ],
        },
      },
    },
  } as KubernetesObject;
}

/**
 * The agent's work in the ManagedCluster's hub namespace, for the machine profiles of the Cells
 * bound to it (`profiles`, sorted and without duplicates by the caller).
 */
export function renderAgentWork(
  clusterName: string,
  profiles: readonly string[],
  config: AgentWorkConfig,
): ManifestWork {
  const namespace: KubernetesObject = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: AGENT_NAMESPACE, labels: { ...AGENT_LABELS } },
  };
  const reports = profiles.map((profile) =>
    agentConfigMap(reportConfigMapName(profile), AGENT_NAMESPACE),
  );
  const baseline = config.providerBaseline ?? DEFAULT_DELIVERY_CONFIG.providerBaseline;
  const manifests = [
    namespace,
    ...rbac(baseline),
    ...(config.publicKeyPem === undefined ? [] : [publicKeyConfigMap(config.publicKeyPem)]),
    agentDeployment(profiles, config.agentImage, baseline),
    ...reports,
  ];
  return manifestWork(
    { name: AGENT_WORK_NAME, namespace: clusterName, labels: { ...AGENT_LABELS } },
    manifests,
    {
      deleteOption: orphaning([namespace]),
      manifestConfigs: reports.map((report) =>
        readOnlyWithFeedback(report, [{ name: FEEDBACK.report, path: `.data.${REPORT_KEY}` }]),
      ),
    },
  );
}
