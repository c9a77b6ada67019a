// The cell agent as a managed cluster's kubelet would run it, with no kubelet there: the KubeCell
// cell agent that the hub's kubecell-delivery controller ships in the ManifestWork
// kubecell-cell-agent and OCM's work agent applies as a Deployment. Its container runs here as a
// process (delivered-pod.ts: the same command, arguments and environment, the mounted ConfigMaps
// projected into files, a bound token of the Deployment's ServiceAccount). Two ways:
//
//   start()        a kubelet (local-up --remote): every 2 s it reads that Deployment; while it
//                  exists its container runs. A changed Deployment or mounted ConfigMap (new
//                  machine profiles, a new public key) restarts it; a deleted one stops it; a
//                  crashed one is restarted after 10 s, as a kubelet restarts a container.
//   runOnce(wait)  the container once, as the Deployment says when it is there (the cluster
//                  tests and the benchmark, which stop and start it themselves); stop() ends it.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AGENT_NAME, AGENT_NAMESPACE } from '../../hooks/remote/contract.js';
import type { ControlPlane } from '../cluster/control-plane.js';
import { repoRoot } from '../cluster/paths.js';
import { writeTokenKubeconfig } from '../cluster/kubeconfig.js';
import {
  describeExit,
  logTail,
  startManagedProcess,
  type ManagedProcess,
} from '../cluster/processes.js';
import { Poller, resourcePath, type KubeClient, type KubeObject } from '../simulate/index.js';
import { poll, type PollOptions } from '../poll.js';
import { deliveredPod, processEnvironment, type DeliveredPod } from './delivered-pod.js';

export const CELL_AGENT_PROCESS = 'kubecell-cell-agent';
const POLL_MS = 2_000;
const RESTART_BACKOFF_MS = 10_000;

export interface CellAgentRunnerOptions {
  /** The managed cluster (its admin kubectl issues the ServiceAccount's token). */
  managed: ControlPlane;
  /** A client of the managed cluster. */
  client: KubeClient;
  /** Where the projected ConfigMaps are written. */
  dir: string;
  logDir: string;
  /** Environment set besides the container's (e.g. a shorter interval); the container's wins. */
  defaults?: Readonly<Record<string, string>>;
  /** What the kubelet loop does and why (start, restart, stop, errors). */
  log?: (line: string) => void;
  /** Told of every start and stop, to record the pid. */
  onProcess?(running: ManagedProcess | undefined): void;
}

const DEPLOYMENT_PATH = resourcePath({
  apiVersion: 'apps/v1',
  resource: 'deployments',
  namespace: AGENT_NAMESPACE,
  name: AGENT_NAME,
});

interface Running {
  process: ManagedProcess;
  fingerprint: string;
}

/**
 * A kubeconfig with a bound token (TokenRequest, 48 h) of the ServiceAccount the work delivered,
 * as its pod would be given; the account must exist (it is not created here).
 */
async function serviceAccountKubeconfig(
  managed: ControlPlane,
  account: string,
  dir: string,
): Promise<string> {
  const token = await managed.kubectl([
    'create',
    'token',
    account,
    '-n',
    AGENT_NAMESPACE,
    '--duration=48h',
  ]);
  if (token.code !== 0) {
    throw new Error(
      `a token of ServiceAccount ${AGENT_NAMESPACE}/${account}: ${token.stderr.trim()}`,
    );
  }
  mkdirSync(dir, { recursive: true });
  return writeTokenKubeconfig({
    file: path.join(dir, `${account}.kubeconfig`),
    serverUrl: managed.apiserverUrl,
    caCertFile: managed.caCertFile,
    token: token.stdout.trim(),
    userName: `system:serviceaccount:${AGENT_NAMESPACE}:${account}`,
  });
}

export class CellAgentRunner {
  private readonly poller: Poller;
  private running: Running | undefined;
  private crashedAt = 0;
  private readonly tokens = new Map<string, string>();

  constructor(private readonly options: CellAgentRunnerOptions) {
    this.poller = new Poller('cell agent runner', POLL_MS, () => this.tick(), options.log);
  }

  /** Plays the kubelet: the container runs while the Deployment exists, as it says. */
  start(): void {
    this.poller.start();
  }

  /**
   * Runs the Deployment's container once, as it is when it exists and its ServiceAccount can be
   * given a token (waiting as `wait` says); nothing restarts it. stop() ends it.
   */
  async runOnce(wait: PollOptions): Promise<ManagedProcess> {
    await this.stopAgent();
    const pod = await poll(
      `Deployment ${AGENT_NAMESPACE}/${AGENT_NAME} to run`,
      async () => {
        const deployment = await this.options.client.find(DEPLOYMENT_PATH);
        if (!deployment) return { notYet: 'not applied yet' };
        const delivered = deliveredPod(deployment);
        if ('problem' in delivered) return { notYet: `cannot be run here: ${delivered.problem}` };
        await this.kubeconfigOf(delivered.serviceAccountName);
        return { value: delivered };
      },
      wait,
    );
    const projected = await this.project(pod);
    return this.startAgent(pod, projected.folders, JSON.stringify([pod, projected.data]));
  }

