/** Small helpers for checking untrusted JSON. */

/** A JSON object: not null, not an array. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The JSON type name used in error messages. */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

const MAX_KEY_CHARS = 100;

/**
 * A map key as it appears in a field path: `["Service.v1"]`. Long keys are
 * cut so that one absurd key cannot blow up an error message or a log line.
 */
export function keySegment(key: string): string {
  const shown = key.length > MAX_KEY_CHARS ? `${key.slice(0, MAX_KEY_CHARS)}…` : key;
  return `[${JSON.stringify(shown)}]`;
}

/**
 * Joins problems into one message, keeping at most `max` so that a request
 * with thousands of bad entries still gets a short, readable answer.
 */
export function summarizeProblems(problems: readonly string[], max = 10): string {
  const shown = problems.slice(0, max).join('; ');
  const more = problems.length - max;
  return more > 0 ? `${shown}; and ${more} more problem${more === 1 ? '' : 's'}` : shown;
}

/** Deeper than any Kubernetes object nests (managedFields included); JSON recursion fails far deeper. */
export const MAX_BODY_DEPTH = 200;

/** Whether `value` nests more than `max` arrays or objects deep (iterative: no recursion). */
export function nestingDepthExceeds(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (current === null || typeof current !== 'object') continue;
    if (depth >= max) return true;
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
