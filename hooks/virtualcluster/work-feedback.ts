/**
 * What a sync of a VirtualCluster on a `delivery: ManifestWork` Cell learns from its
 * ManifestWork (work-ref.ts): whether OCM's work agent applied it, k3k's status of the
 * Cluster (feedback `k3kPhase` and `k3kReady*`, Strings), the NodePort of the API Service
 * (feedback `nodePort`, Integer) and k3k's admin kubeconfig as the KubeCell cell agent sealed it
 * for this VirtualCluster's UID (feedback `sealedKubeconfig`, String, of the ConfigMap
 * `kubecell-<name>-sealed-kubeconfig`), opened with the hub's current or, during a rotation,
 * previous private sealing key (hooks/remote/sealing.ts) and accepted only when it names the
 * work's ManagedCluster and is signed with the key that cluster's agent published, which
 * kubecell-delivery records on the work (CELL_AGENT_KEY_ANNOTATION). The opened kubeconfig then
 * takes the local publish path (render.ts `planSecret`: allowlist, server rewritten to the
 * endpoint, kept once published).
 *
 * Nothing read from the work is echoed but names, condition words, k3k's `Ready` reason and
 * message (bounded, as a local Cluster's are shown) and the sealing module's own problem (which
 * never holds key or secret material); the kubeconfig never is.
 */
import type { ResolvedPlacement, VirtualCluster } from '../generated/types/index.js';
import { echo } from '../json/echo.js';
import type { ObjectCondition } from '../kube/objects.js';
import {
  CELL_AGENT_KEY_ANNOTATION,
  FEEDBACK,
  sealedKubeconfigConfigMapName,
} from '../remote/contract.js';
import { SealingError, unseal, type ExpectedSeal } from '../remote/sealing.js';
import { parseAgentPublicKey, type SealingKeys } from '../remote/sealing-keys.js';
import { isJsonObject } from '../json/json.js';
import { isPort } from '../kube/addresses.js';
import { K3K_API_VERSION, KUBECONFIG_KEY } from './constants.js';
import {
  configMapMeta,
  feedbackValue,
  manifestCondition,
  type FeedbackValue,
  workCondition,
  type ObservedManifestWork,
} from '../remote/manifest-work.js';
import { findWork, workRef, type WorkRef } from './work-ref.js';
import type { K3kCluster, SecretObject, VirtualClusterObservation } from './observe.js';
import { planSecret } from './kubeconfig-secret.js';
import { childLabels, type RenderedChildren } from './render.js';

/** The kubeconfig fed back sealed: opened, not fed back yet, no key to open it, or unusable. */
export type FedBackKubeconfig =
  | { state: 'unsealed'; source: SecretObject; hubKey: 'current' | 'previous' }
  | { state: 'absent' }
  | { state: 'noKey' }
  | { state: 'invalid'; problem: string };

export interface WorkState {
  /** The work's namespace (the ManagedCluster's) and name (`kubecell-vc-<uid>`). */
  ref: WorkRef;
  /** ManifestWorks were in the request (customize relates them); false: not observed. */
  observed: boolean;
  work?: ObservedManifestWork;
  applied?: ObjectCondition;
  /** The NodePort the managed cluster's apiserver allocated, as fed back. */
  port?: number;
  /**
   * The k3k Cluster as its fed-back status describes it (phase and `Ready` condition only);
   * undefined while the work agent does not report it existing on the managed cluster.
   */
  cluster?: K3kCluster;
  /** The ConfigMap (in the host namespace on the managed cluster) whose `data.sealed` is fed back. */
  sealedConfigMap: string;
  kubeconfig: FedBackKubeconfig;
}

/**
 * Most characters of a sealed kubeconfig: the envelope of the largest kubeconfig published
 * (64 KiB), twice base64-encoded, is about 117,000; anything longer is refused before it is
 * decoded.
 */
export const MAX_SEALED_CHARS = 256 * 1024;

export function readWork(
  vc: VirtualCluster,
  resolved: ResolvedPlacement,
  observation: Pick<VirtualClusterObservation, 'works' | 'names'>,
  sealingKeys: SealingKeys | undefined,
): WorkState {
  const ref = workRef(resolved, vc.metadata.uid);
  const work = findWork(observation.works, ref);
  const sealedConfigMap = sealedKubeconfigConfigMapName(vc.metadata.name);
  const base = { ref, observed: observation.works !== undefined, sealedConfigMap };
  if (work === undefined) return { ...base, kubeconfig: { state: 'absent' } };
  const namespace = resolved.hostNamespace;
  const port = fedBackPort(work, namespace, observation.names.service);
  const sealed = feedbackValue(
    work,
    configMapMeta(namespace, sealedConfigMap),
    FEEDBACK.sealedKubeconfig,
  );
  const applied = workCondition(work, 'Applied');
  const cluster = fedBackCluster(work, namespace, observation.names.cluster);
  return {
    ...base,
    work,
    ...(applied === undefined ? {} : { applied }),
    ...(port === undefined ? {} : { port }),
    ...(cluster === undefined ? {} : { cluster }),
    kubeconfig: openSealed(sealed, sealingKeys, sealedFor(vc, ref.namespace, work), {
      configMap: sealedConfigMap,
      namespace,
    }),
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
 * The k3k Cluster from its fed-back status, for K3kReady to read as a local one (status.ts
 * `k3kReadyCondition`). It exists only while the work agent reports the manifest `Available`
 * (the object is there): the agent keeps the last values of an object it can no longer read
 * (ocm v1.3.1 `pkg/work/spoke/controllers/statuscontroller/availablestatus_controller.go`).
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
  where: { configMap: string; namespace: string },
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
    const source = openedSecret(opened.plaintext, where.configMap, where.namespace);
    return { state: 'unsealed', source, hubKey: opened.hubKey };
  } catch (error) {
    const problem = error instanceof SealingError ? echo(error.message, 512) : 'cannot unseal it';
    return { state: 'invalid', problem };
  }
}

/**
 * The opened kubeconfig in the shape of k3k's Secret, so that it takes the local publish path
 * (render.ts `planSecret`) unchanged; named after the ConfigMap it came from.
 */
function openedSecret(text: string, configMap: string, namespace: string): SecretObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: configMap, namespace },
    type: 'Opaque',
    data: { [KUBECONFIG_KEY]: Buffer.from(text, 'utf8').toString('base64') },
  };
}

/**
 * The children a sync on a ManifestWork Cell returns: the kubeconfig Secret on the hub alone
 * (the kubecell-delivery controller puts the others into the ManifestWork), planned exactly as
 * the local one, from the fed-back NodePort and the opened kubeconfig.
 */
export function renderWorkChildren(
  vc: VirtualCluster,
  resolved: ResolvedPlacement,
  observation: Pick<VirtualClusterObservation, 'names' | 'children'>,
  workState: WorkState,
): RenderedChildren {
  const source =
    workState.kubeconfig.state === 'unsealed' ? workState.kubeconfig.source : undefined;
  const secret = planSecret(
    observation.names,
    resolved,
    childLabels(vc, resolved),
    workState.port,
    source,
    observation.children,
  );
  return { rendered: true, children: secret.kind === 'none' ? [] : [secret.secret], secret };
}
