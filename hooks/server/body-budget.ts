/**
 * The process-wide budget of request body bytes in memory, shared by the hook port and the
 * admission webhook's port (issue 23). A body holds its declared length (`Content-Length`) from
 * the moment its headers are read, before a byte of it is read, or, sent chunked, the bytes
 * received so far; it holds them until its call is answered or its connection closes (a parsed
 * body is being handled until then). Past `KUBECELL_BODY_BUDGET`, a request is answered 429 with
 * `Retry-After` and its connection closed.
 *
 * Why a budget, and not only the body limit: the limit bounds one body (64 MiB on the hook
 * port), but nothing bounded how many were held at once; ten unfinished 60 MB bodies took
 * 550 MB, and the pod's memory limit is 1 GiB. Load shedding (load-shedding.ts) does not help:
 * it counts calls whose body is complete, on purpose (a slow sender holds no slot).
 *
 * Why the declared length, at once: a body refused after part of it was read leaves that part
 * as garbage until the next full collection, so counting bytes as they arrive let 600
 * concurrent senders push the process's memory to about twice the budget before the refusals
 * took effect (memory-bounds.test.ts). Holding the declared length refuses a body that cannot
 * fit before reading any of it. Metacontroller and the apiserver always send a Content-Length
 * (Go's client sets it for the bytes.Reader of pkg/hooks/webhook.go, and for client-go's
 * serialised body).
 *
 * Why real calls still get through when attackers fill it: a budget can be filled by anyone,
 * and held until the body deadline (20 s) closes them, after which they come again. So a body
 * that does not arrive as a real one does may be cut to make room: when a body does not fit, the
 * bodies that are incomplete and either older than `BODY_GRACE_MS` or behind the pace that would
 * complete them within it (after `BODY_START_MS` to begin) are answered 429 (Retry-After) and
 * closed, oldest first, until it fits; only when cutting all of them would not make room is the
 * newcomer refused instead. A real body arrives at network speed: the largest Metacontroller
 * sends (a 1,000-Node Cell sync, ~28 MB; at most KUBECELL_BODY_LIMIT, 64 MiB) crosses a
 * 1 Gbit/s link in half a second, and a complete body is never cut (it is being parsed or
 * answered). A headers-only claim is behind pace after BODY_START_MS; to keep the budget full
 * against real calls an attacker must send a budget's worth of bytes every grace period (48 MB/s
 * for the default budget), a flood of traffic rather than a few held connections. Metacontroller
 * and the apiserver retry a 429 after its Retry-After (Metacontroller: pkg/hooks/webhook.go;
 * client-go: rest/with_retry.go, `checkWait`), so a cut or refused real call is delayed, not lost.
 *
 * Sizing: the default (96 MiB) takes the largest hook body (KUBECELL_BODY_LIMIT, 64 MiB) with room
 * for reviews, or three 1,000-Node Cell syncs at once, more than the one event loop parses within
 * Metacontroller's 10 s hook timeout anyway. With the process's own memory (about 200 MiB with
 * tsx) and the garbage of what was cut, the process stays under 512 MiB while 300 attackers of
 * each kind hold each port (memory-bounds.test.ts), half the pod's limit. It must be at least
 * KUBECELL_BODY_LIMIT (config.ts), or the largest body could never be received.
 */
import { DEFAULTS, parseByteSize } from './config.js';

/** How long a body may take to arrive before it can be cut to make room for others. */
export const BODY_GRACE_MS = 2_000;
/** How long a body may take to begin arriving before it must keep pace. */
export const BODY_START_MS = 250;

/** One request's body, as the budget sees it. */
export interface BodyTicket {
  /** Holds the declared length; false when it does not fit even after cutting others. */
  declare(length: number): boolean;
  /**
   * Counts `bytes` received. A body without a declared length holds them; false when they do
   * not fit even after cutting others.
   */
  receive(bytes: number): boolean;
  /** The body arrived in full: it is no longer cut to make room. */
  complete(): void;
  /** Frees what the body holds (answered, refused or closed). Idempotent. */
  release(): void;
}

export interface BodyBudget {
  readonly limitBytes: number;
  /** `Retry-After` of a refused or cut body, as its message says. */
  readonly retryAfterSeconds: number;
  /**
   * A ticket for a body whose headers were just read. `cut` answers the request 429 and closes
   * it; the budget calls it at most once, after freeing what the ticket holds, when it cuts the
   * body to make room for another.
   */
  open(cut: (message: string) => void): BodyTicket;
  /** Bytes held now. */
  used(): number;
  /** The message of a request that does not fit. */
  fullMessage(): string;
}

