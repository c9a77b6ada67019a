/**
 * Pod churn on a Cell's Nodes for the idle benchmark (issue 24, item 4): every 1/rate seconds one
 * pod is created and, once `keep` are alive, the oldest deleted, so the Cell's `requested` and its
 * Nodes' activeRequested move all the time while nothing a VirtualCluster depends on does.
 *
 * Each pod is bound to a profile Node (spec.nodeName, round robin: no scheduler runs in the test
 * control plane) with a cpu and memory request, in a namespace of its own that is not a host
 * namespace (no `kubecell.io/host-namespace` label), and set Running on the status subresource as
 * its kubelet would (hooks/cell/inventory.ts counts a Running pod's requests as activeRequested,
 * a Pending one's as pendingRequested). No kubelet confirms a deletion either, so a pod is deleted
 * with gracePeriodSeconds 0, as the kubelet's final delete is.
 */
import {
  formatTime,
  isConflict,
  resourcePath,
  type KubeClient,
} from '../harness/simulate/index.js';
import { sleep } from '../harness/poll.js';

export interface ChurnOptions {
  /** Pods created (and deleted) per second. */
  perSecond: number;
  /** Pods kept alive: the oldest is deleted when one more would exceed it. */
  keep: number;
  namespace: string;
  /** The Nodes to bind the pods to. */
  nodes: readonly string[];
  log: (line: string) => void;
}

export interface ChurnFigures {
  perSecond: number;
  keep: number;
  seconds: number;
  created: number;
  deleted: number;
  /** Created per second over the time it ran (the rate asked for when the apiserver kept up). */
  createdPerSecond: number;
  /** Ticks that began late because the previous one took longer than its interval. */
  lateTicks: number;
  /** Requests refused, by the first 80 characters of the error. */
  errors: Record<string, number>;
}

const FIELD_MANAGER = 'bench-churn';
const KUBELET = 'simulated-kubelet';
const POD_REQUESTS = { cpu: '100m', memory: '64Mi' };

export class PodChurn {
  private readonly alive: string[] = [];
  private running: Promise<void> | undefined;
  private stopped = false;
  private started = 0;
  private ended = 0;
  private serial = 0;
  private created = 0;
  private deleted = 0;
  private lateTicks = 0;
  private readonly errors: Record<string, number> = {};

  constructor(
    private readonly client: KubeClient,
    private readonly options: ChurnOptions,
  ) {
    if (options.nodes.length === 0) throw new Error('pod churn: no Nodes to bind pods to');
    if (!(options.perSecond > 0)) throw new Error('pod churn: perSecond must be above 0');
  }

  /** The namespace (no host-namespace label) and its default ServiceAccount (pods need one). */
  async prepare(): Promise<void> {
    const { namespace } = this.options;
    await this.client.apply(
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
      FIELD_MANAGER,
    );
    // kube-controller-manager creates `default`, perhaps not yet; ServiceAccount admission
    // refuses a pod until it exists.
    try {
      await this.client.create(
        resourcePath({ apiVersion: 'v1', resource: 'serviceaccounts', namespace }),
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace } },
        FIELD_MANAGER,
      );
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
  }

  start(): void {
    this.started = Date.now();
    this.running = this.loop();
  }

  async stop(): Promise<ChurnFigures> {
    this.stopped = true;
    await this.running;
    const seconds = ((this.ended || Date.now()) - this.started) / 1000;
    return {
      perSecond: this.options.perSecond,
      keep: this.options.keep,
      seconds: Math.round(seconds),
      created: this.created,
      deleted: this.deleted,
      createdPerSecond: seconds > 0 ? Math.round((this.created / seconds) * 100) / 100 : 0,
      lateTicks: this.lateTicks,
      errors: this.errors,
    };
  }

  private async loop(): Promise<void> {
    const intervalMs = 1000 / this.options.perSecond;
    let next = Date.now();
    while (!this.stopped) {
      await this.tick();
      next += intervalMs;
      const wait = next - Date.now();
      if (wait > 0) await sleep(wait);
      else {
        this.lateTicks++;
        next = Date.now();
      }
    }
    this.ended = Date.now();
  }

  private async tick(): Promise<void> {
    try {
      await this.createRunning();
      if (this.alive.length > this.options.keep) await this.deleteOldest();
    } catch (error) {
      const key = (error instanceof Error ? error.message : String(error)).slice(0, 80);
      this.errors[key] = (this.errors[key] ?? 0) + 1;
      if (this.errors[key] === 1) this.options.log(`pod churn: ${key}`);
    }
  }

  private podPath(name?: string): string {
    return resourcePath({
      apiVersion: 'v1',
      resource: 'pods',
      namespace: this.options.namespace,
      ...(name === undefined ? {} : { name }),
    });
  }

  private async createRunning(): Promise<void> {
    const { namespace, nodes } = this.options;
    const index = this.serial++;
    const name = `churn-${index}`;
    await this.client.create(
      this.podPath(),
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace },
        spec: {
          nodeName: nodes[index % nodes.length],
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: 0,
          containers: [
            {
              name: 'work',
              image: 'registry.invalid/bench/churn:1',
              resources: { requests: POD_REQUESTS, limits: POD_REQUESTS },
            },
          ],
        },
      },
      FIELD_MANAGER,
    );
    this.alive.push(name);
    this.created++;
    await this.client.patchStatus(
      this.podPath(name),
      { status: { phase: 'Running', startTime: formatTime(new Date()) } },
      KUBELET,
    );
  }

  private async deleteOldest(): Promise<void> {
    const name = this.alive.shift();
    if (name === undefined) return;
    await this.client.request('DELETE', this.podPath(name), {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      gracePeriodSeconds: 0,
    });
    this.deleted++;
  }
}