  get process(): ManagedProcess | undefined {
    return this.running?.process;
  }

  async stop(): Promise<void> {
    await this.poller.stop();
    await this.stopAgent();
  }

  private async tick(): Promise<void> {
    const deployment = await this.options.client.find(DEPLOYMENT_PATH);
    if (!deployment) {
      if (this.running)
        this.options.log?.(
          `Deployment ${AGENT_NAMESPACE}/${AGENT_NAME} is gone: stopping the agent`,
        );
      await this.stopAgent();
      return;
    }
    const pod = deliveredPod(deployment);
    if ('problem' in pod)
      throw new Error(`cannot run ${AGENT_NAMESPACE}/${AGENT_NAME}: ${pod.problem}`);
    const projected = await this.project(pod);
    const fingerprint = JSON.stringify([pod, projected.data]);
    const current = this.running;
    if (current && current.fingerprint === fingerprint && !current.process.exitStatus()) return;
    if (current?.process.exitStatus()) {
      const exit = current.process.exitStatus()!;
      if (this.crashedAt === 0) {
        this.crashedAt = Date.now();
        this.options.log?.(
          `the cell agent ${describeExit(exit)}; restarting in ${RESTART_BACKOFF_MS / 1000} s. Its log ends:\n` +
            logTail(current.process.logFile, 10),
        );
      }
      if (Date.now() - this.crashedAt < RESTART_BACKOFF_MS) return;
    } else if (current) {
      this.options.log?.(
        'the agent Deployment or its mounted ConfigMaps changed: restarting the agent',
      );
    }
    await this.stopAgent();
    this.crashedAt = 0;
    await this.startAgent(pod, projected.folders, fingerprint);
  }

  /** Writes each mounted ConfigMap's keys as files, as the kubelet projects a volume. */
  private async project(
    pod: DeliveredPod,
  ): Promise<{ folders: Map<string, string>; data: unknown[] }> {
    const folders = new Map<string, string>();
    const data: unknown[] = [];
    for (const mount of pod.mounts) {
      const configMap = await this.options.client.find<
        KubeObject & { data?: Record<string, string> }
      >(
        resourcePath({
          apiVersion: 'v1',
          resource: 'configmaps',
          namespace: AGENT_NAMESPACE,
          name: mount.configMap,
        }),
      );
      if (!configMap && !mount.optional)
        throw new Error(`ConfigMap ${mount.configMap} (mounted) is missing`);
      const folder = path.join(this.options.dir, 'volumes', mount.volume);
      rmSync(folder, { recursive: true, force: true });
      mkdirSync(folder, { recursive: true });
      for (const [key, value] of Object.entries(configMap?.data ?? {})) {
        writeFileSync(path.join(folder, key), value);
      }
      folders.set(mount.mountPath, folder);
      data.push(configMap?.data ?? null);
    }
    return { folders, data };
  }

  /** A kubeconfig with a token of `account`, made once per runner. */
  private async kubeconfigOf(account: string): Promise<string> {
    let kubeconfig = this.tokens.get(account);
    if (kubeconfig === undefined) {
      kubeconfig = await serviceAccountKubeconfig(this.options.managed, account, this.options.dir);
      this.tokens.set(account, kubeconfig);
    }
    return kubeconfig;
  }

  private async startAgent(
    pod: DeliveredPod,
    folders: Map<string, string>,
    fingerprint: string,
  ): Promise<ManagedProcess> {
    const account = pod.serviceAccountName;
    const kubeconfig = await this.kubeconfigOf(account);
    const [command = '', ...args] = pod.argv;
    const agent = startManagedProcess({
      name: CELL_AGENT_PROCESS,
      command: command === 'node' ? process.execPath : command,
      args,
      cwd: repoRoot,
      logDir: this.options.logDir,
      env: {
        PATH: process.env.PATH ?? '',
        ...this.options.defaults,
        ...processEnvironment(pod, folders),
        KUBECONFIG: kubeconfig,
      },
    });
    this.running = { process: agent, fingerprint };
    this.options.onProcess?.(agent);
    this.options.log?.(
      `cell agent started (pid ${agent.pid}) as ServiceAccount ${AGENT_NAMESPACE}/${account}: ` +
        `${pod.argv.join(' ')}; log ${agent.logFile}`,
    );
    return agent;
  }

  private async stopAgent(): Promise<void> {
    const current = this.running;
    if (!current) return;
    this.running = undefined;
    await current.process.stop();
    this.options.onProcess?.(undefined);
  }
}
