/**
 * Remembers the results of a pure function of one string. Hooks are called again and again with
 * the same texts (a quantity such as "500m" in every container, the same kubeconfig on every
 * resync), and parsing them each time is most of the work. Bounded: when `limit` entries are
 * held the memory is emptied, so a stream of distinct texts cannot grow it. Results are shared
 * between callers, so they must be treated as immutable.
 */
export function memoiseByText<R>(limit: number, compute: (text: string) => R): (text: string) => R {
  const known = new Map<string, R>();
  return (text) => {
    if (known.has(text)) return known.get(text) as R;
    const result = compute(text);
    if (known.size >= limit) known.clear();
    known.set(text, result);
    return result;
  };
}
