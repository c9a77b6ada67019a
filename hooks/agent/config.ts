/**
 * The cell agent's settings (decision D34). The agent runs on a managed cluster as the Deployment
 * the hub's kubecell-delivery controller ships in the ManifestWork kubecell-cell-agent, which
 * passes the profiles to report and the mounted public key (AGENT_ENV of remote/contract.ts).
 *
 * | Variable                           | Default | Meaning                                         |
 * | ---------------------------------- | ------- | ----------------------------------------------- |
 * | `KUBECELL_AGENT_INTERVAL_SECONDS`  | `30`    | Seconds between two passes (5 to 3600)          |
 * | `KUBECELL_AGENT_MACHINE_PROFILES`  | unset   | Comma-separated machine profiles to report      |
 * | `KUBECELL_AGENT_MANAGED_CLUSTER`   | unset   | The ManagedCluster it runs on; unset: it cannot |
 * |                                    |         | seal (a seal names its cluster)                 |
 * | `KUBECELL_SEALING_PUBLIC_KEY_FILE` | unset   | The hub's public sealing key (PEM); unset: read |
 * |                                    |         | ConfigMap kubecell-sealing-public-key instead   |
 *
 * The provider baseline's names (KUBECELL_K3K_CONTROLLER, KUBECELL_CNI_DAEMONSET,
 * KUBECELL_TOPOLVM_DAEMONSET) are the Cell controller's, read by its own loader.
 */
import { ConfigError, EnvReader } from '../config/env-reader.js';
import { loadCellConfig, type CellControllerConfig } from '../cell/config.js';
import { isLabelValue } from '../kube/labels.js';
import { isDnsSubdomain } from '../kube/objects.js';

export interface AgentConfig {
  intervalSeconds: number;
  /** The machine profiles to report on, sorted, without duplicates. */
  machineProfiles: string[];
  /** The ManagedCluster it runs on (the hub's name for it), named in every seal. */
  managedCluster?: string;
  /** File of the hub's public sealing key; undefined: the ConfigMap in AGENT_NAMESPACE. */
  publicKeyFile?: string;
  /** Where the provider baseline is (the Cell controller's settings). */
  cell: CellControllerConfig;
}

export const DEFAULT_AGENT_INTERVAL_SECONDS = 30;

/** Reads the agent's settings; throws a ConfigError naming every bad variable. */
export function loadAgentConfig(env: NodeJS.ProcessEnv): AgentConfig {
  const problems: string[] = [];
  let cell: CellControllerConfig | undefined;
  try {
    cell = loadCellConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems);
  }
  const reader = new EnvReader(env);
  const intervalSeconds = reader.seconds(
    'KUBECELL_AGENT_INTERVAL_SECONDS',
    DEFAULT_AGENT_INTERVAL_SECONDS,
    5,
    3600,
  );
  const profilesText = reader.optional('KUBECELL_AGENT_MACHINE_PROFILES') ?? '';
  const machineProfiles = [
    ...new Set(
      profilesText
        .split(',')
        .map((profile) => profile.trim())
        .filter((profile) => profile !== ''),
    ),
  ].sort();
  const bad = machineProfiles.filter((profile) => !isLabelValue(profile));
  if (bad.length > 0) {
    reader.problem(
      `KUBECELL_AGENT_MACHINE_PROFILES=${JSON.stringify(profilesText)} names ${bad.map((p) => JSON.stringify(p)).join(', ')}, not machine profiles; set it to comma-separated label values such as a100,h100`,
    );
  }
  const publicKeyFile = reader.optional('KUBECELL_SEALING_PUBLIC_KEY_FILE');
  const managedCluster = reader.optional('KUBECELL_AGENT_MANAGED_CLUSTER');
  if (managedCluster !== undefined && !isDnsSubdomain(managedCluster)) {
    reader.problem(
      `KUBECELL_AGENT_MANAGED_CLUSTER=${JSON.stringify(managedCluster)} is not a ManagedCluster name; set it to the cluster's name on the hub, such as gpu-west (the delivered Deployment does)`,
    );
  }
  for (const problem of problems) reader.problem(problem);
  reader.finish();
  return {
    intervalSeconds,
    machineProfiles,
    ...(managedCluster === undefined ? {} : { managedCluster }),
    ...(publicKeyFile === undefined ? {} : { publicKeyFile }),
    cell: cell as CellControllerConfig,
  };
}
