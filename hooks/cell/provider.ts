import type { CellProviderStatus } from '../generated/types/index.js';
import { conditionIsTrue, type DaemonSet, type Deployment } from '../kube/objects.js';
import type { CellControllerConfig } from './config.js';
import type { ClusterObservation } from './observe.js';

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

export function assessProvider(
  observation: ClusterObservation,
  config: CellControllerConfig,
): CellProviderStatus {
  const established = new Set(
    observation.k3kCRDs
      .filter((crd) => conditionIsTrue(crd.status?.conditions, 'Established'))
      .map((crd) => crd.metadata.name),
  );
  const version = k3kVersion(observation.k3kController);
  return {
    ...(version ? { k3kVersion: version } : {}),
    namespaceReady: observation.k3kNamespace?.status?.phase === 'Active',
    k3kCRDsReady: config.k3kCRDs.every((name) => established.has(name)),
    controllerReady: deploymentReady(observation.k3kController),
    cniReady: daemonSetReady(observation.cniDaemonSet),
    topolvmReady: daemonSetReady(observation.topolvmDaemonSet),
  };
}

export function providerReady(provider: CellProviderStatus): boolean {
  return Boolean(
    provider.namespaceReady &&
    provider.k3kCRDsReady &&
    provider.controllerReady &&
    provider.cniReady &&
    provider.topolvmReady,
  );
}

/** The baseline parts that are not ready, in a fixed order, for the condition message. */
export function missingProviderParts(provider: CellProviderStatus): string[] {
  const parts: [keyof CellProviderStatus, string][] = [
    ['namespaceReady', 'k3k namespace'],
    ['k3kCRDsReady', 'k3k CRDs'],
    ['controllerReady', 'k3k controller'],
    ['cniReady', 'CNI DaemonSet'],
    ['topolvmReady', 'TopoLVM node DaemonSet'],
  ];
  return parts.filter(([field]) => !provider[field]).map(([, label]) => label);
}
