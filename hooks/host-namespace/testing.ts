/** Fixtures of the host-namespace tests (not loaded in production). */
import { snapshotsBeside } from '../../test/support/snapshots.js';
import type { Namespace } from '../kube/objects.js';
import { toObjectMap, type KubernetesObject } from '../metacontroller/protocol.js';
import {
  decoratorHookBody,
  loadFixture,
  type DecoratorHookBody,
} from '../metacontroller/testing.js';
import { NETWORK_POLICY_KEY } from './sync.js';

export const NOW = new Date('2026-11-30T00:00:00Z');

/** A sync or finalize answer as the tests read it. */
export interface HookResponse {
  labels?: Record<string, string | null>;
  annotations?: Record<string, string | null>;
  status?: unknown;
  attachments: KubernetesObject[];
  resyncAfterSeconds?: number;
  finalized?: boolean;
}

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

/** The kubecell-host-namespace DecoratorController, as Metacontroller sends it in `controller`. */
export function hostNamespaceController(): Record<string, unknown> {
  return loadFixture<DecoratorHookBody>('decorator-sync-v2').controller;
}

/**
 * The body Metacontroller posts to sync and finalize (`pkg/controller/decorator/api/v2/hooks.go`):
 * the namespace under `object`, the observed NetworkPolicies under `attachments`, whose group is
 * always there (the DecoratorController declares it), `related` empty (customize asks for
 * nothing).
 */
export function decoratorRequest(
  namespace: Namespace,
  finalizing = false,
  attachments: readonly KubernetesObject[] = [],
): DecoratorHookBody<Namespace> {
  return decoratorHookBody(hostNamespaceController(), namespace, {
    attachments: { [NETWORK_POLICY_KEY]: {}, ...toObjectMap(attachments) },
    finalizing,
  });
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
