// What the remote-Cell scenarios stand on: a hub running KubeCell and the real OCM hub, and a
// second control plane joined to it as ManagedCluster `cell-remote` by OCM's real agents
// (kubecell-stack.ts `ocmHub: 'real'`). On the managed cluster the test plays what a kubelet
// and k3k would do there: it registers the GPU Nodes, installs the provider baseline and k3k's
// CRD, serves k3k Clusters (harness/simulate/), and runs the KubeCell cell agent exactly as the
// Deployment the hub delivered by ManifestWork says (its command, arguments and environment,
// its ServiceAccount's token, its mounted public key). The hub's components only ever get the
// hub's kubeconfig (stack.hubComponentKubeconfigs).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  deliveredPod,
  processEnvironment,
  type DeliveredPod,
} from '../../../scripts/local/delivered-pod.js';
import { AGENT_NAME, AGENT_NAMESPACE } from '../../../hooks/remote/contract.js';
import { writeSealingKey as writeSealingKeyFile } from '../../../harness/cluster/certs.js';
import { k3kCrdFiles } from '../../../harness/cluster/crds.js';
import { startKubeCellStack, type KubeCellStack } from '../../../harness/cluster/kubecell-stack.js';
import type { OcmManagedCluster } from '../../../harness/cluster/ocm.js';
import { repoRoot } from '../../../harness/cluster/paths.js';
import { startManagedProcess, type ManagedProcess } from '../../../harness/cluster/processes.js';
import {
  profileNodeRegistrations,
  registerNode,
  startSimulation,
  type Simulation,
} from '../../../harness/simulate/index.js';
import { GPU } from './cell-fixtures.js';
import { poll } from '../../../harness/poll.js';
import { getObject, watching, type ObjectWithStatus } from './support.js';

export const MANAGED_CLUSTER = 'cell-remote';
export const MANIFESTWORK = 'manifestworks.work.open-cluster-management.io';

export interface RemoteWorld {
  stack: KubeCellStack;
  managed: OcmManagedCluster;
  /** The managed cluster seen through the e2e helpers (getObject, eventually…). */
  managedView: KubeCellStack;
  /** harness/simulate/ on the managed cluster: its Nodes, the provider baseline, k3k. */
  simulation: Simulation;
  profile: string;
  /** Where the test keeps what it writes (the hub's private key, the agent's mounted files). */
  workDir: string;
  stop(): Promise<void>;
}

/** A fresh RSA key pair for sealing; the private key goes to the hook server as a file. */
export function writeSealingKey(workDir: string): string {
  const file = path.join(workDir, 'sealing-key.pem');
  writeSealingKeyFile(file);
  return file;
}

/** The hub with KubeCell and real OCM, `cell-remote` joined, the GPU Nodes of `profile` there. */
export async function startRemoteWorld(
  profile: string,
  options: { leaseDurationSeconds?: number } = {},
): Promise<RemoteWorld> {
  const workDir = mkdtempSync(path.join(tmpdir(), 'kubecell-remote-'));
  const stack = await startKubeCellStack({
    ocmHub: 'real',
    ocmManagedCluster: {
      name: MANAGED_CLUSTER,
      leaseDurationSeconds: options.leaseDurationSeconds ?? 2,
      extraCrdFiles: k3kCrdFiles(),
    },
    hookServerEnv: { KUBECELL_SEALING_KEY_FILE: writeSealingKey(workDir) },
  });
  const managed = stack.ocm?.managedCluster;
  if (!managed) throw new Error('the stack started no managed cluster');
  const managedView = { ...stack, cluster: managed.cluster };
  const simulation = await startSimulation(managed.cluster.kubeconfigPath, {
    ocm: false,
    kubevirt: false,
    clusterAPI: false,
    profileNodes: false,
    k3k: { intervalMs: 200 },
  });
  for (const registration of profileNodeRegistrations(profile, [GPU], { perProfile: 2 })) {
    await registerNode(simulation.client, registration);
  }
  return {
    stack,
    managed,
    managedView,
    simulation,
    profile,
    workDir,
    async stop() {
      await simulation.stop();
      await stack.stop();
    },
  };
}

/** The agent Deployment OCM's work agent applied on the managed cluster (waits for it). */
export function deliveredAgentDeployment(world: RemoteWorld): Promise<ObjectWithStatus> {
  return poll<ObjectWithStatus>(
    `Deployment ${AGENT_NAMESPACE}/${AGENT_NAME} delivered to ${MANAGED_CLUSTER}`,
    async () => {
      const deployment = await getObject(
        world.managedView,
        'deployment',
        AGENT_NAME,
        AGENT_NAMESPACE,
      );
      return deployment ? { value: deployment } : { notYet: 'not applied yet' };
    },
    watching(world.stack, 120_000),
  );
}

/** Copies each mounted ConfigMap into a folder, as the kubelet projects it: mountPath → folder. */
async function projectConfigMaps(
  world: RemoteWorld,
  pod: DeliveredPod,
): Promise<Map<string, string>> {
  const projected = new Map<string, string>();
  for (const mount of pod.mounts) {
    const folder = mkdtempSync(path.join(world.workDir, `${mount.volume}-`));
    const configMap = await getObject(
      world.managedView,
      'configmap',
      mount.configMap,
      AGENT_NAMESPACE,
    );
    for (const [key, value] of Object.entries(configMap?.data ?? {})) {
      writeFileSync(path.join(folder, key), value);
    }
    projected.set(mount.mountPath, folder);
  }
  return projected;
}

/**
 * Runs the delivered agent as the kubelet would run its one container (read the way local-up
 * reads it, scripts/local/delivered-pod.ts): the same command and arguments (`node` is this
 * Node.js, the working directory the image's, i.e. the repository), the same environment with
 * mounted paths moved to where the test projected them, and a kubeconfig holding the token of
 * the ServiceAccount the Deployment names.
 */
export async function runDeliveredAgent(
  world: RemoteWorld,
  /** Settings the container leaves unset (the pass interval): the container's own win. */
  defaults: Readonly<Record<string, string>> = {},
): Promise<ManagedProcess> {
  const pod = deliveredPod(await deliveredAgentDeployment(world));
  if ('problem' in pod) throw new Error(`the delivered agent cannot run here: ${pod.problem}`);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    ...defaults,
    ...processEnvironment(pod, await projectConfigMaps(world, pod)),
    KUBECONFIG: await world.managed.cluster.kubeconfigForServiceAccount({
      namespace: AGENT_NAMESPACE,
      name: pod.serviceAccountName,
    }),
  };
  const [command, ...args] = pod.argv;
  return startManagedProcess({
    name: 'kubecell-cell-agent',
    command: command === 'node' ? process.execPath : command!,
    args,
    env,
    cwd: repoRoot,
    logDir: world.workDir,
  });
}
