/** Summaries of samples for the benchmark's tables: order statistics and rounding. */

/** Median, 90th percentile (nearest rank), max and min of a sample, in milliseconds. */
export interface Stats {
  count: number;
  medianMs: number;
  p90Ms: number;
  maxMs: number;
  minMs: number;
}

export function stats(samples: readonly number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
  const median =
    sorted.length === 0
      ? NaN
      : sorted.length % 2 === 1
        ? (sorted[(sorted.length - 1) / 2] ?? NaN)
        : ((sorted[sorted.length / 2 - 1] ?? NaN) + (sorted[sorted.length / 2] ?? NaN)) / 2;
  return {
    count: sorted.length,
    medianMs: median,
    p90Ms: at(0.9),
    maxMs: sorted[sorted.length - 1] ?? NaN,
    minMs: sorted[0] ?? NaN,
  };
}

export function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
