/**
 * The admin kubeconfig KubeCell published for a Ready VirtualCluster: the key
 * `kubeconfig.yaml` (KUBECONFIG_KEY) of the Secret its `status.credential.secretName` names,
 * controlled by that VirtualCluster (its UID). Each step that can fail says why, as a Refusal.
 */
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, KINDS, VERSION } from '../api/kinds.js';
import { isJsonObject } from '../json/json.js';
import { KUBECONFIG_KEY } from '../virtualcluster/constants.js';
import { Refusal, forbidden, isApiStatus, otherFailure, statusOf, type Target } from './refusal.js';

const PLURAL = KINDS.VirtualCluster.plural;
/** The VirtualCluster resource as kubectl names it. */
export const VC_RESOURCE = `${PLURAL}.${GROUP}`;

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

interface VirtualClusterObject {
  metadata?: { name?: string; namespace?: string; uid?: string; deletionTimestamp?: string };
  status?: {
    phase?: string;
    conditions?: Condition[];
    credential?: { secretName?: string };
  };
}

interface SecretObject {
  metadata?: {
    ownerReferences?: Array<{
      apiVersion?: string;
      kind?: string;
      uid?: string;
      controller?: boolean;
    }>;
  };
  data?: Record<string, string>;
}

/** The published kubeconfig of a Ready VirtualCluster, or a Refusal saying why not. */
export async function publishedKubeconfig(
  kubeConfig: KubeConfig,
  name: string,
  target: Target,
): Promise<string> {
  const vc = await readVirtualCluster(kubeConfig, name, target);
  const secretName = publishedSecretName(vc, name, target.namespace);
  const secret = await readSecret(kubeConfig, secretName, name, target);
  return kubeconfigOf(secret, vc, secretName, name, target.namespace);
}

async function readVirtualCluster(
  kubeConfig: KubeConfig,
  name: string,
  target: Target,
): Promise<VirtualClusterObject> {
  const { namespace } = target;
  try {
    return (await kubeConfig.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: PLURAL,
      name,
    })) as VirtualClusterObject;
  } catch (err) {
    if (isApiStatus(err, 404)) {
      const details = statusOf(err)?.details;
      if (isJsonObject(details) && details.name === name) {
        throw new Refusal(
          `VirtualCluster ${namespace}/${name} not found (context ${target.context}); ` +
            `kubectl get ${VC_RESOURCE} -n ${namespace} lists those that exist`,
        );
      }
      throw new Refusal(
        `the API server ${target.server} (context ${target.context}) serves no ` +
          `${VC_RESOURCE}/${VERSION}: KubeCell is not installed on that cluster`,
      );
    }
    if (isApiStatus(err, 403)) {
      throw forbidden(
        err,
        VC_RESOURCE,
        target,
        `Reading a VirtualCluster needs get on ${VC_RESOURCE} there, which the built-in ` +
          'ClusterRoles view, edit and admin grant once KubeCell is installed: ask your platform ' +
          'team for a RoleBinding to edit or admin in that namespace (docs/tenants.md).',
      );
    }
    throw otherFailure(err, `reading VirtualCluster ${namespace}/${name}`, target);
  }
}

/** The Secret named by a Ready VirtualCluster's status.credential.secretName, or why none. */
function publishedSecretName(vc: VirtualClusterObject, name: string, namespace: string): string {
  const watch = `kubectl get ${VC_RESOURCE} ${name} -n ${namespace} -w`;
  const status = vc.status ?? {};
  const secretName = status.credential?.secretName || undefined;
  if (status.phase !== 'Ready') {
    const ready = status.conditions?.find((condition) => condition.type === 'Ready');
    const condition =
      ready === undefined
        ? 'no Ready condition'
        : `Ready=${ready.status ?? '?'} ${ready.reason ?? ''}${ready.message ? `: ${ready.message}` : ''}`;
    throw new Refusal(
      `VirtualCluster ${namespace}/${name} is not Ready: phase ${status.phase ?? '(none)'}; ` +
        `${condition}\n${notReadyAdvice(status.phase, watch, secretName)}`,
    );
  }
  if (secretName === undefined) {
    throw new Refusal(
      `VirtualCluster ${namespace}/${name} is Ready but its kubeconfig is not published yet ` +
        '(status.credential.secretName is empty); try again in a moment: ' +
        watch,
    );
  }
  return secretName;
}

