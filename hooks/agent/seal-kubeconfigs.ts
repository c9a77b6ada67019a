/**
 * Sealing each VirtualCluster's kubeconfig for the hub (decision D34). A host namespace the hub
 * delivered carries the VirtualCluster's UID (label) and name (annotation)
 * (HOST_NAMESPACE_VIRTUALCLUSTER of remote/contract.ts); k3k writes the admin kubeconfig into
 * Secret k3k-<name>-kubeconfig there (key kubeconfig.yaml, virtualcluster/names.ts). The agent
 * seals it with the hub's public key for that UID into ConfigMap kubecell-<name>-sealed-kubeconfig
 * (key `sealed`), which the VirtualCluster's work created empty and whose value OCM's work agent
 * feeds back to the hub. The agent may read that Secret and read and update that ConfigMap only
 * through the Role the same work delivers (hooks/delivery/agent-rbac.ts).
 *
 * Each seal names the ManagedCluster the agent runs on and is signed with the agent's key
 * (identity.ts), so the hub can tell where it came from. Sealing is randomised, so the ConfigMap
 * also records a digest of what it sealed (envelope version, UID, hub public key, cluster,
 * signing key id and kubeconfig; SHA-256, nothing a reader can open): an unchanged kubeconfig is
 * not sealed and written again, and a new hub key or signing key re-seals it. The kubeconfig
 * itself is never logged nor kept.
 */
import { createHash } from 'node:crypto';
import { isLabelValue, LABELS } from '../kube/labels.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import {
  HOST_NAMESPACE_VIRTUALCLUSTER,
  SEALED_KUBECONFIG_KEY,
  sealedKubeconfigConfigMapName,
} from '../remote/contract.js';
import { SEALING_VERSION, sealFor, type SealOrigin } from '../remote/sealing.js';
import { keyId } from '../remote/sealing-keys.js';
import { KUBECONFIG_KEY } from '../virtualcluster/constants.js';
import { MAX_KUBECONFIG_BYTES } from '../virtualcluster/kubeconfig-policy.js';
import { k3kKubeconfigSecretName } from '../virtualcluster/names.js';
import type { AgentApi } from './kube-api.js';
import { readConfigMap, writeConfigMap, type WriteOutcome } from './write.js';

/** Annotation of the sealed ConfigMap: the digest of what it holds sealed. */
export const SEALED_DIGEST_ANNOTATION = 'kubecell.io/sealed-digest';

export interface SealTarget {
  namespace: string;
  name: string;
  uid: string;
}

/** The VirtualClusters whose host namespace the hub delivered, sorted by namespace. */
export function sealTargets(namespaces: readonly KubernetesObject[]): SealTarget[] {
  const targets: SealTarget[] = [];
  for (const namespace of namespaces) {
    const { name, labels, annotations } = namespace.metadata;
    if (labels?.[LABELS.hostNamespace] !== 'true') continue;
    const uid = labels[HOST_NAMESPACE_VIRTUALCLUSTER.uidLabel];
    const vcName = annotations?.[HOST_NAMESPACE_VIRTUALCLUSTER.nameAnnotation];
    if (!isLabelValue(uid) || uid === '' || !vcName) continue;
    targets.push({ namespace: name, name: vcName, uid });
  }
  return targets.sort((a, b) =>
    a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0,
  );
}

export function sealedDigest(
  uid: string,
  publicKeyPem: string,
  origin: SealOrigin,
  kubeconfig: string,
): string {
  const hash = createHash('sha256');
  const signer = keyId(origin.signingKey);
  const parts = [`v${SEALING_VERSION}`, uid, publicKeyPem, origin.managedCluster, signer];
  for (const part of [...parts, kubeconfig]) hash.update(part).update('\0');
  return `sha256:${hash.digest('hex')}`;
}

export type SealOutcome = WriteOutcome;

/**
 * Seals the target's kubeconfig when it is there and not sealed as it is; `waiting` before k3k
 * wrote it or before the work created the ConfigMap.
 */
export async function sealKubeconfig(
  api: AgentApi,
  target: SealTarget,
  publicKeyPem: string,
  origin: SealOrigin,
): Promise<SealOutcome> {
  const secretPath = `/api/v1/namespaces/${encodeURIComponent(target.namespace)}/secrets/${encodeURIComponent(k3kKubeconfigSecretName(target.name))}`;
  const secret = (await api.get(secretPath)) as
    (KubernetesObject & { data?: Record<string, string> }) | undefined;
  const encoded = secret?.data?.[KUBECONFIG_KEY];
  if (encoded === undefined) return 'waiting';
  const kubeconfig = Buffer.from(encoded, 'base64').toString('utf8');
  if (Buffer.byteLength(kubeconfig) > MAX_KUBECONFIG_BYTES) {
    throw new Error(
      `${target.namespace}/${k3kKubeconfigSecretName(target.name)}: the kubeconfig is larger than ${MAX_KUBECONFIG_BYTES} bytes; not sealed`,
    );
  }
  const name = sealedKubeconfigConfigMapName(target.name);
  const digest = sealedDigest(target.uid, publicKeyPem, origin, kubeconfig);
  const existing = await readConfigMap(api, target.namespace, name);
  if (existing === undefined) return 'waiting';
  if (
    existing?.metadata.annotations?.[SEALED_DIGEST_ANNOTATION] === digest &&
    existing.data?.[SEALED_KUBECONFIG_KEY] !== undefined
  )
    return 'unchanged';
  return writeConfigMap(
    api,
    {
      namespace: target.namespace,
      name,
      data: { [SEALED_KUBECONFIG_KEY]: sealFor(publicKeyPem, target.uid, kubeconfig, origin) },
      annotations: { [SEALED_DIGEST_ANNOTATION]: digest },
    },
    existing,
  );
}
