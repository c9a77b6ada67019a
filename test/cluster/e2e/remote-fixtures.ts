// What the remote-Cell scenarios stand on: the harness's remote world (harness/remote-world.ts)
// with one managed cluster, `cell-remote`: a hub running KubeCell and the real OCM hub, and a
// second control plane joined to it by OCM's real agents. There the simulation registers the GPU
// Nodes of the scenario's profile, installs the provider baseline and serves k3k Clusters, and
// the world's cell agent runner runs the KubeCell cell agent exactly as the Deployment the hub
// delivered by ManifestWork says (its command, arguments and environment, its ServiceAccount's
// token, its mounted public key): runAgent() starts it once, as it is then. The hub's components
// only ever get the hub's kubeconfigs (stack.hubComponentKubeconfigs).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AGENT_NAME, AGENT_NAMESPACE } from '../../../hooks/remote/contract.js';
import { writeSealingKey } from '../../../harness/cluster/certs.js';
import { startKubeCellStack, type KubeCellStack } from '../../../harness/cluster/kubecell-stack.js';
import type { ManagedProcess } from '../../../harness/cluster/processes.js';
import { cellManifest } from '../../../harness/manifests.js';
import { poll } from '../../../harness/poll.js';
import {
  REMOTE_CLUSTER,
  agentDirIn,
  remoteStackOptions,
  startRemoteWorld,
  type RemoteWorld,
  type RemoteWorldOptions,
} from '../../../harness/remote-world.js';
import { GPU, GPU_DEVICES } from './cell-fixtures.js';
import { apply, getObject, watching, type ObjectWithStatus } from './support.js';

export type { RemoteWorld };

export const MANAGED_CLUSTER = REMOTE_CLUSTER;
export const MANIFESTWORK = 'manifestworks.work.open-cluster-management.io';

/**
 * The hub with KubeCell and real OCM, `cell-remote` joined (its lease `leaseDurationSeconds`,
 * default 2 s), two GPU Nodes of `profile` there; the cell agent runner not started. Stopping:
 * stopRemoteWorld.
 */
export async function standUpRemoteWorld(
  profile: string,
  options: {
    leaseDurationSeconds?: number;
    /** Environment the cell agent gets besides its container's (a shorter pass interval). */
    agentDefaults?: Readonly<Record<string, string>>;
  } = {},
): Promise<RemoteWorld> {
  const workDir = mkdtempSync(path.join(tmpdir(), 'kubecell-remote-'));
  const sealingKeyFile = path.join(workDir, 'sealing-key.pem');
  writeSealingKey(sealingKeyFile);
  const worldOptions: RemoteWorldOptions = {
    clusters: [
      {
        name: MANAGED_CLUSTER,
        ocm: { leaseDurationSeconds: options.leaseDurationSeconds ?? 2 },
        nodes: { profile, devices: [GPU], count: 2 },
      },
    ],
    sealingKeyFile,
    agentDir: agentDirIn(workDir),
    k3kIntervalMs: 200,
    ...(options.agentDefaults ? { agentDefaults: options.agentDefaults } : {}),
  };
  const stack = await startKubeCellStack(remoteStackOptions(worldOptions));
  try {
    return await startRemoteWorld(stack, worldOptions);
  } catch (error) {
    await stack.stop();
    throw error;
  }
}

export async function stopRemoteWorld(world: RemoteWorld | undefined): Promise<void> {
  await world?.stop();
  await world?.stack.stop();
}

/** The managed cluster seen through the e2e helpers (getObject, poll with watching…). */
export function managedView(world: RemoteWorld): KubeCellStack {
  return { ...world.stack, cluster: world.managed.cluster };
}

/** The Cell a platform engineer applies for the GPU cluster joined to OCM: delivered by ManifestWork. */
export async function applyRemoteCell(
  world: RemoteWorld,
  cell: string,
  profile: string,
): Promise<void> {
  await apply(
    world.stack,
    cellManifest(cell, {
      managedCluster: MANAGED_CLUSTER,
      profile,
      devices: GPU_DEVICES,
      delivery: 'ManifestWork',
    }),
    'e2e-platform',
  );
}

/** Runs the delivered cell agent once, as its Deployment says when it is there (waits for it). */
export function runAgent(world: RemoteWorld): Promise<ManagedProcess> {
  return world.agent.runOnce(watching(world.stack, 120_000));
}

/** The agent Deployment OCM's work agent applied on the managed cluster (waits for it). */
export function deliveredAgentDeployment(world: RemoteWorld): Promise<ObjectWithStatus> {
  return poll<ObjectWithStatus>(
    `Deployment ${AGENT_NAMESPACE}/${AGENT_NAME} delivered to ${MANAGED_CLUSTER}`,
    async () => {
      const deployment = await getObject(
        managedView(world),
        'deployment',
        AGENT_NAME,
        AGENT_NAMESPACE,
      );
      return deployment ? { value: deployment } : { notYet: 'not applied yet' };
    },
    watching(world.stack, 120_000),
  );
}
