/** Locale-independent ordering (UTF-16 code units), the same on every node and runtime. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
