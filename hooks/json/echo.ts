/**
 * Bounds on what the servers echo back from their input: names, kinds, uids, invalid values and
 * field paths in error messages, and the parent identity in log lines. A request is untrusted
 * until it has been checked, and a 5 MB object name must not become a 5 MB answer or log line
 * (issue 15, finding 5). Every echo goes through this module:
 *
 *   - `echo(value)`: one value quoted from the input, cut to MAX_ECHO_CHARS;
 *   - `boundMessage(message)`: a whole message, cut in the middle to MAX_MESSAGE_CHARS so that
 *     its end (usually the fix) survives;
 *   - `boundFields(fields)`: the fields of a log line (hooks/server/logger.ts applies it to
 *     every line, as the last guard).
 */

/**
 * Longest echoed value. Every name the apiserver accepts is shown whole: a DNS subdomain name
 * (253 characters), `<namespace>/<name>` (63 + 1 + 253 = 317) and a qualified label key
 * (253 + 1 + 63 = 317).
 */
export const MAX_ECHO_CHARS = 320;

/** Longest message (an error answer, a denial, one log field). */
export const MAX_MESSAGE_CHARS = 4096;

const ELLIPSIS = '…';

/** `value` cut to `max` characters, with `…` when it was cut (never splitting a surrogate pair). */
export function echo(value: string, max: number = MAX_ECHO_CHARS): string {
  if (value.length <= max) return value;
  return `${cutAt(value, max)}${ELLIPSIS}`;
}

/** `echo(value)` as a JSON string literal, the way messages quote names. */
export function quoted(value: string, max: number = MAX_ECHO_CHARS): string {
  return JSON.stringify(echo(value, max));
}

/**
 * A message of at most about `max` characters: its head and its tail with the number of
 * characters left out between them, so that both what went wrong and how to fix it survive.
 */
export function boundMessage(message: string, max: number = MAX_MESSAGE_CHARS): string {
  if (message.length <= max) return message;
  const keep = Math.max(0, max - 40);
  const head = cutAt(message, Math.ceil(keep / 2));
  const tailStart = message.length - Math.floor(keep / 2);
  const tail = message.slice(
    isLowSurrogate(message.charCodeAt(tailStart)) ? tailStart + 1 : tailStart,
  );
  const omitted = message.length - head.length - tail.length;
  return `${head}${ELLIPSIS} [${omitted} characters omitted] ${ELLIPSIS}${tail}`;
}

/**
 * The fields of a log line with every string bounded by `boundMessage`, looking a few levels
 * into objects and arrays (a log line is built from explicit fields, never from a body, so
 * anything deeper is not expected). Values are copied only when something had to be cut.
 */
export function boundFields<T>(value: T, depth = 4): T {
  if (typeof value === 'string') return boundMessage(value) as T;
  if (depth <= 0 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const items = value.map((item: unknown) => boundFields(item, depth - 1));
    return (items.some((item, i) => item !== value[i]) ? items : value) as T;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const bounded = boundFields(item, depth - 1);
    if (bounded !== item) {
      copy ??= { ...(value as Record<string, unknown>) };
      copy[key] = bounded;
    }
  }
  return (copy ?? value) as T;
}

function cutAt(value: string, max: number): string {
  const end = isHighSurrogate(value.charCodeAt(max - 1)) ? max - 1 : max;
  return value.slice(0, Math.max(0, end));
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
