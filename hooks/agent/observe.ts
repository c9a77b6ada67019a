/**
 * What the agent reads on its cluster each pass, as a related map keyed like Metacontroller's
 * (TYPE_KEYS), so the Cell controller's own `observeCluster` sorts it exactly as it sorts what
 * Metacontroller relates to a Local Cell: the profile Nodes (by label), every pod, Service and
 * PersistentVolume, the host namespaces, and the provider baseline by name.
 */
import type { CellControllerConfig } from '../cell/config.js';
import { LABELS } from '../kube/labels.js';
import { TYPE_KEYS } from '../kube/objects.js';
import { objectKey, type KubernetesObject, type ObjectMap } from '../metacontroller/protocol.js';
import type { AgentApi } from './kube-api.js';

const selector = (expression: string): string => `labelSelector=${encodeURIComponent(expression)}`;

/** The lists one pass reads, with the key each lands under. */
function listings(): Array<[key: string, path: string]> {
  return [
    [TYPE_KEYS.node, `/api/v1/nodes?${selector(LABELS.machineProfile)}`],
    [TYPE_KEYS.pod, '/api/v1/pods'],
    [TYPE_KEYS.namespace, `/api/v1/namespaces?${selector(`${LABELS.hostNamespace}=true`)}`],
    [TYPE_KEYS.service, '/api/v1/services'],
    [TYPE_KEYS.persistentVolume, '/api/v1/persistentvolumes'],
  ];
}

/** The provider baseline's objects, read by name (absent ones are simply not there). */
function namedReads(config: CellControllerConfig): Array<[key: string, path: string]> {
  const { k3kController, cniDaemonSet, topolvmNodeDaemonSet } = config;
  const namespaced = (
    group: string,
    resource: string,
    where: { namespace: string; name: string },
  ) => `/apis/${group}/namespaces/${where.namespace}/${resource}/${where.name}`;
  return [
    [TYPE_KEYS.namespace, `/api/v1/namespaces/${config.k3kNamespace}`],
    ...config.k3kCRDs.map((name): [string, string] => [
      TYPE_KEYS.customResourceDefinition,
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
    ]),
    [TYPE_KEYS.deployment, namespaced('apps/v1', 'deployments', k3kController)],
    [TYPE_KEYS.daemonSet, namespaced('apps/v1', 'daemonsets', cniDaemonSet)],
    [TYPE_KEYS.daemonSet, namespaced('apps/v1', 'daemonsets', topolvmNodeDaemonSet)],
  ];
}

/** Everything a report is computed from; throws when any read fails (no partial report). */
export async function observeManagedCluster(
  api: AgentApi,
  config: CellControllerConfig,
): Promise<ObjectMap> {
  const related: ObjectMap = {};
  const add = (key: string, object: KubernetesObject): void => {
    (related[key] ??= {})[objectKey(object)] = object;
  };
  const lists = await Promise.all(
    listings().map(async ([key, path]) => [key, await api.list(path)] as const),
  );
  for (const [key, objects] of lists) {
    related[key] ??= {};
    for (const object of objects) add(key, object);
  }
  const named = await Promise.all(
    namedReads(config).map(async ([key, path]) => [key, await api.get(path)] as const),
  );
  for (const [key, object] of named) {
    related[key] ??= {};
    if (object) add(key, object);
  }
  return related;
}
