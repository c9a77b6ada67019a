/**
 * Remembers the results of a pure function of one string. Hooks are called again and again with
 * the same texts (a quantity such as "500m" in every container, the same kubeconfig on every
 * resync), and parsing them each time is most of the work.
 *
 * Bounded by bytes, not by entries: every entry is accounted as the bytes of its key, the bytes
 * its result holds (`sizeOf`) and a fixed overhead, strings at 2 bytes a character (V8 stores a
 * string in 1 or 2 bytes a character, so this is an upper bound). When an entry would take the
 * total past `maxBytes`, the least recently used entries are dropped first. A text longer than
 * `maxTextLength` is computed every time and never kept, so one huge text cannot flush the
 * memo or sit in it. With `key: 'sha256'` the memo keeps the text's digest, not the text: a
 * kubeconfig is not held in memory twice, and a key is 64 characters whatever the text.
 *
 * Results are shared between callers, so they must be treated as immutable; a result must not
 * hold on to the text (a slice of it keeps all of it alive in V8), or `sizeOf` must count it.
 */
import { createHash } from 'node:crypto';

export interface TextMemoOptions<R> {
  /** Most bytes the memo retains, as it accounts them (keys, results, per-entry overhead). */
  maxBytes: number;
  /** Texts longer than this (in characters) are computed every time and never remembered. */
  maxTextLength: number;
  /** Keep the text itself as the key, or its sha256 digest (64 hex characters). */
  key: 'text' | 'sha256';
  /** Bytes a result holds besides the entry itself; strings count 2 bytes a character. */
  sizeOf?: (result: R) => number;
}

export interface TextMemoStats {
  entries: number;
  /** Bytes retained as accounted: the sum over entries of key, result and overhead. */
  retainedBytes: number;
  maxBytes: number;
  hits: number;
  misses: number;
  /** Entries dropped to stay under `maxBytes`. */
  evictions: number;
  /** Calls with a text over `maxTextLength`: computed, not remembered. */
  skipped: number;
}

export interface TextMemo<R> {
  (text: string): R;
  stats(): TextMemoStats;
  clear(): void;
}

/** What an entry costs besides its key and result: the Map slot, the record, the number. */
export const ENTRY_OVERHEAD_BYTES = 128;

/** Accounted bytes of a string: 2 a character, the most V8 uses for a flat string. */
export function stringBytes(text: string): number {
  return 2 * text.length;
}

interface Entry<R> {
  key: string;
  result: R;
  bytes: number;
  older: Entry<R> | undefined;
  newer: Entry<R> | undefined;
}

/**
 * The entries from least to most recently used, as a linked list: a hit moves its entry to the
 * newest end without touching the Map. (A Map delete + set per hit, to keep the Map in use
 * order, rehashed the Map every few hits; a Cell sync makes over a hundred thousand hits.)
 */
class Recency<R> {
  oldest: Entry<R> | undefined;
  newest: Entry<R> | undefined;

  append(entry: Entry<R>): void {
    entry.older = this.newest;
    entry.newer = undefined;
    if (this.newest) this.newest.newer = entry;
    else this.oldest = entry;
    this.newest = entry;
  }

  remove(entry: Entry<R>): void {
    if (entry.older) entry.older.newer = entry.newer;
    else this.oldest = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else this.newest = entry.older;
    entry.older = undefined;
    entry.newer = undefined;
  }

  touch(entry: Entry<R>): void {
    if (entry === this.newest) return;
    this.remove(entry);
    this.append(entry);
  }
}

export function memoiseByText<R>(
  options: TextMemoOptions<R>,
  compute: (text: string) => R,
): TextMemo<R> {
  const { maxBytes, maxTextLength, sizeOf } = options;
  if (!(maxBytes > 0) || !(maxTextLength >= 0)) {
    throw new RangeError('memoiseByText: maxBytes must be > 0 and maxTextLength >= 0');
  }
  const keyOf =
    options.key === 'sha256'
      ? (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')
      : (text: string) => text;
  const known = new Map<string, Entry<R>>();
  let recency = new Recency<R>();
  const counts = { retainedBytes: 0, hits: 0, misses: 0, evictions: 0, skipped: 0 };

  const memo = (text: string): R => {
    if (text.length > maxTextLength) {
      counts.skipped++;
      return compute(text);
    }
    const key = keyOf(text);
    const entry = known.get(key);
    if (entry !== undefined) {
      counts.hits++;
      recency.touch(entry);
      return entry.result;
    }
    counts.misses++;
    const result = compute(text);
    const bytes = stringBytes(key) + (sizeOf?.(result) ?? 0) + ENTRY_OVERHEAD_BYTES;
    if (bytes > maxBytes) return result;
    for (let old = recency.oldest; old !== undefined; old = recency.oldest) {
      if (counts.retainedBytes + bytes <= maxBytes) break;
      recency.remove(old);
      known.delete(old.key);
      counts.retainedBytes -= old.bytes;
      counts.evictions++;
    }
    const created: Entry<R> = { key, result, bytes, older: undefined, newer: undefined };
    known.set(key, created);
    recency.append(created);
    counts.retainedBytes += bytes;
    return result;
  };
  memo.stats = (): TextMemoStats => ({ entries: known.size, maxBytes, ...counts });
  memo.clear = (): void => {
    known.clear();
    recency = new Recency<R>();
    counts.retainedBytes = 0;
  };
  return memo;
}
