// SIMULATED provider baseline of a Cell: what installing k3k, a CNI and TopoLVM on the cluster
// leaves behind, and what the Deployment and DaemonSet controllers then report (kube-controller-
// manager runs neither in the test control plane, so the status is written here, as they would).
//
// The Cell reads (hooks/cell/provider.ts, names from hooks/cell/config.ts):
// - the k3k namespace (default k3k-system), phase Active;
// - the k3k CRDs (clusters.k3k.io, virtualclusterpolicies.k3k.io), condition Established;
// - the k3k controller Deployment (k3k-system/k3k): availableReplicas > 0 and Available=True;
//   its image tag is reported as the k3k version;
// - the CNI DaemonSet (kube-flannel/kube-flannel-ds) and TopoLVM's node DaemonSet
//   (topolvm-system/topolvm-node): desiredNumberScheduled > 0 and numberReady ≥ it.
//
// The harness installs k3k's real clusters.k3k.io CRD (harness/cluster/kubecell.ts);
// virtualclusterpolicies.k3k.io is not among the shared upstream CRDs, so a permissive stand-in,
// labelled `kubecell.io/test-stand-in: permissive`, is installed for any k3k CRD that is missing.
import { DEFAULT_CELL_CONFIG, type CellControllerConfig } from '../../hooks/cell/config.js';
import { KubeClient, resourcePath, type KubeObject } from './kube-client.js';
import { ensureCrds, formatTime, permissiveCrd } from './support.js';

export const K3K_INSTALLER_FIELD_MANAGER = 'simulated-k3k-installer';
export const CNI_INSTALLER_FIELD_MANAGER = 'simulated-cni-installer';
export const TOPOLVM_INSTALLER_FIELD_MANAGER = 'simulated-topolvm-installer';
export const DEPLOYMENT_CONTROLLER_FIELD_MANAGER = 'simulated-deployment-controller';
export const DAEMONSET_CONTROLLER_FIELD_MANAGER = 'simulated-daemonset-controller';
export const DEFAULT_K3K_IMAGE = 'rancher/k3k:v1.1.0';

export type ProviderBaselineConfig = Pick<
  CellControllerConfig,
  'k3kNamespace' | 'k3kController' | 'k3kCRDs' | 'cniDaemonSet' | 'topolvmNodeDaemonSet'
>;

export interface Where {
  namespace: string;
  name: string;
}

export interface ProviderBaselineOptions {
  /** Where the Cell controller looks (the hook server's settings); default its defaults. */
  config?: ProviderBaselineConfig;
  /** The k3k controller's image; its tag becomes the Cell's provider.k3kVersion. */
  k3kImage?: string;
  /** Nodes the DaemonSets run on (desiredNumberScheduled); default the Nodes there are, ≥ 1. */
  nodes?: number;
  /** Install a permissive stand-in for each k3k CRD that is missing; default true. */
  installMissingCrds?: boolean;
  /** How long to wait for stand-in CRDs to be Established; default 30 s. */
  crdTimeoutMs?: number;
}

export interface ProviderBaseline {
  config: ProviderBaselineConfig;
  /** The k3k CRDs this call installed as stand-ins (empty when all were there). */
  standInCrds: string[];
  nodes: number;
}

const K3K_CRD_NAMES: Record<string, { kind: string; scope: 'Namespaced' | 'Cluster' }> = {
  'clusters.k3k.io': { kind: 'Cluster', scope: 'Namespaced' },
  'virtualclusterpolicies.k3k.io': { kind: 'VirtualClusterPolicy', scope: 'Cluster' },
};

/**
 * A permissive stand-in for a k3k CRD (any spec and status, served as k3k.io/v1beta1 with the
 * status subresource), or undefined for a name it does not know. Pure.
 *
 * k3k's VirtualClusterPolicy has the short name `vcp`, which KubeCell's VirtualClusterPlan also
 * uses; the stand-in leaves it out so that `kubectl get vcp` stays unambiguous in tests.
 */
export function permissiveK3kCrd(name: string): KubeObject | undefined {
  const known = K3K_CRD_NAMES[name];
  if (!known) return undefined;
  const [plural = ''] = name.split('.');
  return permissiveCrd(
    { group: 'k3k.io', version: 'v1beta1', kind: known.kind, plural, scope: known.scope },
    "harness/simulate/provider-baseline.ts: NOT k3k's CRD, a permissive stand-in",
  );
}

/**
 * Makes sure every CRD in `names` is served: a missing k3k CRD gets its permissive stand-in.
 * Returns the names installed; waits until each is Established.
 */
export function ensureK3kCrds(
  client: KubeClient,
  names: readonly string[],
  options: { timeoutMs?: number } = {},
): Promise<string[]> {
  return ensureCrds(
    client,
    names,
    (name) => {
      const crd = permissiveK3kCrd(name);
      if (!crd) throw new Error(`CRD ${name} is missing and no stand-in is known for it`);
      return crd;
    },
    K3K_INSTALLER_FIELD_MANAGER,
    options.timeoutMs,
  );
}

function workload(kind: 'Deployment' | 'DaemonSet', where: Where, image: string): KubeObject {
  const labels = { 'app.kubernetes.io/name': where.name };
  return {
    apiVersion: 'apps/v1',
    kind,
    metadata: {
      name: where.name,
      namespace: where.namespace,
      labels,
      annotations: { 'kubecell.io/simulated-by': 'harness/simulate/provider-baseline.ts' },
    },
    spec: {
      ...(kind === 'Deployment' ? { replicas: 1 } : {}),
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: where.name, image }] },
      },
    },
  };
}

function workloadPath(resource: 'deployments' | 'daemonsets', where: Where): string {
  return resourcePath({ apiVersion: 'apps/v1', resource, ...where });
}

