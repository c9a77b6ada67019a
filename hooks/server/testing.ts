/** Helpers shared by the hook server tests (not loaded in production). */
import { Writable } from 'node:stream';
import { createLogger, type Logger } from './logger.js';

/** A logger whose lines are kept in memory, parsed. */
export interface CapturedLogger {
  logger: Logger;
  /** Raw JSON lines, as they would appear on stdout. */
  lines: string[];
  /** The parsed lines. */
  entries(): Array<Record<string, unknown>>;
  /** Resolves once at least `count` lines were written (winston writes asynchronously). */
  waitForLines(count: number, timeoutMs?: number): Promise<void>;
}

export function captureLogger(level: 'info' | 'debug' = 'info'): CapturedLogger {
  const lines: string[] = [];
  let pending = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      pending += chunk.toString();
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      lines.push(...parts.filter((line) => line !== ''));
      callback();
    },
  });
  const logger = createLogger({ level, stream });
  return {
    logger,
    lines,
    entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
    async waitForLines(count, timeoutMs = 2000) {
      const deadline = Date.now() + timeoutMs;
      while (lines.length < count) {
        if (Date.now() > deadline) {
          throw new Error(`expected ${count} log lines, got ${lines.length}: ${lines.join('\n')}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
  };
}

/** The text of a minimal Cell sync request, as Metacontroller sends it (the handler is the test's). */
export const CELL_SYNC_BODY = JSON.stringify({
  controller: { apiVersion: 'metacontroller.k8s.io/v1alpha1', kind: 'CompositeController' },
  parent: {
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'Cell',
    metadata: { name: 'cell1', namespace: 'kubecell-system', uid: 'cell-uid' },
  },
  children: {},
  related: {},
  finalizing: false,
});
