/**
 * Writing the agent's ConfigMaps: create when absent, update when the wanted data or annotations
 * differ, nothing otherwise. A quiet cluster costs reads only. The update carries the
 * resourceVersion read, so two writers never silently overwrite each other (a conflict fails the
 * write; the next pass reads again).
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import type { AgentApi } from './kube-api.js';

export interface ConfigMapWanted {
  namespace: string;
  name: string;
  data: Record<string, string>;
  annotations?: Record<string, string>;
}

export type ConfigMapObject = KubernetesObject & { data?: Record<string, string> };

export type WriteOutcome = 'created' | 'updated' | 'unchanged';

export const AGENT_MANAGED_LABELS = Object.freeze({
  'app.kubernetes.io/managed-by': 'kubecell',
  'app.kubernetes.io/component': 'cell-agent',
});

export function configMapPath(namespace: string, name?: string): string {
  const collection = `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps`;
  return name === undefined ? collection : `${collection}/${encodeURIComponent(name)}`;
}

export async function readConfigMap(
  api: AgentApi,
  namespace: string,
  name: string,
): Promise<ConfigMapObject | undefined> {
  return (await api.get(configMapPath(namespace, name))) as ConfigMapObject | undefined;
}

/** Whether `existing` already holds what is wanted (its other annotations do not matter). */
export function holds(existing: ConfigMapObject, wanted: ConfigMapWanted): boolean {
  if (!isDeepStrictEqual(existing.data ?? {}, wanted.data)) return false;
  const annotations = existing.metadata.annotations ?? {};
  return Object.entries(wanted.annotations ?? {}).every(
    ([key, value]) => annotations[key] === value,
  );
}

/** Makes the ConfigMap hold `wanted`, given what was read (`existing`, undefined if absent). */
export async function writeConfigMap(
  api: AgentApi,
  wanted: ConfigMapWanted,
  existing: ConfigMapObject | undefined,
): Promise<WriteOutcome> {
  if (existing && holds(existing, wanted)) return 'unchanged';
  if (!existing) {
    await api.create(configMapPath(wanted.namespace), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: wanted.name,
        namespace: wanted.namespace,
        labels: { ...AGENT_MANAGED_LABELS },
        ...(wanted.annotations ? { annotations: { ...wanted.annotations } } : {}),
      },
      data: wanted.data,
    } as ConfigMapObject);
    return 'created';
  }
  await api.update(configMapPath(wanted.namespace, wanted.name), {
    ...existing,
    metadata: {
      ...existing.metadata,
      annotations: { ...existing.metadata.annotations, ...wanted.annotations },
    },
    data: wanted.data,
  } as ConfigMapObject);
  return 'updated';
}
