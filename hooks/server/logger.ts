/**
 * Structured JSON logs: one JSON object per line on stdout, with `timestamp`,
 * `level`, `msg` and named fields.
 *
 * Never log a request body, a child, a related object or Secret data: hook
 * requests carry kubeconfigs and join tokens. Log lines are built only from
 * the explicit fields below. Every string of a line is bounded (echo.ts): a
 * value echoed from a request (a name, an error quoting it) cannot make a line
 * longer than a few kilobytes.
 */
import winston from 'winston';
import type { LogLevel } from './config.js';
import { boundFields, boundMessage, echo } from '../json/echo.js';

export type Logger = winston.Logger;

/** winston's key for the final serialized line (triple-beam's MESSAGE). */
const MESSAGE = Symbol.for('message');

const jsonLine = winston.format((info) => {
  const { level, message, timestamp, ...rest } = info;
  const msg = typeof message === 'string' ? boundMessage(message) : message;
  let line: string;
  try {
    const fields = boundFields(rest);
    line = JSON.stringify({ timestamp, level, msg, ...fields });
  } catch {
    // A field that cannot be serialized must not take the logger down.
    line = JSON.stringify({ timestamp, level, msg, logError: 'unserializable fields' });
  }
  (info as unknown as Record<symbol, unknown>)[MESSAGE] = line;
  return info;
});

export interface LoggerOptions {
  level: LogLevel;
  /** Where lines go; stdout unless a test captures them. */
  stream?: NodeJS.WritableStream;
}

export function createLogger({ level, stream = process.stdout }: LoggerOptions): Logger {
  return winston.createLogger({
    level,
    format: winston.format.combine(winston.format.timestamp(), jsonLine()),
    transports: [new winston.transports.Stream({ stream })],
    exitOnError: false,
  });
}

export type Outcome = 'ok' | 'client_error' | 'error';

/** `ok` for 2xx, `client_error` for 4xx (the request was wrong), `error` otherwise. */
export function outcomeOf(status: number): Outcome {
  if (status >= 200 && status < 300) return 'ok';
  if (status >= 400 && status < 500) return 'client_error';
  return 'error';
}

/** Identity of the parent object, the only part of a request that is logged. */
export interface ParentIdentity {
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
}

export interface HookCallRecord {
  controller: string;
  hook: string;
  parent?: ParentIdentity;
  durationMs: number;
  status: number;
  /** Why the call failed, when it did. */
  error?: string;
  /** Stack of an exception thrown by a handler. */
  stack?: string;
}

/** Logs one line for one hook call: info when it succeeded, warn or error otherwise. */
export function logHookCall(logger: Logger, record: HookCallRecord): void {
  const outcome = outcomeOf(record.status);
  const level = outcome === 'ok' ? 'info' : outcome === 'client_error' ? 'warn' : 'error';
  logger.log(level, 'hook call', {
    controller: record.controller,
    hook: record.hook,
    parent: boundIdentity(record.parent),
    durationMs: Math.round(record.durationMs * 10) / 10,
    status: record.status,
    outcome,
    ...(record.error !== undefined ? { error: boundMessage(record.error) } : {}),
    ...(record.stack !== undefined ? { stack: boundMessage(record.stack) } : {}),
  });
}

/** The parent's identity with each part cut to an echo's length (names are at most 253). */
export function boundIdentity(parent: ParentIdentity | undefined): ParentIdentity {
  const bounded: ParentIdentity = {};
  for (const key of ['kind', 'namespace', 'name', 'uid'] as const) {
    const value = parent?.[key];
    if (typeof value === 'string') bounded[key] = echo(value);
  }
  return bounded;
}
