/**
 * Apply → Ready of one VirtualCluster, step by step (bench/remote.ts): watches on the hub (the
 * VirtualCluster, its ManifestWork) and, for a remote Cell, on the managed cluster (the k3k
 * Cluster, the sealed-kubeconfig ConfigMap) stamp the first time each milestone is seen; the
 * k3k simulator says when it served the Cluster; the cell agent's log says when its passes ran.
 */
import { readFileSync } from 'node:fs';
import { virtualClusterManifest } from '../harness/manifests.js';
import { resourcePath, type KubeClient, type KubeObject } from '../harness/simulate/index.js';
import type { K3kSimulator } from '../harness/simulate/k3k.js';
import { round } from './stats.js';
import { poll } from '../harness/poll.js';
import { Watch, type AdminConnection } from './watch.js';
import { type BenchWorldNames } from './world.js';

type Watched = KubeObject & Record<string, unknown>;

interface Condition {
  type?: string;
  status?: string;
}
interface FeedbackValue {
  name?: string;
}
interface WorkStatus {
  conditions?: Condition[];
  resourceStatus?: { manifests?: { statusFeedback?: { values?: FeedbackValue[] } }[] };
}

/** Seconds after the create was answered at which each milestone was first seen. */
export type Milestones = Record<string, number>;

/** The first time each named milestone is seen; watches feed it. */
export class Timeline {
  readonly firstSeen = new Map<string, number>();
  private readonly watches: Watch[] = [];

  see(milestone: string, at: number): void {
    if (!this.firstSeen.has(milestone)) this.firstSeen.set(milestone, at);
  }

  /** Watches `path`; `milestones(object)` names those this version of an object reached. */
  watch(
    connection: AdminConnection,
    path: string,
    milestones: (type: string, object: Watched) => string[],
    log: (line: string) => void,
  ): void {
    const watch = new Watch(
      connection,
      path,
      (type, object, at) => {
        for (const milestone of milestones(type, object)) this.see(milestone, at);
      },
      log,
    );
    watch.start();
    this.watches.push(watch);
  }

  /** Milestones in seconds after `from`, in the order they were reached. */
  since(from: number): Milestones {
    return Object.fromEntries(
      [...this.firstSeen]
        .sort(([, a], [, b]) => a - b)
        .map(([milestone, at]) => [milestone, round((at - from) / 1000, 2)]),
    );
  }

  stop(): void {
    for (const watch of this.watches) watch.stop();
  }
}

const isTrue = (conditions: Condition[] | undefined, type: string) =>
  conditions?.some((condition) => condition.type === type && condition.status === 'True') ?? false;

/** What a version of the VirtualCluster reached: resolved, Ready. */
export function virtualClusterMilestones(namespace: string, name: string) {
  return (_type: string, object: Watched): string[] => {
    if (object.metadata.namespace !== namespace || object.metadata.name !== name) return [];
    const status = object.status as { resolved?: unknown; phase?: string } | undefined;
    return [
      ...(status?.resolved !== undefined ? ['resolved (hub)'] : []),
      ...(status?.phase === 'Ready' ? ['VirtualCluster Ready (hub)'] : []),
    ];
  };
}

/** What a version of the VirtualCluster's ManifestWork reached (its name known once created). */
export function workMilestones(workName: () => string | undefined) {
  return (type: string, object: Watched): string[] => {
    if (object.metadata.name !== workName() || type === 'DELETED') return [];
    const status = object.status as WorkStatus | undefined;
    const fedBack = new Set(
      (status?.resourceStatus?.manifests ?? []).flatMap((manifest) =>
        (manifest.statusFeedback?.values ?? []).map((value) => value.name),
      ),
    );
    return [
      'ManifestWork created (hub)',
      ...(isTrue(status?.conditions, 'Applied') ? ['work Applied (hub)'] : []),
      ...(isTrue(status?.conditions, 'Available') ? ['work Available (hub)'] : []),
      ...(fedBack.has('nodePort') ? ['nodePort fed back (hub)'] : []),
      ...(fedBack.has('sealedKubeconfig') ? ['sealed kubeconfig fed back (hub)'] : []),
    ];
  };
}

/** The k3k Cluster (the children) created where the children go. */
export function k3kClusterMilestones(namespace: string, name: string, where: string) {
  return (type: string, object: Watched): string[] =>
    type === 'ADDED' && object.metadata.namespace === namespace && object.metadata.name === name
      ? [`k3k Cluster created (${where})`]
      : [];
}

/** The cell agent's sealed kubeconfig written on the managed cluster. */
export function sealedConfigMapMilestones(namespace: string, configMap: string) {
  return (_type: string, object: Watched): string[] => {
    const data = object.data as Record<string, string> | undefined;
    return object.metadata.namespace === namespace &&
      object.metadata.name === configMap &&
      typeof data?.['sealed'] === 'string' &&
      data['sealed'] !== ''
      ? ['sealed kubeconfig written by the cell agent (managed)']
      : [];
  };
}

/**
 * Creates the VirtualCluster, waits until the timeline has seen it Ready, and returns the
 * milestones (seconds after the create was answered), the k3k simulator's serving included.
 */
export async function applyUntilReady(
  client: KubeClient,
  timeline: Timeline,
  world: BenchWorldNames,
  namespace: string,
  options: { k3k?: K3kSimulator; timeoutMs: number; onCreated?: (uid: string) => void },
): Promise<{ appliedAt: number; seconds: number; milestones: Milestones }> {
  const created = await client.create(
    resourcePath({ apiVersion: 'kubecell.io/v1alpha1', resource: 'virtualclusters', namespace }),
    virtualClusterManifest(namespace, world.virtualCluster, {
      cell: world.cell,
      klass: world.klass,
    }),
    'bench-user',
  );
  const appliedAt = Date.now();
  options.onCreated?.(created.metadata.uid ?? '');
  const readyAt = await poll(
    `VirtualCluster ${namespace}/${world.virtualCluster} to be Ready`,
    async () => {
      const seen = timeline.firstSeen.get('VirtualCluster Ready (hub)');
      return seen === undefined
        ? { notYet: JSON.stringify(timeline.since(appliedAt)) }
        : { value: seen };
    },
    { timeoutMs: options.timeoutMs, intervalMs: 100 },
  );
  const served = options.k3k?.served.get(`${namespace}/${world.virtualCluster}`)?.servedAt;
  if (served) timeline.see('k3k served (simulated k3k)', served.getTime());
  return {
    appliedAt,
    seconds: round((readyAt - appliedAt) / 1000, 2),
    milestones: timeline.since(appliedAt),
  };
}

/** One pass of the cell agent: when it ended (epoch ms), how long it took, why it ran. */
export interface AgentPass {
  at: number;
  durationMs: number;
  /** `start`, `interval` or `watch` (hooks/agent/trigger.ts); absent from older agents. */
  trigger?: string;
}

/** The cell agent's passes, from its log (one `cell agent pass` line each). */
export function agentPasses(logFile: string): AgentPass[] {
  const passes: AgentPass[] = [];
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as {
        timestamp?: string;
        msg?: string;
        durationMs?: number;
        trigger?: string;
      };
      if (entry.msg === 'cell agent pass' && entry.timestamp)
        passes.push({
          at: Date.parse(entry.timestamp),
          durationMs: entry.durationMs ?? 0,
          ...(typeof entry.trigger === 'string' ? { trigger: entry.trigger } : {}),
        });
    } catch {
      // not a log line of the agent's logger
    }
  }
  return passes;
}