interface Holder {
  startedAt: number;
  declared?: number;
  received: number;
  /** What counts against the budget: the declared length, or the bytes received. */
  held: number;
  complete: boolean;
  released: boolean;
  cut: (message: string) => void;
}

export interface BodyBudgetOptions {
  limitBytes: number;
  /** The limit as configured (e.g. `128mb`), for messages. */
  limit: string;
  retryAfterSeconds: number;
  /** Milliseconds since some origin; injectable for tests. */
  now?: () => number;
  graceMs?: number;
  startMs?: number;
}

export function createBodyBudget(options: BodyBudgetOptions): BodyBudget {
  return new Budget(options);
}

class Budget implements BodyBudget {
  readonly limitBytes: number;
  readonly retryAfterSeconds: number;
  readonly #now: () => number;
  readonly #graceMs: number;
  readonly #startMs: number;
  readonly #setting: string;
  /** In the order their requests began. */
  readonly #holders = new Set<Holder>();
  #used = 0;

  constructor(options: BodyBudgetOptions) {
    this.limitBytes = options.limitBytes;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.#now = options.now ?? (() => performance.now());
    this.#graceMs = options.graceMs ?? BODY_GRACE_MS;
    this.#startMs = Math.min(options.startMs ?? BODY_START_MS, this.#graceMs);
    this.#setting = `KUBECELL_BODY_BUDGET (${options.limit})`;
  }

  used(): number {
    return this.#used;
  }

  fullMessage(): string {
    return (
      `the KubeCell hook server holds ${this.#setting} of request bodies already; ` +
      `retry after ${this.retryAfterSeconds} s`
    );
  }

  open(cut: (message: string) => void): BodyTicket {
    const holder: Holder = {
      startedAt: this.#now(),
      received: 0,
      held: 0,
      complete: false,
      released: false,
      cut,
    };
    this.#holders.add(holder);
    return {
      declare: (length) => {
        holder.declared = length;
        return this.#hold(holder, length);
      },
      receive: (bytes) => {
        holder.received += bytes;
        return holder.declared !== undefined ? !holder.released : this.#hold(holder, bytes);
      },
      complete: () => {
        holder.complete = true;
      },
      release: () => this.#free(holder),
    };
  }

  #hold(holder: Holder, bytes: number): boolean {
    if (holder.released) return false;
    if (this.#used + bytes > this.limitBytes && !this.#makeRoom(bytes, holder)) return false;
    holder.held += bytes;
    this.#used += bytes;
    return true;
  }

  #free(holder: Holder): void {
    if (holder.released) return;
    holder.released = true;
    this.#used -= holder.held;
    holder.held = 0;
    this.#holders.delete(holder);
  }

  /** Whether a body may be cut: incomplete, and past its grace or behind its pace. */
  #cuttable(holder: Holder, at: number): boolean {
    if (holder.complete || holder.held === 0) return false;
    const age = at - holder.startedAt;
    if (age >= this.#graceMs) return true;
    if (holder.declared === undefined || age <= this.#startMs) return false;
    const due = (holder.declared * (age - this.#startMs)) / (this.#graceMs - this.#startMs);
    return holder.received < due;
  }

  /** Cuts bodies, oldest first, until `bytes` more fit; none when that would not be enough. */
  #makeRoom(bytes: number, asking: Holder): boolean {
    const at = this.#now();
    const victims: Holder[] = [];
    let freed = 0;
    for (const holder of this.#holders) {
      if (this.#used - freed + bytes <= this.limitBytes) break;
      if (holder === asking || !this.#cuttable(holder, at)) continue;
      victims.push(holder);
      freed += holder.held;
    }
    if (this.#used - freed + bytes > this.limitBytes) return false;
    for (const victim of victims) {
      const seconds = ((at - victim.startedAt) / 1000).toFixed(1);
      this.#free(victim);
      victim.cut(
        `request body incomplete after ${seconds} s while the request bodies held reach ` +
          `${this.#setting}; cut to make room for others: send it again after ` +
          `${this.retryAfterSeconds} s`,
      );
    }
    return true;
  }
}

/** A budget of the default size (KUBECELL_BODY_BUDGET unset), for an app given none. */
export function defaultBodyBudget(retryAfterSeconds: number): BodyBudget {
  return createBodyBudget({
    limitBytes: parseByteSize(DEFAULTS.KUBECELL_BODY_BUDGET) as number,
    limit: DEFAULTS.KUBECELL_BODY_BUDGET,
    retryAfterSeconds,
  });
}
