/**
 * What the cell agent watches, so that a pass follows a change within a second instead of at the
 * next interval (loop.ts, trigger.ts):
 *
 * - the host Namespaces (label kubecell.io/host-namespace=true): a VirtualCluster's work brings
 *   its namespace, and the pass that sees it starts watching the VirtualCluster's kubeconfig;
 * - k3k's kubeconfig Secret of each delivered VirtualCluster, by name (`fieldSelector=
 *   metadata.name=<name>`, which the apiserver authorizes as a request for that one name:
 *   k8s.io/apiserver v0.35.4 pkg/endpoints/request/requestinfo.go), so that it is sealed as soon
 *   as k3k writes or rewrites it.
 *
 * Only what the agent may read already: it lists every Namespace and gets each of those Secrets
 * (hooks/delivery/agent-rbac.ts adds `watch` on exactly these). k3k's Clusters are not watched:
 * the agent may read none (that would be a new cluster-wide read), and a new one arrives with
 * its namespace, which is.
 *
 * A watch the apiserver ends (it is asked to after WATCH_SECONDS) resumes a second later from
 * the last resourceVersion seen, bookmarks included: nothing is missed, no pass is needed. A
 * watch that fails (refused, connection lost, an ERROR event such as 410 Gone, no end long
 * after its timeout) is opened again after 1 s, doubling up to 30 s, from the current state,
 * and once it is open a pass runs: what changed meanwhile went unseen. Its first failure, each
 * new error and its recovery are logged, without secret (the errors are the apiserver's and the
 * client's); meanwhile the interval's passes go on. Each watch holds one connection: one, plus
 * one per delivered VirtualCluster.
 */
import { isJsonObject } from '../json/json.js';
import { LABELS } from '../kube/labels.js';
import { RetryBackoff } from '../kube/retry-backoff.js';
import type { Logger } from '../server/logger.js';
import type { WatchApi } from './kube-api.js';

/** What the apiserver is asked to end a watch after (it resumes from where it was). */
export const WATCH_SECONDS = 300;
/** An open watch the apiserver has not ended this long after WATCH_SECONDS is taken as lost. */
const STALL_GRACE_SECONDS = 60;
const RESUME_MS = 1000;
const ERROR_CHARS = 300;

/** A Secret the agent reads: k3k's kubeconfig of one delivered VirtualCluster. */
export interface SecretRef {
  namespace: string;
  name: string;
}

export interface WatchTarget {
  /** How logs name it. */
  name: string;
  path: string;
  query: Record<string, string>;
}

export function hostNamespacesTarget(): WatchTarget {
  return {
    name: 'host Namespaces',
    path: '/api/v1/namespaces',
    query: { labelSelector: `${LABELS.hostNamespace}=true` },
  };
}

