// Waiting until something is so: the one polling loop of the harness, the cluster tests, the
// benchmarks and local-up.
//
//   poll(description, probe, { timeoutMs, intervalMs, abort, context })
//
// The probe answers `{ value }` (done: poll resolves to the value) or `{ notYet: reason }`. A
// probe that throws counts as not yet, its message the reason: what is polled (an apiserver, a
// server still starting, kubectl) fails now and then while it comes up. What must end the wait at
// once (a server process that died, a VirtualCluster that failed) is `abort`'s to say, checked
// before every try. On timeout the error (PollTimeout) names the description and the last reason,
// followed by `context()` (the end of a log, say).

/**
 * One try: the value that ends the wait, or why it is not there yet. (The absent keys are spelt
 * out so that TypeScript infers T from `{ value }` alone when a probe answers either literal.)
 */
export type PollOutcome<T> =
  { value: T; notYet?: undefined } | { notYet: string; value?: undefined };

export interface PollOptions {
  /** How long to keep trying, in ms. */
  timeoutMs: number;
  /** The pause between tries, in ms (default 250). */
  intervalMs?: number;
  /** Checked before every try: a reason to stop waiting at once, or undefined to go on. */
  abort?: () => string | undefined;
  /** What the timeout error adds after the last reason (the end of a log). */
  context?: () => string;
}

/** The wait ran out of time. */
export class PollTimeout extends Error {
  override readonly name = 'PollTimeout';
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Tries `probe` every `intervalMs` until it answers a value, `abort` objects or time runs out. */
export async function poll<T>(
  description: string,
  probe: () => Promise<PollOutcome<T>>,
  options: PollOptions,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let last: string;
  for (;;) {
    const stop = options.abort?.();
    if (stop !== undefined) throw new Error(`stopped waiting for ${description}: ${stop}`);
    try {
      const outcome = await probe();
      if (outcome.notYet === undefined) return outcome.value;
      last = outcome.notYet;
    } catch (error) {
      last = reasonOf(error);
    }
    if (Date.now() >= deadline) {
      const context = options.context?.();
      throw new PollTimeout(
        `timed out after ${Math.round(options.timeoutMs / 1000)} s waiting for ${description}; ` +
          `last: ${last}${context ? `\n${context}` : ''}`,
      );
    }
    await sleep(options.intervalMs ?? 250);
  }
}
