/**
 * One collection of the apiserver kept in memory from a list and a watch, as kube-apiserver's
 * own admission plugins keep theirs (an informer; NamespaceLifecycle: D38), for the admission
 * webhook's cached lookups (cached-lookup.ts). Only a summary of each object is kept, what the
 * rules read, never the whole object: a Cell's status with every Node's detail stays out.
 *
 * Built on @kubernetes/client-node's ListWatch (dist/cache.js): it lists, applies the list
 * (objects gone from it are dropped), watches from the list's resourceVersion, resumes the
 * watch from the last resourceVersion seen when the apiserver ends it, and lists again on 410
 * Gone. The list goes through the generated client, so the request middleware applies (a
 * deadline, a kept-alive connection: hooks/kube/request-deadline.ts); the watch is client-node's
 * Watch, one long-lived connection of its own. What the library leaves out is added here:
 *
 * - summaries: the watch's objects are summarised before ListWatch stores them (SummarizingWatch);
 * - an end to every watch: the apiserver is asked to end it after WATCH_SECONDS, and one still
 *   open STALL_GRACE_SECONDS later is taken as lost. client-node 1.4's Watch has no deadline (in
 *   dist/watch.js, lines 28-30, the signal with its 30 s `AbortSignal.timeout` is overwritten on
 *   the next line), so a connection lost without a word would leave the cache stale for good;
 * - a retry: ListWatch stops on a failed list or watch (dist/cache.js `doneHandler`: it reports
 *   the error and returns). Here a failure (refused, connection
 *   lost, an ERROR event such as 410 Gone, a watch ended within MIN_WATCH_MS of opening) drops
 *   the collection and starts it again from a new list after 1 s, doubling up to 30 s. Each new
 *   error is logged once, as JSON, and so is each sync;
 * - whether it can be read: `synced` is true only from a complete list, applied, with its watch
 *   open, until the next failure. A read meanwhile throws `CacheUnavailable`: the caller reads the
 *   apiserver instead (cross-object.ts).
 */
import {
  ListWatch,
  Watch,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { describeFailure } from '../kube/api-failure.js';
import { RetryBackoff } from '../kube/retry-backoff.js';
import { isJsonObject } from '../json/json.js';
import type { Logger } from '../server/logger.js';

/** What the apiserver is asked to end a watch after; ListWatch resumes it from where it was. */
export const WATCH_SECONDS = 60;
/** A watch still open this long after WATCH_SECONDS is taken as lost. */
const STALL_GRACE_SECONDS = 15;
/** A watch the apiserver ends sooner than this is a failure, not reopened at once. */
const MIN_WATCH_MS = 1000;
const ERROR_CHARS = 300;

/** The cache cannot answer (not synced, or its watch failed): read the apiserver instead. */
export class CacheUnavailable extends Error {
  constructor(collection: string) {
    super(`the cache of ${collection} is not synced`);
    this.name = 'CacheUnavailable';
  }
}

/** What ListWatch stores: the object's key and version, and the summary. */
interface Entry<S> extends KubernetesObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  /** Undefined for a BOOKMARK, which only carries a resourceVersion. */
  summary: S | undefined;
}

export interface CollectionSpec<S> {
  /** How logs and errors name it, e.g. `Namespaces`. */
  name: string;
  /** The collection's path, e.g. `/api/v1/namespaces`. */
  path: string;
  /** Lists the collection: `{metadata: {resourceVersion}, items}`, as the apiserver answers. */
  list(): Promise<unknown>;
  /** What is kept of an object; undefined drops it. */
  summarize(object: unknown): S | undefined;
}

export interface CollectionDeps {
  kubeConfig: KubeConfig;
  logger: Logger;
  /** Milliseconds before the first retry of a failed list or watch (doubling up to 30 s). */
  retryFirstMs?: number;
}

function stringAt(object: Record<string, unknown>, key: string): string | undefined {
  const value = object[key];
  return typeof value === 'string' ? value : undefined;
}

function entryOf<S>(object: unknown, spec: CollectionSpec<S>): Entry<S> | undefined {
  const metadata = isJsonObject(object) ? object.metadata : undefined;
  if (!isJsonObject(metadata)) return undefined;
  const name = stringAt(metadata, 'name') ?? '';
  const namespace = stringAt(metadata, 'namespace');
  const resourceVersion = stringAt(metadata, 'resourceVersion');
  return {
    metadata: {
      name,
      ...(namespace === undefined ? {} : { namespace }),
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
    },
    summary: name === '' ? undefined : spec.summarize(object),
  };
}

/** A failure as logs give it: the HTTP status when there is one, the message, bounded. */
function failureText(error: unknown): string {
  const status = (error as { statusCode?: unknown } | undefined)?.statusCode;
  const prefix = typeof status === 'number' ? `HTTP ${status}: ` : '';
  return `${prefix}${describeFailure(error)}`.slice(0, ERROR_CHARS);
}

/** client-node's Watch, with summaries, an end to every watch, and ERROR events as failures. */
class SummarizingWatch<S> extends Watch {
  constructor(
    config: KubeConfig,
    private readonly spec: CollectionSpec<S>,
    private readonly closed: () => boolean,
  ) {
    super(config);
  }

