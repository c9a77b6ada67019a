/**
 * The agent's signing key (decision D34, hooks/remote/sealing.ts): what lets the hub tell which
 * ManagedCluster sealed a kubeconfig. The agent makes an Ed25519 key once and keeps it in Secret
 * AGENT_NAMESPACE/AGENT_SIGNING_KEY_SECRET, which the agent's work creates empty; the private
 * key never leaves the cluster. It publishes the public half in ConfigMap
 * AGENT_NAMESPACE/AGENT_IDENTITY_CONFIGMAP, which the work feeds back to the hub. A Secret that
 * holds no usable key (emptied, or something else written into it) gets a new key: the hub takes
 * whatever key the agent publishes, and the agent re-seals for it (seal-kubeconfigs.ts).
 */
import type { KeyObject } from 'node:crypto';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import {
  AGENT_IDENTITY_CONFIGMAP,
  AGENT_NAMESPACE,
  AGENT_PUBLIC_SIGNING_KEY_KEY,
  AGENT_SIGNING_KEY_KEY,
  AGENT_SIGNING_KEY_SECRET,
} from '../remote/contract.js';
import {
  agentPrivateKeyPem,
  agentPublicKeyText,
  generateAgentKey,
  parseAgentPrivateKey,
} from '../remote/sealing-keys.js';
import type { AgentApi } from './kube-api.js';
import { readConfigMap, writeConfigMap, type WriteOutcome } from './write.js';

const SECRET_PATH = `/api/v1/namespaces/${AGENT_NAMESPACE}/secrets/${AGENT_SIGNING_KEY_SECRET}`;

type SecretObject = KubernetesObject & { data?: Record<string, string> };

export interface AgentIdentity {
  /** The signing key; undefined while the work has not created its Secret. */
  signingKey?: KeyObject;
  /** What happened to the published public key (`waiting`: no Secret or ConfigMap yet). */
  published: WriteOutcome;
}

/** The key the Secret holds, made and stored first when it holds none. */
async function signingKey(api: AgentApi): Promise<KeyObject | undefined> {
  const secret = (await api.get(SECRET_PATH)) as SecretObject | undefined;
  if (secret === undefined) return undefined;
  const stored = secret.data?.[AGENT_SIGNING_KEY_KEY];
  const existing =
    stored === undefined
      ? undefined
      : parseAgentPrivateKey(Buffer.from(stored, 'base64').toString('utf8'));
  if (existing !== undefined) return existing;
  const made = generateAgentKey();
  const pem = Buffer.from(agentPrivateKeyPem(made), 'utf8').toString('base64');
  // The resourceVersion read guards against a second writer: a conflict fails this pass.
  await api.update(SECRET_PATH, {
    ...secret,
    data: { [AGENT_SIGNING_KEY_KEY]: pem },
  } as SecretObject);
  return made;
}

/** The agent's signing key, its public half published. */
export async function agentIdentity(api: AgentApi): Promise<AgentIdentity> {
  const key = await signingKey(api);
  if (key === undefined) return { published: 'waiting' };
  const existing = await readConfigMap(api, AGENT_NAMESPACE, AGENT_IDENTITY_CONFIGMAP);
  const published = await writeConfigMap(
    api,
    {
      namespace: AGENT_NAMESPACE,
      name: AGENT_IDENTITY_CONFIGMAP,
      data: { [AGENT_PUBLIC_SIGNING_KEY_KEY]: agentPublicKeyText(key) },
    },
    existing,
  );
  return { signingKey: key, published };
}
