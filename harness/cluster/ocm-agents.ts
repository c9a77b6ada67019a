// OCM's agents of one managed cluster as processes beside its control plane, the way the
// klusterlet's Deployments run them: `registration agent` (joins, renews the lease, keeps the hub
// kubeconfig Secret and its files) and `work agent` (applies ManifestWorks, reports status and
// feedback). The same flags on the first start and on every restart (ocm-managed.ts).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { ControlPlane } from './control-plane.js';
import type { OcmHub } from './ocm-hub.js';
import type { OcmManagedClusterOptions } from './ocm-managed.js';
import { freeLoopbackPorts } from './ports.js';
import { startManagedProcess, type ManagedProcess } from './processes.js';
import { waitForHttpOk } from './readiness.js';

/** Where the agents run on the managed cluster (OCM's default component namespace). */
export const OCM_AGENT_NAMESPACE = 'open-cluster-management-agent';
/** The Secret the registration agent keeps its hub kubeconfig in (OCM's default name). */
export const HUB_KUBECONFIG_SECRET = 'hub-kubeconfig-secret';

export interface AgentLauncher {
  hubKubeconfigFile: string;
  registration(): Promise<ManagedProcess>;
  /** Starts the work agent and waits until it serves /healthz. */
  work(): Promise<ManagedProcess>;
}

/** How the agents are started (the same flags on the first start and on every restart). */
export async function agentLauncher(
  hub: OcmHub,
  cluster: ControlPlane,
  name: string,
  options: OcmManagedClusterOptions,
): Promise<AgentLauncher> {
  // The agents administer the managed cluster (the klusterlet's ClusterRoles come close to it);
  // they hold no credential of the hub but the bootstrap one and the certificate they get.
  const agentKubeconfig = await cluster.kubeconfigFor({
    userName: 'ocm-klusterlet',
    groups: ['system:masters'],
  });
  const hubKubeconfigDir = path.join(cluster.dir, 'ocm-hub-kubeconfig');
  const tmpDir = path.join(cluster.dir, 'ocm-agent-tmp');
  for (const dir of [hubKubeconfigDir, tmpDir]) mkdirSync(dir, { recursive: true });
  const hubKubeconfigFile = path.join(hubKubeconfigDir, 'kubeconfig');
  const env = { ...process.env, TMPDIR: tmpDir };
  const common = (port: number): string[] => [
    `--spoke-cluster-name=${name}`,
    // A fixed agent ID: a restarted agent is the same agent (OCM would read it from the Secret).
    '--agent-id=kubecell-test-agent',
    `--kubeconfig=${agentKubeconfig}`,
    `--hub-kubeconfig-dir=${hubKubeconfigDir}`,
    `--namespace=${OCM_AGENT_NAMESPACE}`,
    // Leader election would make a restarted agent wait out the old lease (137 s by default).
    '--disable-leader-election',
    `--listen=127.0.0.1:${port}`,
  ];
  return {
    hubKubeconfigFile,
    // A free port per start: a stopped process may hold its old port for a moment.
    registration: async () => {
      const [port] = (await freeLoopbackPorts(1)) as [number];
      return startManagedProcess({
        name: 'ocm-registration-agent',
        command: hub.binaries.registration,
        logDir: cluster.logDir,
        env,
        args: [
          'agent',
          ...common(port),
          `--bootstrap-kubeconfig=${hub.bootstrapKubeconfigPath}`,
          `--hub-kubeconfig-secret=${HUB_KUBECONFIG_SECRET}`,
          `--cluster-healthcheck-period=${options.clusterHealthCheckPeriodSeconds ?? 10}s`,
        ],
      });
    },
    work: async () => {
      const [port] = (await freeLoopbackPorts(1)) as [number];
      const work = startManagedProcess({
        name: 'ocm-work-agent',
        command: hub.binaries.work,
        logDir: cluster.logDir,
        env,
        args: [
          'agent',
          ...common(port),
          `--hub-kubeconfig=${hubKubeconfigFile}`,
          // The kube work driver reads the hub kubeconfig from here (pkg/work/spoke/spokeagent.go).
          `--workload-source-config=${hubKubeconfigFile}`,
          `--status-sync-interval=${options.statusSyncIntervalSeconds ?? 2}s`,
          ...(options.workAgentFeatureGates
            ? [`--feature-gates=${options.workAgentFeatureGates}`]
            : []),
        ],
      });
      await waitForHttpOk(
        'OCM work agent /healthz',
        `https://127.0.0.1:${port}/healthz`,
        { insecure: true },
        { timeoutMs: 60_000, process: work },
      );
      return work;
    },
  };
}