  override async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, object: unknown) => void,
    done: (error: unknown) => void,
  ): Promise<AbortController> {
    if (this.closed()) {
      const aborted = new AbortController();
      aborted.abort();
      return aborted;
    }
    const watching = new WatchEnd(done);
    const controller = await super.watch(
      path,
      { ...query, allowWatchBookmarks: true, timeoutSeconds: WATCH_SECONDS },
      (phase, object) => {
        if (watching.finished) return;
        if (phase !== 'ERROR') {
          const entry = entryOf(object, this.spec);
          if (entry !== undefined) callback(phase, entry);
          return;
        }
        const message = isJsonObject(object) ? object.message : undefined;
        watching.finish(
          new Error(`the apiserver ended the watch: ${String(message ?? 'ERROR event')}`),
        );
      },
      (error: unknown) => watching.finish(error ?? null),
    );
    watching.opened(controller);
    return controller;
  }
}

/** How one watch ends: once, a failure as a plain Error, and never later than its stall timer. */
class WatchEnd {
  finished = false;
  private readonly started = Date.now();
  private controller: AbortController | undefined;
  private stall: NodeJS.Timeout | undefined;

  constructor(private readonly done: (error: unknown) => void) {}

  /** The watch is open: it is aborted when it ends, or once it outlives its timeout. */
  opened(controller: AbortController): void {
    this.controller = controller;
    if (this.finished) {
      controller.abort();
      return;
    }
    const seconds = WATCH_SECONDS + STALL_GRACE_SECONDS;
    this.stall = setTimeout(
      () => this.finish(new Error(`no end of the watch ${seconds} s after it opened`)),
      seconds * 1000,
    );
  }

  /**
   * ListWatch lists again on its own after a 410 and reopens at once a watch that ended: every
   * failure reaches it as a plain Error, and so does a watch ended within MIN_WATCH_MS, so that
   * it reports them (and they are retried with backoff).
   */
  finish(error: unknown): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.stall);
    const lasted = Date.now() - this.started;
    if (error != null) this.done(new Error(failureText(error), { cause: error }));
    else if (lasted < MIN_WATCH_MS) {
      this.done(new Error(`the apiserver ended the watch ${lasted} ms after it opened`));
    } else this.done(null);
    this.controller?.abort();
  }
}

/** One collection kept from list and watch (see the module comment). */
export class WatchedCollection<S> {
  private informer: ListWatch<Entry<S>> | undefined;
  /** Bumped whenever the informer is replaced or dropped: callbacks of an older one are ignored. */
  private generation = 0;
  private ready = false;
  private stopped = false;
  private readonly backoff: RetryBackoff;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    readonly spec: CollectionSpec<S>,
    private readonly deps: CollectionDeps,
  ) {
    this.backoff = new RetryBackoff(deps.retryFirstMs);
  }

  start(): void {
    this.stopped = false;
    this.open();
  }

  stop(): void {
    this.stopped = true;
    this.drop();
    clearTimeout(this.retry);
  }

  /** True from a complete list, with its watch open, until the next failure. */
  get synced(): boolean {
    return this.ready;
  }

  /** The summary of an object; undefined when the cache has none. Throws CacheUnavailable. */
  get(name: string, namespace?: string): S | undefined {
    return this.readable().get(name, namespace)?.summary;
  }

  /** The summaries of a namespace's objects, or of all. Throws CacheUnavailable. */
  list(namespace?: string): S[] {
    return this.readable()
      .list(namespace)
      .flatMap((entry) => (entry.summary === undefined ? [] : [entry.summary]));
  }

  private readable(): ListWatch<Entry<S>> {
    if (!this.ready || this.informer === undefined) throw new CacheUnavailable(this.spec.name);
    return this.informer;
  }

  private open(): void {
    const generation = ++this.generation;
    const current = () => generation === this.generation && !this.stopped;
    const informer = new ListWatch<Entry<S>>(
      this.spec.path,
      new SummarizingWatch(this.deps.kubeConfig, this.spec, () => !current()),
      () => this.listEntries(),
      false,
    );
    this.informer = informer;
    let failed = false;
    informer.on('error', (error: unknown) => {
      if (!current()) return;
      failed = true;
      this.failed(error);
    });
    void informer.start().then(() => {
      if (!failed && current()) this.synchronised(informer);
    });
  }

  private async listEntries(): Promise<KubernetesListObject<Entry<S>>> {
    const answer = await this.spec.list();
    const body = isJsonObject(answer) ? answer : {};
    const items = Array.isArray(body.items) ? body.items : [];
    const metadata = isJsonObject(body.metadata) ? body.metadata : {};
    const resourceVersion = stringAt(metadata, 'resourceVersion');
    return {
      metadata: resourceVersion === undefined ? {} : { resourceVersion },
      items: items.flatMap((item) => entryOf(item, this.spec) ?? []),
    };
  }

  /** Lets the informer go; its late callbacks are ignored. */
  private drop(): void {
    this.generation += 1;
    this.ready = false;
    const informer = this.informer;
    this.informer = undefined;
    void informer?.stop();
  }

  private synchronised(informer: ListWatch<Entry<S>>): void {
    this.ready = true;
    const failures = this.backoff.succeeded();
    this.deps.logger.info('admission webhook cache synced', {
      collection: this.spec.name,
      objects: informer.list().length,
      ...(failures > 0 ? { afterFailures: failures } : {}),
    });
  }

  private failed(error: unknown): void {
    this.drop();
    const text = failureText(error);
    const { retryMs, isNew } = this.backoff.failed(text);
    if (isNew) {
      this.deps.logger.warn('admission webhook cache watch failed', {
        collection: this.spec.name,
        error: text,
        failures: this.backoff.failures,
        retryInSeconds: retryMs / 1000,
        effect: 'the webhook reads the apiserver for every review until the cache is synced again',
      });
    }
    clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      if (!this.stopped) this.open();
    }, retryMs);
  }
}