/** What to do about a VirtualCluster that is not Ready, by phase. */
function notReadyAdvice(phase: string | undefined, watch: string, secretName?: string): string {
  switch (phase) {
    case undefined:
      return `It has no status yet: KubeCell has not synced it. Check that Metacontroller and the KubeCell hook server run; watch it with: ${watch}`;
    case 'Pending':
      return `The feasibility evaluation has not accepted its placement: see status.feasibilityChecks (kubectl get ${VC_RESOURCE} -o yaml), or try a VirtualClusterPlan first (docs/tenants.md).`;
    case 'Provisioning':
      return `Its children are being created; try again when it is Ready: ${watch}`;
    case 'Degraded':
      return (
        'The cluster is left as it is, but KubeCell no longer vouches for it.' +
        (secretName === undefined
          ? ''
          : ` The kubeconfig published earlier is still in Secret ${secretName} (key ${KUBECONFIG_KEY}) if you need it now.`)
      );
    case 'Failed':
      return 'Failed is terminal: a platform operator must act (docs/concepts.md, VirtualCluster status).';
    case 'Deleting':
      return 'It is being deleted.';
    default:
      return watch;
  }
}

async function readSecret(
  kubeConfig: KubeConfig,
  secretName: string,
  name: string,
  target: Target,
): Promise<SecretObject> {
  const { namespace } = target;
  try {
    return (await kubeConfig
      .makeApiClient(CoreV1Api)
      .readNamespacedSecret({ name: secretName, namespace })) as SecretObject;
  } catch (err) {
    if (isApiStatus(err, 404)) {
      throw new Refusal(
        `the kubeconfig Secret ${namespace}/${secretName} that VirtualCluster ${name} names in ` +
          'status.credential.secretName does not exist (yet): KubeCell publishes it again on ' +
          'its next sync; try again in a moment',
      );
    }
    if (isApiStatus(err, 403)) {
      throw forbidden(
        err,
        'secrets',
        target,
        'The kubeconfig is in a Secret: reading it needs get on secrets there, which the ' +
          'built-in ClusterRoles edit and admin grant and view does not. Ask your platform team ' +
          'for a RoleBinding to edit or admin in that namespace (docs/tenants.md).',
      );
    }
    throw otherFailure(err, `reading Secret ${namespace}/${secretName}`, target);
  }
}

/** The kubeconfig in the Secret, once it is known to be the one KubeCell published for `vc`. */
function kubeconfigOf(
  secret: SecretObject,
  vc: VirtualClusterObject,
  secretName: string,
  name: string,
  namespace: string,
): string {
  const uid = vc.metadata?.uid;
  const owned = (secret.metadata?.ownerReferences ?? []).some(
    (ref) => ref.controller === true && ref.kind === 'VirtualCluster' && ref.uid === uid,
  );
  if (!owned) {
    throw new Refusal(
      `Secret ${namespace}/${secretName} is not controlled by VirtualCluster ${name} (UID ` +
        `${uid ?? 'unknown'}): refusing to hand out a credential KubeCell did not publish`,
    );
  }
  const encoded = secret.data?.[KUBECONFIG_KEY];
  if (encoded === undefined || encoded === '') {
    throw new Refusal(
      `Secret ${namespace}/${secretName} has no key ${KUBECONFIG_KEY}: it is not the kubeconfig ` +
        'KubeCell publishes; KubeCell puts it back on its next sync',
    );
  }
  return Buffer.from(encoded, 'base64').toString('utf8');
}