/**
 * The Deployment controller's report: available (1 of 1 replicas, Available=True) or not (0,
 * Available=False, MinimumReplicasUnavailable).
 */
export async function setDeploymentAvailable(
  client: KubeClient,
  where: Where,
  available: boolean,
  now: Date = new Date(),
): Promise<KubeObject> {
  const path = workloadPath('deployments', where);
  const current = await client.get(path);
  const time = formatTime(now);
  const count = available ? 1 : 0;
  return client.patchStatus(
    path,
    {
      status: {
        observedGeneration: current.metadata.generation ?? 1,
        replicas: 1,
        updatedReplicas: 1,
        readyReplicas: count,
        availableReplicas: count,
        ...(available ? {} : { unavailableReplicas: 1 }),
        conditions: [
          available
            ? {
                type: 'Available',
                status: 'True',
                reason: 'MinimumReplicasAvailable',
                message: 'Deployment has minimum availability.',
                lastUpdateTime: time,
                lastTransitionTime: time,
              }
            : {
                type: 'Available',
                status: 'False',
                reason: 'MinimumReplicasUnavailable',
                message: 'Deployment does not have minimum availability.',
                lastUpdateTime: time,
                lastTransitionTime: time,
              },
          {
            type: 'Progressing',
            status: 'True',
            reason: 'NewReplicaSetAvailable',
            message: `ReplicaSet "${where.name}" has successfully progressed.`,
            lastUpdateTime: time,
            lastTransitionTime: time,
          },
        ],
      },
    },
    DEPLOYMENT_CONTROLLER_FIELD_MANAGER,
  );
}

/** The DaemonSet controller's report: `desired` Nodes to run on, `ready` of them ready. */
export async function setDaemonSetScheduled(
  client: KubeClient,
  where: Where,
  desired: number,
  ready: number = desired,
): Promise<KubeObject> {
  const path = workloadPath('daemonsets', where);
  const current = await client.get(path);
  return client.patchStatus(
    path,
    {
      status: {
        observedGeneration: current.metadata.generation ?? 1,
        desiredNumberScheduled: desired,
        currentNumberScheduled: desired,
        updatedNumberScheduled: desired,
        numberMisscheduled: 0,
        numberReady: ready,
        numberAvailable: ready,
        ...(desired > ready ? { numberUnavailable: desired - ready } : {}),
      },
    },
    DAEMONSET_CONTROLLER_FIELD_MANAGER,
  );
}

/** The number of Nodes in the cluster (what a DaemonSet without a node selector runs on). */
export async function countNodes(client: KubeClient): Promise<number> {
  return (await client.list(resourcePath({ apiVersion: 'v1', resource: 'nodes' }))).length;
}

async function ensureNamespace(client: KubeClient, name: string, manager: string): Promise<void> {
  await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, manager);
}

/**
 * Installs the whole baseline, ready: namespaces, k3k's CRDs (stand-ins where missing), the k3k
 * controller Deployment (available), the CNI and TopoLVM node DaemonSets (all scheduled and
 * ready on `nodes` Nodes). Idempotent.
 */
export async function installProviderBaseline(
  client: KubeClient,
  options: ProviderBaselineOptions = {},
): Promise<ProviderBaseline> {
  const config = options.config ?? DEFAULT_CELL_CONFIG;
  const nodes = options.nodes ?? Math.max(1, await countNodes(client));
  await ensureNamespace(client, config.k3kNamespace, K3K_INSTALLER_FIELD_MANAGER);
  await ensureNamespace(client, config.k3kController.namespace, K3K_INSTALLER_FIELD_MANAGER);
  await ensureNamespace(client, config.cniDaemonSet.namespace, CNI_INSTALLER_FIELD_MANAGER);
  await ensureNamespace(
    client,
    config.topolvmNodeDaemonSet.namespace,
    TOPOLVM_INSTALLER_FIELD_MANAGER,
  );
  const standInCrds =
    options.installMissingCrds === false
      ? []
      : await ensureK3kCrds(client, config.k3kCRDs, {
          ...(options.crdTimeoutMs ? { timeoutMs: options.crdTimeoutMs } : {}),
        });

  await client.apply(
    workload('Deployment', config.k3kController, options.k3kImage ?? DEFAULT_K3K_IMAGE),
    K3K_INSTALLER_FIELD_MANAGER,
  );
  await setDeploymentAvailable(client, config.k3kController, true);
  await client.apply(
    workload('DaemonSet', config.cniDaemonSet, 'ghcr.io/flannel-io/flannel:v0.27.0'),
    CNI_INSTALLER_FIELD_MANAGER,
  );
  await setDaemonSetScheduled(client, config.cniDaemonSet, nodes);
  await client.apply(
    workload(
      'DaemonSet',
      config.topolvmNodeDaemonSet,
      'ghcr.io/topolvm/topolvm-with-sidecar:0.36.0',
    ),
    TOPOLVM_INSTALLER_FIELD_MANAGER,
  );
  await setDaemonSetScheduled(client, config.topolvmNodeDaemonSet, nodes);
  return { config, standInCrds, nodes };
}

/**
 * Follows the Node count as the DaemonSet controller would: both DaemonSets are rescheduled to
 * `nodes` Nodes (all ready). Returns the count written.
 */
export async function rescheduleDaemonSets(
  client: KubeClient,
  config: ProviderBaselineConfig = DEFAULT_CELL_CONFIG,
  nodes?: number,
): Promise<number> {
  const count = nodes ?? Math.max(1, await countNodes(client));
  await setDaemonSetScheduled(client, config.cniDaemonSet, count);
  await setDaemonSetScheduled(client, config.topolvmNodeDaemonSet, count);
  return count;
}
