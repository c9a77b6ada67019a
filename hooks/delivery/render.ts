/**
 * The works a ManagedCluster should have, from what observe.ts found:
 *
 * - one `kubecell-vc-<uid>` per VirtualCluster placed on it through ManifestWorks
 *   (`status.resolved.cell`: this ManagedCluster, delivery ManifestWork) and not being deleted,
 *   annotated with the public signing key this cluster's agent fed back (fedBackAgentKey);
 * - `kubecell-cell-agent` while a ManifestWork Cell binds it or a VirtualCluster's work is
 *   desired (the agent seals the kubeconfigs), reporting on the bound Cells' machine profiles.
 *
 * Only deletion drops a work: a VirtualCluster that is absent or being deleted. A VirtualCluster
 * whose placement cannot be read, or a source that was not observed at all, keeps the work it
 * has as observed (keptChild), so a malformed input never deletes the children on the managed
 * cluster. (An input that fails validation never reaches this: the request is refused whole and
 * Metacontroller keeps every work.)
 */
import type { ResolvedPlacement, VirtualCluster } from '../generated/types/index.js';
import { compareStrings } from '../json/compare.js';
import { isJsonObject } from '../json/json.js';
import { keptChild } from '../metacontroller/kept-child.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import {
  AGENT_IDENTITY_CONFIGMAP,
  AGENT_NAMESPACE,
  AGENT_WORK_NAME,
  FEEDBACK,
  virtualClusterWorkName,
} from '../remote/contract.js';
import { configMapMeta, feedbackValue } from '../remote/manifest-work.js';
import { agentPublicKeyText, parseAgentPublicKey } from '../remote/sealing-keys.js';
import { renderAgentWork } from './agent-work.js';
import type { DeliveryConfig } from './config.js';
import type { DeliveryObservation } from './observe.js';
import { renderVirtualClusterWork, type DeliveredVirtualCluster } from './vc-work.js';

/** Prefix of every VirtualCluster work's name (virtualClusterWorkName). */
const VC_WORK_PREFIX = virtualClusterWorkName('');

function observedWork(o: DeliveryObservation, name: string): KubernetesObject | undefined {
  return o.works.get(`${o.clusterName}/${name}`);
}

/** The placement of a VirtualCluster delivered to this cluster, or undefined. */
export function deliveredPlacement(
  vc: VirtualCluster,
  clusterName: string,
): ResolvedPlacement | undefined {
  const status: VirtualCluster['status'] = isJsonObject(vc.status) ? vc.status : undefined;
  const resolved = status?.resolved ?? undefined;
  if (resolved === undefined || !isJsonObject(resolved.cell)) return undefined;
  const { cell } = resolved;
  return cell.managedClusterName === clusterName && cell.delivery === 'ManifestWork'
    ? resolved
    : undefined;
}

function hasUid(vc: VirtualCluster): vc is DeliveredVirtualCluster {
  return typeof vc.metadata.uid === 'string' && vc.metadata.uid !== '';
}

function byNamespaceAndName(a: VirtualCluster, b: VirtualCluster): number {
  return (
    compareStrings(a.metadata.namespace ?? '', b.metadata.namespace ?? '') ||
    compareStrings(a.metadata.name, b.metadata.name)
  );
}

/**
 * The public signing key the agent's work fed back (identity ConfigMap, feedback
 * `agentSigningKey`): parsed and written anew, or undefined while there is none that parses. The
 * agent's work is in this ManagedCluster's namespace, so the key is that cluster's agent's.
 */
export function fedBackAgentKey(o: DeliveryObservation): string | undefined {
  const value = feedbackValue(
    observedWork(o, AGENT_WORK_NAME),
    configMapMeta(AGENT_NAMESPACE, AGENT_IDENTITY_CONFIGMAP),
    FEEDBACK.agentSigningKey,
  );
  const key = parseAgentPublicKey(
    value?.type === 'String' && 'string' in value ? value.string : undefined,
  );
  return key === undefined ? undefined : agentPublicKeyText(key);
}

/** The VirtualClusters' works: rendered, kept as observed, or (deleted, absent) none. */
export function virtualClusterWorks(
  o: DeliveryObservation,
  config: DeliveryConfig,
): KubernetesObject[] {
  if (o.virtualClusters === undefined) {
    return [...o.works.values()]
      .filter((work) => work.metadata.name.startsWith(VC_WORK_PREFIX))
      .map(keptChild);
  }
  const works: KubernetesObject[] = [];
  const agentKey = fedBackAgentKey(o);
  for (const vc of [...o.virtualClusters].sort(byNamespaceAndName)) {
    if (!hasUid(vc) || vc.metadata.deletionTimestamp) continue;
    const placement = deliveredPlacement(vc, o.clusterName);
    if (placement !== undefined) {
      works.push(renderVirtualClusterWork(vc, placement, config, agentKey));
      continue;
    }
    const observed = observedWork(o, virtualClusterWorkName(vc.metadata.uid));
    if (observed !== undefined) works.push(keptChild(observed));
  }
  return works;
}

/** The machine profiles of the bound Cells, sorted, each once. */
export function boundProfiles(o: DeliveryObservation): string[] {
  const profiles = new Set<string>();
  for (const cell of o.cells ?? []) {
    const name = cell.spec?.machineProfile?.name;
    if (typeof name === 'string' && name !== '') profiles.add(name);
  }
  return [...profiles].sort(compareStrings);
}

/** The agent's work, if one is desired (see the module comment). */
export function agentWorks(
  o: DeliveryObservation,
  config: DeliveryConfig,
  vcWorks: number,
): KubernetesObject[] {
  if (o.cells === undefined) {
    const observed = observedWork(o, AGENT_WORK_NAME);
    return observed === undefined ? [] : [keptChild(observed)];
  }
  if (o.cells.length === 0 && vcWorks === 0) return [];
  return [renderAgentWork(o.clusterName, boundProfiles(o), config)];
}

/** Every desired work of the ManagedCluster: the agent's first, then the VirtualClusters'. */
export function renderDelivery(o: DeliveryObservation, config: DeliveryConfig): KubernetesObject[] {
  const vcWorks = virtualClusterWorks(o, config);
  return [...agentWorks(o, config, vcWorks.length), ...vcWorks];
}
