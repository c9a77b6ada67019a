/**
 * What the hub learns from each of a VirtualCluster's ManifestWorks (work-ref.ts), read once, in
 * observe: whether OCM's work agent applied it, k3k's status of the Cluster (feedback `k3kPhase`
 * and `k3kReady*`, Strings), the NodePort of the API Service (feedback `nodePort`, Integer) and
 * k3k's admin kubeconfig as the KubeCell cell agent sealed it for this VirtualCluster's UID
 * (feedback `sealedKubeconfig`, String, of the ConfigMap `kubecell-<name>-sealed-kubeconfig`),
 * opened with the hub's current or, during a rotation, previous private sealing key
 * (hooks/remote/sealing.ts) and accepted only when it names the work's ManagedCluster and is
 * signed with the key that cluster's agent published, which kubecell-delivery records on the
 * work (CELL_AGENT_KEY_ANNOTATION). The opened kubeconfig is read as a Secret's would be
 * (kubeconfig-secret.ts), so that it takes the local publish path (`planSecret`: allowlist,
 * server rewritten to the endpoint, kept once published).
 *
 * A work's feedback is not among what the validation layer checks: every value is checked here.
 * Nothing read from the work is echoed but names, condition words, k3k's `Ready` reason and
 * message (bounded, as a local Cluster's are shown) and the sealing module's own problem (which
 * never holds key or secret material); the kubeconfig never is.
 */
import type { VirtualCluster } from '../generated/types/index.js';
import { echo } from '../json/echo.js';
import { isJsonObject } from '../json/json.js';
import { isPort } from '../kube/addresses.js';
import type { ObjectCondition } from '../kube/objects.js';
import { CELL_AGENT_KEY_ANNOTATION, FEEDBACK } from '../remote/contract.js';
import {
  configMapMeta,
  feedbackValue,
  manifestCondition,
  workCondition,
  type FeedbackValue,
  type ObservedManifestWork,
  type WorkCondition,
} from '../remote/manifest-work.js';
import { SealingError, unseal, type ExpectedSeal } from '../remote/sealing.js';
import { parseAgentPublicKey, type SealingKeys } from '../remote/sealing-keys.js';
import { K3K_API_VERSION } from './constants.js';
import { readKubeconfigData, type SecretKubeconfig } from './kubeconfig-secret.js';
import type { ChildNames } from './names.js';
import type { K3kCluster } from './observe-children.js';
import { refOf, type WorkRef } from './work-ref.js';

/** The kubeconfig fed back sealed: opened, not fed back yet, no key to open it, or unusable. */
export type FedBackKubeconfig =
  | { state: 'unsealed'; kubeconfig: SecretKubeconfig; hubKey: 'current' | 'previous' }
  | { state: 'absent' }
  | { state: 'noKey' }
  | { state: 'invalid'; problem: string };

/** What one of the VirtualCluster's works reports. */
export interface WorkFeedback {
  /** The work's namespace (its ManagedCluster's) and name (`kubecell-vc-<uid>`). */
  ref: WorkRef;
  applied?: WorkCondition;
  /** The NodePort the managed cluster's apiserver allocated, as fed back. */
  port?: number;
  /**
   * The k3k Cluster as its fed-back status describes it (phase and `Ready` condition only);
   * undefined while the work agent does not report it existing on the managed cluster.
   */
  cluster?: K3kCluster;
  kubeconfig: FedBackKubeconfig;
}

/**
 * Most characters of a sealed kubeconfig: the envelope of the largest kubeconfig published
 * (64 KiB), twice base64-encoded, is about 117,000; anything longer is refused before it is
 * decoded.
 */
export const MAX_SEALED_CHARS = 256 * 1024;

/** Where the VirtualCluster's objects are on the managed cluster, as the work names them. */
export interface FedBackObjects {
  /** The host namespace (`status.resolved.hostNamespace`). */
  namespace: string;
  names: ChildNames;
  /** The ConfigMap whose `data.sealed` is fed back. */
  sealedConfigMap: string;
}

/** What `work` reports of the VirtualCluster `vc`'s objects. */
export function readWorkFeedback(
  vc: VirtualCluster,
  work: ObservedManifestWork,
  objects: FedBackObjects,
  sealingKeys: SealingKeys | undefined,
): WorkFeedback {
  const { namespace, names, sealedConfigMap } = objects;
  const ref = refOf(work);
  const port = fedBackPort(work, namespace, names.service);
  const sealed = feedbackValue(
    work,
    configMapMeta(namespace, sealedConfigMap),
    FEEDBACK.sealedKubeconfig,
  );
  const applied = workCondition(work, 'Applied');
  const cluster = fedBackCluster(work, namespace, names.cluster);
  return {
    ref,
    ...(applied === undefined ? {} : { applied }),
    ...(port === undefined ? {} : { port }),
    ...(cluster === undefined ? {} : { cluster }),
    kubeconfig: openSealed(sealed, sealingKeys, sealedFor(vc, ref.namespace, work)),
  };
}

