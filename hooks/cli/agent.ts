/**
 * `kubecell agent [--once]`: the KubeCell cell agent (hooks/agent), as the Deployment the hub's
 * ManifestWork kubecell-cell-agent runs it on a managed cluster (decision D34). It reports each
 * machine profile's inventory into ConfigMaps the hub reads back through OCM, and seals each
 * delivered VirtualCluster's kubeconfig for the hub. Logs one JSON line per pass on stdout.
 */
import { ConfigError } from '../config/env-reader.js';
import { loadAgentConfig, type AgentConfig } from '../agent/config.js';
import { kubeApi, kubeWatch, type AgentApi, type WatchApi } from '../agent/kube-api.js';
import { runAgentLoop } from '../agent/loop.js';
import { loadKubeConfig } from '../kube/kube-config.js';
import { createLogger, type Logger } from '../server/logger.js';
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE, type CliIo } from './io.js';

export const AGENT_USAGE = `Usage:
  kubecell agent [--once]

Runs the KubeCell cell agent on a managed cluster (installed there by the hub through the OCM
ManifestWork kubecell-cell-agent). Every KUBECELL_AGENT_INTERVAL_SECONDS, and within a second of
a change of a host namespace or of a k3k kubeconfig Secret it watches, it reads the cluster's
Nodes, pods, Services, PersistentVolumes and provider baseline, and writes the report of each
machine profile of KUBECELL_AGENT_MACHINE_PROFILES into ConfigMap
kubecell-system/kubecell-cell-report-<profile> when it changed or is 5 minutes old; and for each
host namespace the hub delivered, seals k3k's kubeconfig with the hub's public key
(KUBECELL_SEALING_PUBLIC_KEY_FILE, else ConfigMap kubecell-system/kubecell-sealing-public-key)
into ConfigMap kubecell-<name>-sealed-kubeconfig, naming its ManagedCluster
(KUBECELL_AGENT_MANAGED_CLUSTER) and signed with its own key (Secret
kubecell-system/kubecell-cell-agent-signing-key; the public half in ConfigMap
kubecell-system/kubecell-cell-agent-identity). The hub's works create those ConfigMaps and the
Secret; the agent only updates them.

Options:
  --once   one pass, then exit (1 if anything failed)

Credentials: $KUBECONFIG, else the Pod's ServiceAccount. Stops on SIGTERM or SIGINT.
`;

export interface AgentCommandDeps {
  /** Stops the agent; SIGTERM/SIGINT when absent. */
  signal?: AbortSignal;
  api?: (config: AgentConfig) => AgentApi;
  /** The watches; with `api` given, none unless given too. */
  watch?: WatchApi;
  logger?: Logger;
}

function stopSignal(): AbortSignal {
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return controller.signal;
}

export async function runAgentCommand(
  args: readonly string[],
  io: CliIo,
  deps: AgentCommandDeps = {},
): Promise<number> {
  const unknown = args.filter((arg) => arg !== '--once');
  if (unknown.length > 0) {
    io.stderr.write(
      `kubecell agent: unknown argument ${JSON.stringify(unknown[0])}\n\n${AGENT_USAGE}`,
    );
    return EXIT_USAGE;
  }
  let config: AgentConfig;
  let api: AgentApi;
  let watch: WatchApi | undefined = deps.watch;
  try {
    config = loadAgentConfig(io.env ?? process.env);
    if (deps.api) api = deps.api(config);
    else {
      const { kubeConfig } = loadKubeConfig();
      api = kubeApi(kubeConfig);
      watch ??= kubeWatch(kubeConfig);
    }
  } catch (error) {
    const problems = error instanceof ConfigError ? error.problems : [String(error)];
    io.stderr.write(`kubecell agent: cannot start:\n${problems.map((p) => `  ${p}\n`).join('')}`);
    return EXIT_USAGE;
  }
  const logger = deps.logger ?? createLogger({ level: 'info' });
  const once = args.includes('--once');
  logger.info('cell agent started', {
    intervalSeconds: config.intervalSeconds,
    machineProfiles: config.machineProfiles,
    once,
  });
  const last = await runAgentLoop({
    api,
    config,
    logger,
    signal: deps.signal ?? stopSignal(),
    once,
    ...(watch ? { watch } : {}),
  });
  logger.info('cell agent stopped');
  return once && last && last.errors.length > 0 ? EXIT_INVALID : EXIT_OK;
}
