/**
 * When the cell agent's next pass runs (loop.ts): an interval after the last pass ended, or
 * shortly after something it watches changed (watches.ts). A change asks for a pass `debounceMs`
 * later and further changes until then ride along, so a burst (a work applying a host Namespace
 * and its Role, k3k writing its Secret) costs one pass, and the first change of a burst waits at
 * most `debounceMs`. A change during a pass is kept: the next pass starts as soon as that one
 * ends. A pass absorbs the changes asked for before it started: it reads everything afresh.
 */

/** Why a pass runs: the first one, the interval, or a watched change. */
export type PassReason = 'start' | 'interval' | 'watch';

export class PassTrigger {
  /** A change came due and no pass has started since. */
  private due = false;
  private debounce: NodeJS.Timeout | undefined;
  private wake: ((reason: PassReason | 'stopped') => void) | undefined;

  constructor(private readonly debounceMs: number) {}

  /** Something the agent watches changed. */
  changed(): void {
    if (this.debounce !== undefined || this.due) return;
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      this.due = true;
      this.wake?.('watch');
    }, this.debounceMs);
  }

  /** A pass starts: it sees every change made so far. */
  passStarts(): void {
    clearTimeout(this.debounce);
    this.debounce = undefined;
    this.due = false;
  }

  /**
   * Waits for the reason of the next pass: `watch` at once when a change came due during the
   * last one, else the first of the interval, a change, or `signal` (`stopped`).
   */
  next(intervalMs: number, signal: AbortSignal): Promise<PassReason | 'stopped'> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve('stopped');
      if (this.due) return resolve('watch');
      const finish = (reason: PassReason | 'stopped'): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', stop);
        this.wake = undefined;
        resolve(reason);
      };
      const stop = (): void => finish('stopped');
      const timer = setTimeout(() => finish('interval'), intervalMs);
      signal.addEventListener('abort', stop, { once: true });
      this.wake = finish;
    });
  }

  /** Forgets a pending change (the loop ends). */
  stop(): void {
    this.passStarts();
    this.wake?.('stopped');
  }
}
