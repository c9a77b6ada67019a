/**
 * One pass of the cell agent: read the cluster once, publish each profile's report when due,
 * make sure its signing key exists and is published (identity.ts), seal each delivered
 * VirtualCluster's kubeconfig when it changed. A failure in one part does not stop the others;
 * the summary says what happened, for the one log line per pass (loop.ts). Nothing in it carries
 * secret material: errors are the apiserver's messages and the agent's own.
 */
import { readFileSync } from 'node:fs';
import { TYPE_KEYS } from '../kube/objects.js';
import {
  AGENT_NAMESPACE,
  SEALING_PUBLIC_KEY_CONFIGMAP,
  SEALING_PUBLIC_KEY_KEY,
} from '../remote/contract.js';
import type { AgentConfig } from './config.js';
import type { AgentApi } from './kube-api.js';
import { agentIdentity, type AgentIdentity } from './identity.js';
import { observeManagedCluster } from './observe.js';
import { computeReports, publishReport } from './reports.js';
import { sealKubeconfig, sealTargets, type SealOutcome } from './seal-kubeconfigs.js';
import type { SealOrigin } from '../remote/sealing.js';
import { k3kKubeconfigSecretName } from '../virtualcluster/names.js';
import type { SecretRef } from './watches.js';
import { readConfigMap, type WriteOutcome } from './write.js';

export interface PassSummary {
  /** Per machine profile: what happened to its report ConfigMap. */
  reports: Record<string, WriteOutcome | 'failed'>;
  /** What happened to the published public signing key. */
  identity: WriteOutcome | 'failed';
  /** Per VirtualCluster host namespace: what happened to its sealed kubeconfig. */
  sealed: Record<string, SealOutcome | 'failed'>;
  /** What went wrong, in order (bounded messages, no secret). */
  errors: string[];
  /**
   * k3k's kubeconfig Secret of each delivered VirtualCluster, which the agent watches
   * (watches.ts); absent when the pass could not read the cluster.
   */
  secrets?: SecretRef[];
}

export interface PassDeps {
  api: AgentApi;
  config: AgentConfig;
  now: Date;
  /** Reads the public key file; fs by default. */
  readFile?: (path: string) => string;
}

const message = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);

export async function runPass(deps: PassDeps): Promise<PassSummary> {
  const summary: PassSummary = { reports: {}, identity: 'failed', sealed: {}, errors: [] };
  const { api, config, now } = deps;
  let identity: AgentIdentity | undefined;
  try {
    identity = await agentIdentity(api);
    summary.identity = identity.published;
  } catch (error) {
    summary.errors.push(`the agent's signing key: ${message(error)}`);
  }
  let related;
  try {
    related = await observeManagedCluster(api, config.cell);
  } catch (error) {
    summary.errors.push(`reading the cluster: ${message(error)}`);
    for (const profile of config.machineProfiles) summary.reports[profile] = 'failed';
    return summary;
  }
  for (const profile of config.machineProfiles) {
    try {
      // A value no apiserver checks (a TopoLVM annotation) may not parse: that profile fails.
      const [report] = computeReports(related, [profile], config.cell, now);
      summary.reports[profile] = await publishReport(api, report!, now);
    } catch (error) {
      summary.reports[profile] = 'failed';
      summary.errors.push(`report ${profile}: ${message(error)}`);
    }
  }
  const targets = sealTargets(Object.values(related[TYPE_KEYS.namespace] ?? {}));
  summary.secrets = targets.map((target) => ({
    namespace: target.namespace,
    name: k3kKubeconfigSecretName(target.name),
  }));
  if (targets.length > 0) await sealAll(deps, targets, identity, summary);
  return summary;
}

/** What every seal needs: the hub's public key, the agent's cluster name and signing key. */
async function sealing(
  deps: PassDeps,
  identity: AgentIdentity | undefined,
): Promise<{ publicKey: string; origin: SealOrigin } | 'waiting'> {
  const publicKey = await publicKeyPem(deps).catch((error: unknown) => {
    throw new Error(`the hub's public sealing key: ${message(error)}`);
  });
  const managedCluster = deps.config.managedCluster;
  if (managedCluster === undefined) {
    throw new Error(
      'KUBECELL_AGENT_MANAGED_CLUSTER is unset: a seal names the ManagedCluster it comes from',
    );
  }
  // No Secret for the key yet (the work is being applied), or the key failed (reported above).
  if (identity?.signingKey === undefined) return 'waiting';
  return { publicKey, origin: { managedCluster, signingKey: identity.signingKey } };
}

async function sealAll(
  deps: PassDeps,
  targets: ReturnType<typeof sealTargets>,
  identity: AgentIdentity | undefined,
  summary: PassSummary,
): Promise<void> {
  let needs: Awaited<ReturnType<typeof sealing>>;
  try {
    needs = await sealing(deps, identity);
  } catch (error) {
    for (const target of targets) summary.sealed[target.namespace] = 'failed';
    summary.errors.push(message(error));
    return;
  }
  for (const target of targets) {
    try {
      summary.sealed[target.namespace] =
        needs === 'waiting'
          ? 'waiting'
          : await sealKubeconfig(deps.api, target, needs.publicKey, needs.origin);
    } catch (error) {
      summary.sealed[target.namespace] = 'failed';
      summary.errors.push(`sealing ${target.namespace}/${target.name}: ${message(error)}`);
    }
  }
}

/** The hub's public key: the mounted file, else the ConfigMap the agent work ships. */
async function publicKeyPem(deps: PassDeps): Promise<string> {
  const file = deps.config.publicKeyFile;
  if (file !== undefined) {
    try {
      return (deps.readFile ?? ((path) => readFileSync(path, 'utf8')))(file);
    } catch {
      throw new Error(`cannot read ${file} (KUBECELL_SEALING_PUBLIC_KEY_FILE)`);
    }
  }
  const configMap = await readConfigMap(deps.api, AGENT_NAMESPACE, SEALING_PUBLIC_KEY_CONFIGMAP);
  const pem = configMap?.data?.[SEALING_PUBLIC_KEY_KEY];
  if (pem === undefined)
    throw new Error(
      `ConfigMap ${AGENT_NAMESPACE}/${SEALING_PUBLIC_KEY_CONFIGMAP} has no ${SEALING_PUBLIC_KEY_KEY}: the hub has no sealing key (KUBECELL_SEALING_KEY_FILE)`,
    );
  return pem;
}
