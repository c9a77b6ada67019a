/**
 * When to try again something that keeps failing (a watch, a list): 1 s after the first failure,
 * doubling up to 30 s, back to 1 s after a success; and whether a failure is new (its text
 * differs from the last one's), so that a log says each error once, not once per retry.
 */
const FIRST_MS = 1000;
const MAX_MS = 30_000;

export class RetryBackoff {
  /** Failures since the last success. */
  failures = 0;
  private lastError: string | undefined;

  constructor(private readonly firstMs = FIRST_MS) {}

  /** Counts a failure: the wait before the next try, and whether `text` is a new error. */
  failed(text: string): { retryMs: number; isNew: boolean } {
    this.failures += 1;
    const isNew = text !== this.lastError;
    this.lastError = text;
    return { retryMs: Math.min(this.firstMs * 2 ** (this.failures - 1), MAX_MS), isNew };
  }

  /** A success: returns the failures it ends; the next failure is new and waits the least. */
  succeeded(): number {
    const failures = this.failures;
    this.failures = 0;
    this.lastError = undefined;
    return failures;
  }
}