/**
 * What the seal must show: this VirtualCluster's UID, the work's ManagedCluster, and that
 * cluster's agent key as kubecell-delivery recorded it on the work (parsed anew: an annotation
 * that is no Ed25519 key counts as none).
 */
function sealedFor(
  vc: VirtualCluster,
  managedCluster: string,
  work: ObservedManifestWork,
): ExpectedSeal {
  const annotation = work.metadata.annotations?.[CELL_AGENT_KEY_ANNOTATION];
  return { uid: vc.metadata.uid ?? '', managedCluster, agentKey: parseAgentPublicKey(annotation) };
}

/** The API Service's NodePort as fed back (an Integer from 1 to 65535), if it was. */
function fedBackPort(
  work: ObservedManifestWork,
  namespace: string,
  service: string,
): number | undefined {
  const value = feedbackValue(
    work,
    { group: '', version: 'v1', kind: 'Service', namespace, name: service },
    FEEDBACK.nodePort,
  );
  const port: unknown = value?.type === 'Integer' && 'integer' in value ? value.integer : undefined;
  return isPort(port) ? port : undefined;
}

/**
 * The k3k Cluster from its fed-back status, for K3kReady to read as a local one
 * (child-conditions.ts `k3kReadyCondition`). It exists only while the work agent reports the
 * manifest `Available` (the object is there): the agent keeps the last values of an object it
 * can no longer read (ocm v1.3.1
 * `pkg/work/spoke/controllers/statuscontroller/availablestatus_controller.go`).
 */
function fedBackCluster(
  work: ObservedManifestWork,
  namespace: string,
  name: string,
): K3kCluster | undefined {
  const [group = '', version = ''] = K3K_API_VERSION.split('/');
  const meta = { group, version, kind: 'Cluster', namespace, name };
  const manifest = manifestCondition(work, meta);
  const conditions = manifest?.['conditions'];
  const exists =
    Array.isArray(conditions) &&
    conditions.some((c) => isJsonObject(c) && c['type'] === 'Available' && c['status'] === 'True');
  if (!exists) return undefined;
  const text = (feedback: string): string | undefined => {
    const value = feedbackValue(work, meta, feedback);
    return value?.type === 'String' && 'string' in value && typeof value.string === 'string'
      ? echo(value.string)
      : undefined;
  };
  const phase = text(FEEDBACK.k3kPhase);
  const status = text(FEEDBACK.k3kReadyStatus);
  const reason = text(FEEDBACK.k3kReadyReason);
  const message = text(FEEDBACK.k3kReadyMessage);
  const ready: ObjectCondition | undefined =
    status === undefined
      ? undefined
      : {
          type: 'Ready',
          status,
          ...(reason === undefined ? {} : { reason }),
          ...(message === undefined ? {} : { message }),
        };
  return {
    apiVersion: K3K_API_VERSION,
    kind: 'Cluster',
    metadata: { name, namespace },
    status: { ...(phase === undefined ? {} : { phase }), conditions: ready ? [ready] : [] },
  };
}

/** Opens the fed-back sealed kubeconfig, if it was sealed as `expected` says. */
function openSealed(
  value: FeedbackValue | undefined,
  keys: SealingKeys | undefined,
  expected: ExpectedSeal,
): FedBackKubeconfig {
  if (value === undefined) return { state: 'absent' };
  const sealed: unknown = value.type === 'String' && 'string' in value ? value.string : undefined;
  if (typeof sealed !== 'string') {
    return {
      state: 'invalid',
      problem: `it was fed back as type ${echo(value.type, 32)}, not String`,
    };
  }
  if (sealed === '') return { state: 'absent' };
  if (sealed.length > MAX_SEALED_CHARS) {
    return {
      state: 'invalid',
      problem: `it is ${sealed.length} characters, more than the ${MAX_SEALED_CHARS} a sealed kubeconfig of at most 64 KiB takes`,
    };
  }
  if (keys === undefined) return { state: 'noKey' };
  try {
    const opened = unseal(keys, expected, sealed);
    // Read exactly as k3k's Secret would be: its data is the base64 of the kubeconfig.
    const encoded = Buffer.from(opened.plaintext, 'utf8').toString('base64');
    return { state: 'unsealed', kubeconfig: readKubeconfigData(encoded), hubKey: opened.hubKey };
  } catch (error) {
    const problem = error instanceof SealingError ? echo(error.message, 512) : 'cannot unseal it';
    return { state: 'invalid', problem };
  }
}
