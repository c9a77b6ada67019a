/**
 * The ManifestWork `kubecell-cell-agent`: KubeCell's cell agent on a managed cluster, its RBAC
 * (agent-rbac.ts), the hub's public sealing key, the Secret of the agent's signing key and the
 * ConfigMap it publishes the public half in (fed back as `agentSigningKey`), and the report
 * ConfigMaps (one per machine profile of a Cell bound to the cluster) the hub reads back as
 * status feedback (decision D34). The work creates each of the Secret and those ConfigMaps empty
 * (`CreateOnly`, never rewritten): the agent may only read and update them by name.
 *
 * The agent is the hook server's image run as `kubecell agent`
 * (`node --import tsx hooks/cli/kubecell.ts agent`, the Dockerfile's runtime). Its settings:
 * AGENT_ENV.machineProfiles (the profiles to report, sorted), AGENT_ENV.managedCluster (the
 * ManagedCluster's name, which each seal names), AGENT_ENV.publicKeyFile (the
 * mounted SEALING_PUBLIC_KEY_CONFIGMAP; optional, absent when the hub has no sealing key) and the
 * provider baseline's names as the hub's Cell controller has them (AGENT_ENV.k3kController,
 * cniDaemonSet, topolvmDaemonSet), one source for the agent's checks and the NetworkPolicies.
 *
 * Deleting the work deletes the agent, its RBAC, keys and reports, but leaves its Namespace:
 * the managed cluster may be the hub itself, whose kubecell-system holds the hook server.
 */
import type { KubernetesObject } from '../metacontroller/protocol.js';
import {
  AGENT_ENV,
  AGENT_IDENTITY_CONFIGMAP,
  AGENT_NAME,
  AGENT_NAMESPACE,
  AGENT_PUBLIC_KEY_DIR,
  AGENT_PUBLIC_SIGNING_KEY_KEY,
  AGENT_SIGNING_KEY_SECRET,
  AGENT_WORK_NAME,
  FEEDBACK,
  REPORT_KEY,
  SEALING_PUBLIC_KEY_CONFIGMAP,
  SEALING_PUBLIC_KEY_KEY,
  reportConfigMapName,
} from '../remote/contract.js';
import { DEFAULT_DELIVERY_CONFIG, type DeliveryConfig, type ProviderBaseline } from './config.js';
import {
  AGENT_LABELS,
  agentClusterRules,
  agentNamespaceRules,
  agentRoleAndBinding,
  agentConfigMap,
} from './agent-rbac.js';
import { createOnly, manifestWork, orphaning, type ManifestWork } from '../remote/manifest-work.js';

/** The agent's command: the `kubecell` CLI of the image (package.json `bin`). */
export const AGENT_COMMAND = ['node', '--import', 'tsx', 'hooks/cli/kubecell.ts'];
export const AGENT_ARGS = ['agent'];

/** The settings the agent's work is rendered from (no providerBaseline: the defaults). */
export type AgentWorkConfig = Pick<DeliveryConfig, 'agentImage' | 'publicKeyPem'> &
  Partial<Pick<DeliveryConfig, 'providerBaseline'>>;

function meta(name: string) {
  return { name, namespace: AGENT_NAMESPACE, labels: { ...AGENT_LABELS } };
}

/** The ServiceAccount and its RBAC (agent-rbac.ts); each VirtualCluster's work adds a Role. */
function rbac(
  baseline: ProviderBaseline,
  reportNames: string[],
  publicKey: boolean,
): KubernetesObject[] {
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(AGENT_NAME) },
    ...agentRoleAndBinding(AGENT_NAME, undefined, agentClusterRules(baseline)),
    ...agentRoleAndBinding(
      AGENT_NAME,
      AGENT_NAMESPACE,
      agentNamespaceRules(reportNames, publicKey),
    ),
  ];
}

/**
 * The Secret the agent keeps its signing key in (identity.ts), created empty and never rewritten
 * (`CreateOnly`): the key is made on the cluster, so it is never in the work.
 */
function signingKeySecret(): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: meta(AGENT_SIGNING_KEY_SECRET),
    type: 'Opaque',
  } as KubernetesObject;
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

/** What the agent's Deployment is rendered from. */
interface AgentSpec {
  clusterName: string;
  profiles: readonly string[];
  image: string;
  baseline: ProviderBaseline;
}

/** The agent's container: non-root, read-only root filesystem, no capabilities. */
function agentContainer({ clusterName, profiles, image, baseline }: AgentSpec) {
  return {
    name: 'agent',
    image,
    imagePullPolicy: 'IfNotPresent',
    command: [...AGENT_COMMAND],
    args: [...AGENT_ARGS],
    env: [
      { name: AGENT_ENV.machineProfiles, value: profiles.join(',') },
      { name: AGENT_ENV.managedCluster, value: clusterName },
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
function agentDeployment(spec: AgentSpec): KubernetesObject {
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
          containers: [agentContainer(spec)],
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
    agentConfigMap(reportConfigMapName(profile), AGENT_NAMESPACE, AGENT_LABELS),
  );
  const baseline = config.providerBaseline ?? DEFAULT_DELIVERY_CONFIG.providerBaseline;
  const reportNames = reports.map((report) => report.metadata.name);
  const signingKey = signingKeySecret();
  const identity = agentConfigMap(AGENT_IDENTITY_CONFIGMAP, AGENT_NAMESPACE, AGENT_LABELS);
  const manifests = [
    namespace,
    ...rbac(baseline, reportNames, config.publicKeyPem !== undefined),
    ...(config.publicKeyPem === undefined ? [] : [publicKeyConfigMap(config.publicKeyPem)]),
    signingKey,
    identity,
    agentDeployment({ clusterName, profiles, image: config.agentImage, baseline }),
    ...reports,
  ];
  const identityPath = `.data.${AGENT_PUBLIC_SIGNING_KEY_KEY}`;
  return manifestWork(
    { name: AGENT_WORK_NAME, namespace: clusterName, labels: { ...AGENT_LABELS } },
    manifests,
    {
      deleteOption: orphaning([namespace]),
      manifestConfigs: [
        createOnly(signingKey),
        createOnly(identity, [{ name: FEEDBACK.agentSigningKey, path: identityPath }]),
        ...reports.map((report) =>
          createOnly(report, [{ name: FEEDBACK.report, path: `.data.${REPORT_KEY}` }]),
        ),
      ],
    },
  );
}
