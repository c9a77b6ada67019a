/** Fixtures of the host-namespace tests (not loaded in production). */
import { snapshotsBeside } from '../../test/support/snapshots.js';
import type { Namespace } from '../kube/objects.js';
import type { DecoratorSyncRequest, KubernetesObject } from '../metacontroller/protocol.js';

export const NOW = new Date('2026-11-30T00:00:00Z');

export function hostNamespace(
  name = 'tenant-a',
  labels: Record<string, string> = {},
  annotations: Record<string, string> = {},
): Namespace {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name,
      uid: `uid-${name}`,
      labels: {
        'kubernetes.io/metadata.name': name,
        'kubecell.io/host-namespace': 'true',
        ...labels,
      },
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    },
    status: { phase: 'Active' },
  };
}

/** The body Metacontroller posts to sync and finalize (v2). */
export function decoratorRequest(
  parent: Namespace,
  finalizing = false,
  children: Record<string, Record<string, KubernetesObject>> = {},
): DecoratorSyncRequest<Namespace> {
  return { parent, children, related: {}, finalizing };
}

/**
 * The namespace as Metacontroller applies a response to it: returned labels and annotations are
 * set, `null` removes one, every other key is left alone (its `updateStringMap`).
 */
export function applyResponse(
  namespace: Namespace,
  response: {
    labels?: Record<string, string | null>;
    annotations?: Record<string, string | null>;
  },
): Namespace {
  const apply = (
    current: Record<string, string> | undefined,
    updates: Record<string, string | null> | undefined,
  ): Record<string, string> => {
    const result = { ...(current ?? {}) };
    for (const [key, value] of Object.entries(updates ?? {})) {
      if (value === null) delete result[key];
      else result[key] = value;
    }
    return result;
  };
  return {
    ...namespace,
    metadata: {
      ...namespace.metadata,
      labels: apply(namespace.metadata.labels, response.labels),
      annotations: apply(namespace.metadata.annotations, response.annotations),
    },
  };
}

export { objectsYaml } from '../../test/support/snapshots.js';

/** Compares `text` with `hooks/host-namespace/__snapshots__/<name>.yaml`. */
export const matchSnapshot = snapshotsBeside(import.meta.url);
