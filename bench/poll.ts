/** Waiting in the benchmark: a pause, and polling a check until it yields or time runs out. */

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function until<T>(
  what: string,
  timeoutMs: number,
  everyMs: number,
  check: () => Promise<T | undefined>,
  describe: () => string = () => '',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what} ${describe()}`);
    }
    await sleep(everyMs);
  }
}