export function secretTarget({ namespace, name }: SecretRef): WatchTarget {
  return {
    name: `Secret ${namespace}/${name}`,
    path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`,
    query: { fieldSelector: `metadata.name=${name}` },
  };
}

export interface WatchesDeps {
  watch: WatchApi;
  /** Called for every change seen (trigger.ts debounces). */
  changed: () => void;
  logger: Logger;
  /** Milliseconds before the first retry of a failed watch (doubling up to 30 s); default 1 s. */
  retryFirstMs?: number;
}

/** A watch's failure as logs give it: the HTTP status when there is one, the message, bounded. */
export function watchErrorText(error: unknown): string {
  const status = (error as { statusCode?: unknown } | undefined)?.statusCode;
  const text = error instanceof Error ? error.message : String(error);
  return `${typeof status === 'number' ? `HTTP ${status}: ` : ''}${text}`.slice(0, ERROR_CHARS);
}

/** The object's resourceVersion, when it has a plausible one (bytes from the apiserver). */
function resourceVersionOf(object: unknown): string | undefined {
  const metadata = isJsonObject(object) ? object['metadata'] : undefined;
  const version = isJsonObject(metadata) ? metadata['resourceVersion'] : undefined;
  return typeof version === 'string' && /^[0-9A-Za-z._-]{1,64}$/.test(version)
    ? version
    : undefined;
}

/** One watch, kept open. */
class Follow {
  private resourceVersion: string | undefined;
  private readonly backoff: RetryBackoff;
  private connection = 0;
  private handle: { abort(): void } | undefined;
  private stall: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    readonly target: WatchTarget,
    private readonly deps: WatchesDeps,
  ) {
    this.backoff = new RetryBackoff(deps.retryFirstMs);
  }

  start(): void {
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.stall);
    clearTimeout(this.retry);
    this.handle?.abort();
    this.handle = undefined;
  }

  private async connect(): Promise<void> {
    const id = ++this.connection;
    const live = (): boolean => !this.stopped && id === this.connection;
    let ended = false;
    const end = (error: unknown): void => {
      if (ended || !live()) return;
      ended = true;
      clearTimeout(this.stall);
      this.handle = undefined;
      if (error === undefined) this.retry = setTimeout(() => void this.connect(), RESUME_MS);
      else this.failed(error);
    };
    const query = {
      ...this.target.query,
      allowWatchBookmarks: true,
      timeoutSeconds: WATCH_SECONDS,
      ...(this.resourceVersion === undefined ? {} : { resourceVersion: this.resourceVersion }),
    };
    let handle: { abort(): void };
    try {
      handle = await this.deps.watch(this.target.path, query, {
        event: (type, object) => {
          if (!ended && live()) this.event(type, object, end);
        },
        done: end,
      });
    } catch (error) {
      return end(error);
    }
    if (ended || !live()) return handle.abort();
    this.handle = handle;
    this.stall = setTimeout(
      () => {
        end(
          new Error(`no end of the watch ${WATCH_SECONDS + STALL_GRACE_SECONDS} s after it opened`),
        );
        handle.abort();
      },
      (WATCH_SECONDS + STALL_GRACE_SECONDS) * 1000,
    );
    this.opened();
  }

  private event(type: string, object: unknown, end: (error: unknown) => void): void {
    if (type === 'ERROR') {
      const message = isJsonObject(object) ? object['message'] : undefined;
      const handle = this.handle;
      end(new Error(`the apiserver ended the watch: ${String(message ?? 'ERROR event')}`));
      handle?.abort();
      return;
    }
    this.resourceVersion = resourceVersionOf(object) ?? this.resourceVersion;
    if (type !== 'BOOKMARK') this.deps.changed();
  }

  private opened(): void {
    const failures = this.backoff.succeeded();
    if (failures === 0) return;
    this.deps.logger.info('cell agent watch resumed', { watch: this.target.name, failures });
    this.deps.changed();
  }

  private failed(error: unknown): void {
    this.resourceVersion = undefined;
    const text = watchErrorText(error);
    const { retryMs, isNew } = this.backoff.failed(text);
    if (isNew) {
      this.deps.logger.warn('cell agent watch failed', {
        watch: this.target.name,
        error: text,
        failures: this.backoff.failures,
        retryInSeconds: retryMs / 1000,
      });
    }
    this.retry = setTimeout(() => void this.connect(), retryMs);
  }
}

/** The agent's watches: the host Namespaces always, the Secrets its last pass read. */
export class AgentWatches {
  private namespaces: Follow | undefined;
  private readonly secrets = new Map<string, Follow>();

  constructor(private readonly deps: WatchesDeps) {}

  start(): void {
    this.namespaces ??= new Follow(hostNamespacesTarget(), this.deps);
    this.namespaces.start();
  }

  /** Watches exactly these Secrets from now on (the ones no longer read are let go). */
  followSecrets(secrets: readonly SecretRef[]): void {
    const wanted = new Map(secrets.map((ref) => [`${ref.namespace}/${ref.name}`, ref]));
    for (const [key, follow] of this.secrets) {
      if (wanted.has(key)) continue;
      follow.stop();
      this.secrets.delete(key);
    }
    for (const [key, ref] of wanted) {
      if (this.secrets.has(key)) continue;
      const follow = new Follow(secretTarget(ref), this.deps);
      this.secrets.set(key, follow);
      follow.start();
    }
  }

  /** What is watched, by the name logs give it. */
  watching(): string[] {
    const all = [this.namespaces, ...this.secrets.values()].flatMap((follow) =>
      follow ? [follow.target.name] : [],
    );
    return all.sort();
  }

  stop(): void {
    this.namespaces?.stop();
    this.namespaces = undefined;
    for (const follow of this.secrets.values()) follow.stop();
    this.secrets.clear();
  }
}
