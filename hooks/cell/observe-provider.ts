/**
 * The provider baseline as the Cell reads it, narrowed once (observe.ts) to its status: k3k's
 * namespace, CRDs and controller, the CNI and TopoLVM DaemonSets, each ready or not.
 */
import type { CellProviderStatus } from '../generated/types/index.js';
import {
  conditionIsTrue,
  type CustomResourceDefinition,
  type DaemonSet,
  type Deployment,
  type Namespace,
} from '../kube/objects.js';
import type { CellControllerConfig } from './config.js';

/** The baseline's objects under the names the settings give (config.ts). */
export interface ProviderObjects {
  k3kNamespace?: Namespace;
  k3kCRDs: CustomResourceDefinition[];
  k3kController?: Deployment;
  cniDaemonSet?: DaemonSet;
  topolvmDaemonSet?: DaemonSet;
}

function daemonSetReady(daemonSet: DaemonSet | undefined): boolean {
  const desired = daemonSet?.status?.desiredNumberScheduled ?? 0;
  return desired > 0 && (daemonSet?.status?.numberReady ?? 0) >= desired;
}

function deploymentReady(deployment: Deployment | undefined): boolean {
  return (
    (deployment?.status?.availableReplicas ?? 0) > 0 &&
    conditionIsTrue(deployment?.status?.conditions, 'Available')
  );
}

/** The k3k version is the controller image's tag, the one thing every k3k install has. */
function k3kVersion(deployment: Deployment | undefined): string | undefined {
  const image = deployment?.spec?.template?.spec?.containers?.[0]?.image;
  const tag = image?.includes(':') ? image.slice(image.lastIndexOf(':') + 1) : undefined;
  return tag && !tag.includes('/') ? tag : undefined;
}

export function observeProvider(
  objects: ProviderObjects,
  config: CellControllerConfig,
): CellProviderStatus {
  const established = new Set(
    objects.k3kCRDs
      .filter((crd) => conditionIsTrue(crd.status?.conditions, 'Established'))
      .map((crd) => crd.metadata.name),
  );
  const version = k3kVersion(objects.k3kController);
  return {
    ...(version ? { k3kVersion: version } : {}),
    namespaceReady: objects.k3kNamespace?.status?.phase === 'Active',
    k3kCRDsReady: config.k3kCRDs.every((name) => established.has(name)),
    controllerReady: deploymentReady(objects.k3kController),
    cniReady: daemonSetReady(objects.cniDaemonSet),
    topolvmReady: daemonSetReady(objects.topolvmDaemonSet),
  };
}
