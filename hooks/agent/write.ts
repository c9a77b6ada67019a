/**
 * Writing the agent's ConfigMaps: update when the wanted data or annotations differ, nothing
 * otherwise. A quiet cluster costs reads only. The agent never creates one: the hub's works do,
 * empty (hooks/delivery/agent-rbac.ts: RBAC cannot grant `create` of one name), so an absent
 * ConfigMap means the work agent has not applied it yet (`waiting`). The update carries the
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

/** `waiting`: the ConfigMap does not exist (yet); the hub's work creates it. */
export type WriteOutcome = 'updated' | 'unchanged' | 'waiting';

export function configMapPath(namespace: string, name: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${encodeURIComponent(name)}`;
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
  if (!existing) return 'waiting';
  if (holds(existing, wanted)) return 'unchanged';
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
