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

/**
 * Whether `value` nests more than `max` arrays or objects deep. It runs on every request body
 * right after JSON.parse and allocates nothing: a work stack of one entry per object made the
 * first minor GCs after the parse promote the whole fresh body (about 0.1 ms a Node of a Cell's
 * request, more than the walk itself). The recursion is at most `max` frames deep.
 */
export function nestingDepthExceeds(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (max <= 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (nestingDepthExceeds(value[i], max - 1)) return true;
    }
    return false;
  }
  const object = value as Record<string, unknown>;
  // for…in: own keys only for a parsed body (its objects inherit from Object.prototype alone).
  for (const key in object) if (nestingDepthExceeds(object[key], max - 1)) return true;
  return false;
}
