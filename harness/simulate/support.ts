// Small pieces every simulated actor uses: the two time formats of the Kubernetes API,
// conditions the way controllers set them (metav1 `SetStatusCondition`), a polling loop (Poller:
// an actor's ticks; waiting until something is so is harness/poll.ts), and name-based identifiers
// for reproducible runs.
import { createHash } from 'node:crypto';
import { poll } from '../poll.js';
import { resourcePath, type KubeClient, type KubeObject } from './kube-client.js';

/** metav1.Time: RFC 3339, second precision (`2026-01-01T00:00:00Z`). */
export function formatTime(time: Date): string {
  return `${time.toISOString().slice(0, 19)}Z`;
}

/**
 * metav1.MicroTime, the format of a Lease's `renewTime` and `acquireTime`
 * (`2026-01-01T00:00:00.000000Z`, Go's `2006-01-02T15:04:05.000000Z07:00`). JavaScript clocks
 * have millisecond precision, so the last three digits are zeros.
 */
export function formatMicroTime(time: Date): string {
  return `${time.toISOString().slice(0, 23)}000Z`;
}

/** A condition to set; setConditions decides its lastTransitionTime. */
export interface DesiredCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
  /** Further fields some kinds carry (a Node's lastHeartbeatTime). */
  [extra: string]: unknown;
}

export interface Condition extends DesiredCondition {
  lastTransitionTime: string;
}

/**
 * Sets conditions as `meta.SetStatusCondition` does: a condition whose status is unchanged keeps
 * its lastTransitionTime, a new or changed one gets `now`; conditions not mentioned are kept.
 */
export function setConditions(
  existing: readonly Condition[] | undefined,
  desired: readonly DesiredCondition[],
  now: Date,
): Condition[] {
  const result = [...(existing ?? [])];
  for (const condition of desired) {
    const index = result.findIndex((entry) => entry.type === condition.type);
    const prior = index >= 0 ? result[index] : undefined;
    const lastTransitionTime =
      prior && prior.status === condition.status ? prior.lastTransitionTime : formatTime(now);
    const next: Condition = { ...condition, lastTransitionTime };
    if (index >= 0) result[index] = next;
    else result.push(next);
  }
  return result;
}

/**
 * A UUID-shaped identifier derived from a name (SHA-1, version 5 and variant bits set), so that a
 * simulated machine has the same firmware UUID on every run.
 */
export function nameBasedUuid(name: string): string {
  const hash = createHash('sha1').update(`kubecell-simulation/${name}`).digest();
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50;
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export type Log = (line: string) => void;

export const silent: Log = () => {};

/**
 * Runs `tick` every `intervalMs` (the next run starts `intervalMs` after the previous one ended,
 * so a slow apiserver is never flooded). An error is logged and the loop goes on. `stop()`
 * waits for a tick in flight.
 */
export class Poller {
  private timer: NodeJS.Timeout | undefined;
  /** Ticks run one after another, whether scheduled or asked for with runOnce(). */
  private chain: Promise<void> = Promise.resolve();
  private stopped = true;

  constructor(
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly tick: () => Promise<void>,
    private readonly log: Log = silent,
  ) {}

  get active(): boolean {
    return !this.stopped;
  }

  /** Starts the loop; the first tick runs at once. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Runs one tick now (after the one in flight, if any); its error is thrown to the caller. */
  runOnce(): Promise<void> {
    const run = this.chain.then(() => this.tick());
    this.chain = run.catch(() => undefined);
    return run;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.chain;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.stopped) return;
      this.runOnce()
        .catch((error: unknown) => {
          this.log(`${this.name}: ${error instanceof Error ? error.message : String(error)}`);
        })
        .finally(() => {
          if (!this.stopped) this.schedule(this.intervalMs);
        });
    }, delayMs);
    // A simulation never keeps the process alive on its own.
    this.timer.unref();
  }
}

/**
 * An actor that lists what it plays on every tick (`pollOnce`) of a Poller: start(), stop(),
 * and pollOnce() for tests that control timing. KubeClient is what every actor writes through.
 */
export abstract class PollingActor<Options extends { intervalMs?: number; log?: Log }> {
  private readonly poller: Poller;

  protected constructor(
    protected readonly client: KubeClient,
    protected readonly options: Options,
    name: string,
    defaultIntervalMs: number,
  ) {
    this.poller = new Poller(
      name,
      options.intervalMs ?? defaultIntervalMs,
      () => this.pollOnce(),
      options.log ?? silent,
    );
  }

  start(): void {
    this.poller.start();
  }

  stop(): Promise<void> {
    return this.poller.stop();
  }

  /** One pass (what each tick does); resolves when its writes are done. */
  abstract pollOnce(): Promise<void>;
}

const CRD_API_VERSION = 'apiextensions.k8s.io/v1';

function crdPath(name: string): string {
  return resourcePath({ apiVersion: CRD_API_VERSION, resource: 'customresourcedefinitions', name });
}

/** What a permissive stand-in CRD serves: one version of one kind. */
export interface StandInCrdKind {
  group: string;
  version: string;
  kind: string;
  /** The resource name (lower-case plural). */
  plural: string;
  scope: 'Namespaced' | 'Cluster';
}

/**
 * A permissive stand-in CRD (any spec and status, with the status subresource), labelled
 * `kubecell.io/test-stand-in: permissive` and annotated with `simulatedBy`. Pure.
 */
export function permissiveCrd(kind: StandInCrdKind, simulatedBy: string): KubeObject {
  return {
    apiVersion: CRD_API_VERSION,
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${kind.plural}.${kind.group}`,
      labels: { 'kubecell.io/test-stand-in': 'permissive' },
      annotations: { 'kubecell.io/simulated-by': simulatedBy },
    },
    spec: {
      group: kind.group,
      names: {
        kind: kind.kind,
        listKind: `${kind.kind}List`,
        plural: kind.plural,
        singular: kind.kind.toLowerCase(),
      },
      scope: kind.scope,
      versions: [
        {
          name: kind.version,
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          },
          subresources: { status: {} },
        },
      ],
    },
  };
}

function established(crd: KubeObject | undefined): boolean {
  const conditions = (crd?.status as { conditions?: { type: string; status: string }[] })
    ?.conditions;
  return conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
}

/**
 * Applies `standIn(name)` for each CRD of `names` that is missing (a real one is left alone),
 * then waits until each installed one is Established. Returns the names installed. Idempotent.
 */
export async function ensureCrds(
  client: KubeClient,
  names: readonly string[],
  standIn: (name: string) => KubeObject,
  fieldManager: string,
  timeoutMs = 30_000,
): Promise<string[]> {
  const installed: string[] = [];
  for (const name of names) {
    if (await client.find(crdPath(name))) continue;
    await client.apply(standIn(name), fieldManager);
    installed.push(name);
  }
  for (const name of installed) {
    await poll(
      `CRD ${name} to be Established`,
      async () =>
        established(await client.find(crdPath(name)))
          ? { value: true }
          : { notYet: 'not Established' },
      { timeoutMs, intervalMs: 100 },
    );
  }
  return installed;
}
