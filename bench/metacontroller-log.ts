/** What Metacontroller's own log says: the flags it runs with, and its client-side throttling. */
import { readFileSync } from 'node:fs';
import { round } from './stats.js';

/** The flags that set Metacontroller's pace, as it logged its configuration at start. */
export interface EffectiveFlags {
  workers?: number;
  clientGoQps?: number;
  clientGoBurst?: number;
}

export function flagValues(logFile: string): EffectiveFlags | undefined {
  const line = readFileSync(logFile, 'utf8')
    .split('\n')
    .find((entry) => entry.includes('Configuration information'));
  if (!line) return undefined;
  const number = (key: string) => {
    const match = new RegExp(`"${key}":\\s*([0-9.]+)`).exec(line);
    return match ? Number(match[1]) : undefined;
  };
  const workers = number('workers');
  const clientGoQps = number('client-go-qps');
  const clientGoBurst = number('client-go-burst');
  return {
    ...(workers === undefined ? {} : { workers }),
    ...(clientGoQps === undefined ? {} : { clientGoQps }),
    ...(clientGoBurst === undefined ? {} : { clientGoBurst }),
  };
}

/** Client-side throttling waits over 1 s that Metacontroller logged after byte `from` of its log. */
export function throttling(logFile: string, from = 0): { count: number; maxSeconds: number } {
  const lines = readFileSync(logFile)
    .subarray(from)
    .toString('utf8')
    .split('\n')
    .filter((line) => line.includes('Waited before sending request'));
  const delays = lines.map((line) => Number(/"delay":\s*([0-9.]+)/.exec(line)?.[1] ?? NaN));
  return {
    count: lines.length,
    maxSeconds: round(Math.max(0, ...delays.filter((delay) => !Number.isNaN(delay))), 2),
  };
}
