import { EnvReader } from '../config/env-reader.js';
import { openFileLimit, RESERVED_FILE_DESCRIPTORS } from './connections.js';
import type { Deadlines } from './deadlines.js';

/**
 * Hook server settings, read once at startup from the environment.
 *
 * | Variable              | Default | Meaning                                        |
 * |-----------------------|---------|------------------------------------------------|
 * | `KUBECELL_PORT`       | `8080`  | TCP port to listen on (0-65535; 0 picks a free port) |
 * | `KUBECELL_BODY_LIMIT` | `64mb`  | Largest request body accepted (`b`, `kb`, `mb`, `gb`; 1 kb = 1024 bytes) |
 * | `KUBECELL_LOG_LEVEL`  | `info`  | error, warn, info, http, verbose, debug, silly  |
 * | `KUBECELL_MAX_INFLIGHT` | `64`  | Hook calls in flight before new ones get 429 (0 = no limit) |
 * | `KUBECELL_RETRY_AFTER_SECONDS` | `1` | `Retry-After` of a 429 answer (1-3600) |
 * | `KUBECELL_HEADERS_TIMEOUT_SECONDS` | `10` | A request's headers must arrive within this (both ports) |
 * | `KUBECELL_BODY_TIMEOUT_SECONDS` | `20` | A request's body must arrive within this of its first byte (both ports) |
 * | `KUBECELL_REQUEST_TIMEOUT_SECONDS` | `30` | A call's answer must be written within this (both ports) |
 * | `KUBECELL_BODY_BUDGET` | `96mb` | Request body bytes held at once, both ports together; past it 429 (body-budget.ts) |
 * | `KUBECELL_MAX_CONNECTIONS` | `1000` | Open connections per port; past it new ones are closed (connections.ts) |
 *
 * The deadlines (hooks/server/deadlines.ts says why these defaults) apply to the admission
 * webhook's HTTPS port too; they must not decrease: headers <= body <= request.
 *
 * The body limit is generous on purpose: a Cell's sync request carries every
 * Node and Pod on its machines, about 30 MB for 1000 Nodes.
 */

export const LOG_LEVELS = ['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface ServerConfig {
  port: number;
  /** The body limit in bytes. */
  bodyLimitBytes: number;
  /** The body limit as configured, for messages (e.g. `64mb`). */
  bodyLimit: string;
  logLevel: LogLevel;
  // --- load shedding (hooks/server/load-shedding.ts)
  /** Hook calls in flight before new ones are answered 429; 0 = no limit. */
  maxInflight: number;
  /** `Retry-After` seconds of a 429 answer. */
  retryAfterSeconds: number;
  // --- end load shedding
  /** How long clients may take (hooks/server/deadlines.ts); both ports. */
  deadlines: Deadlines;
  /** Request body bytes held at once, both ports together (body-budget.ts). */
  bodyBudgetBytes: number;
  /** The budget as configured, for messages (e.g. `96mb`). */
  bodyBudget: string;
  /** Open connections per port (connections.ts). */
  maxConnections: number;
}

export const DEFAULTS = {
  KUBECELL_PORT: '8080',
  KUBECELL_BODY_LIMIT: '64mb',
  KUBECELL_LOG_LEVEL: 'info',
  KUBECELL_MAX_INFLIGHT: '64',
  KUBECELL_RETRY_AFTER_SECONDS: '1',
  KUBECELL_HEADERS_TIMEOUT_SECONDS: '10',
  KUBECELL_BODY_TIMEOUT_SECONDS: '20',
  KUBECELL_REQUEST_TIMEOUT_SECONDS: '30',
  KUBECELL_BODY_BUDGET: '96mb',
  KUBECELL_MAX_CONNECTIONS: '1000',
} as const;

/** The deadlines when nothing is configured (the DEFAULTS above, as numbers). */
export const DEFAULT_DEADLINES: Deadlines = {
  headersSeconds: Number(DEFAULTS.KUBECELL_HEADERS_TIMEOUT_SECONDS),
  bodySeconds: Number(DEFAULTS.KUBECELL_BODY_TIMEOUT_SECONDS),
  requestSeconds: Number(DEFAULTS.KUBECELL_REQUEST_TIMEOUT_SECONDS),
};

/** The longest deadline accepted, in seconds (an hour: far beyond any hook timeout). */
const MAX_DEADLINE_SECONDS = 3600;

/**
 * The admission webhook's body limit: the apiserver refuses objects over 3 MiB, and an UPDATE
 * review carries the object twice. KUBECELL_BODY_LIMIT (sized for Cell syncs) does not apply there.
 */
export const WEBHOOK_BODY_LIMIT_BYTES = 8 * 1024 * 1024;

/** The highest KUBECELL_MAX_CONNECTIONS accepted, whatever the open-file limit. */
const MAX_CONNECTIONS_CEILING = 1_000_000;

/** What the process may open, as far as known (the open-file limit; unknown skips its check). */
export interface ProcessLimits {
  openFiles?: number;
}

/**
 * Reads the settings; throws a `ConfigError` listing every invalid variable. The open-file limit
 * is read from /proc unless given.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  limits: ProcessLimits = { openFiles: openFileLimit() },
): ServerConfig {
  const reader = new EnvReader(env);
  const read = (name: keyof typeof DEFAULTS): string => reader.text(name, DEFAULTS[name]);

  const portText = read('KUBECELL_PORT');
  const port = /^\d+$/.test(portText) ? Number(portText) : NaN;
  if (!(port >= 0 && port <= 65535)) {
    reader.problem(
      `KUBECELL_PORT=${JSON.stringify(portText)} is not a port; set it to an integer from 0 to 65535 ` +
        `(default ${DEFAULTS.KUBECELL_PORT})`,
    );
  }

  const bodyLimit = read('KUBECELL_BODY_LIMIT');
  const bodyLimitBytes = parseByteSize(bodyLimit);
  if (bodyLimitBytes === undefined) {
    reader.problem(
      `KUBECELL_BODY_LIMIT=${JSON.stringify(bodyLimit)} is not a size; set it to a positive ` +
        `number with an optional unit b, kb, mb or gb, e.g. 64mb (default ${DEFAULTS.KUBECELL_BODY_LIMIT})`,
    );
  }

  const logLevel = read('KUBECELL_LOG_LEVEL').toLowerCase();
  if (!isLogLevel(logLevel)) {
    reader.problem(
      `KUBECELL_LOG_LEVEL=${JSON.stringify(logLevel)} is not a log level; set it to one of ` +
        `${LOG_LEVELS.join(', ')} (default ${DEFAULTS.KUBECELL_LOG_LEVEL})`,
    );
  }

  const { maxInflight, retryAfterSeconds } = readShedding(reader);
  const deadlines = readDeadlines(reader);
  const bounds = readBounds(reader, bodyLimit, bodyLimitBytes, limits);

  // Throws when any check above failed, so the values below are the checked ones.
  reader.finish();
  return {
    port,
    bodyLimit,
    bodyLimitBytes: bodyLimitBytes as number,
    logLevel: logLevel as LogLevel,
    maxInflight,
    retryAfterSeconds,
    deadlines,
    ...bounds,
  };
}

/** Load shedding (load-shedding.ts): calls in flight, and the Retry-After of a 429. */
function readShedding(reader: EnvReader): Pick<ServerConfig, 'maxInflight' | 'retryAfterSeconds'> {
  const maxInflight = reader.limit(
    'KUBECELL_MAX_INFLIGHT',
    Number(DEFAULTS.KUBECELL_MAX_INFLIGHT),
    100_000,
  );
  const retryAfterText = reader.text(
    'KUBECELL_RETRY_AFTER_SECONDS',
    DEFAULTS.KUBECELL_RETRY_AFTER_SECONDS,
  );
  const retryAfterSeconds = /^\d+$/.test(retryAfterText) ? Number(retryAfterText) : NaN;
  if (!(retryAfterSeconds >= 1 && retryAfterSeconds <= 3600)) {
    reader.problem(
      `KUBECELL_RETRY_AFTER_SECONDS=${JSON.stringify(retryAfterText)} is not a delay; set it to ` +
        `an integer number of seconds from 1 to 3600 (default ${DEFAULTS.KUBECELL_RETRY_AFTER_SECONDS})`,
    );
  }
  return { maxInflight, retryAfterSeconds };
}

/** What bounds memory and descriptors (issue 23): the budget of body bytes, the connection cap. */
function readBounds(
  reader: EnvReader,
  bodyLimit: string,
  bodyLimitBytes: number | undefined,
  limits: ProcessLimits,
): Pick<ServerConfig, 'bodyBudget' | 'bodyBudgetBytes' | 'maxConnections'> {
  const bodyBudget = reader.text('KUBECELL_BODY_BUDGET', DEFAULTS.KUBECELL_BODY_BUDGET);
  const maxConnections = reader.text('KUBECELL_MAX_CONNECTIONS', DEFAULTS.KUBECELL_MAX_CONNECTIONS);
  return {
    bodyBudget,
    bodyBudgetBytes: readBodyBudget(reader, bodyBudget, bodyLimit, bodyLimitBytes) as number,
    maxConnections: readMaxConnections(reader, maxConnections, limits.openFiles),
  };
}

/**
 * The budget of body bytes in memory (body-budget.ts): a size, and at least the body limit and
 * the webhook's 8 MiB, or a body of the largest size could never be received.
 */
function readBodyBudget(
  reader: EnvReader,
  text: string,
  bodyLimit: string,
  bodyLimitBytes: number | undefined,
): number | undefined {
  const bytes = parseByteSize(text);
  if (bytes === undefined) {
    reader.problem(
      `KUBECELL_BODY_BUDGET=${JSON.stringify(text)} is not a size; set it to a positive number ` +
        `with an optional unit b, kb, mb or gb, e.g. 96mb (default ${DEFAULTS.KUBECELL_BODY_BUDGET})`,
    );
  } else if (
    bodyLimitBytes !== undefined &&
    bytes < Math.max(bodyLimitBytes, WEBHOOK_BODY_LIMIT_BYTES)
  ) {
    const [limit, name] =
      bodyLimitBytes >= WEBHOOK_BODY_LIMIT_BYTES
        ? [bodyLimit, 'KUBECELL_BODY_LIMIT']
        : ['8mb', "the webhook's body limit"];
    reader.problem(
      `KUBECELL_BODY_BUDGET=${text} is smaller than ${name} (${limit}): a body of that size could ` +
        `never be received; raise KUBECELL_BODY_BUDGET to at least ${limit} ` +
        `(default ${DEFAULTS.KUBECELL_BODY_BUDGET})`,
    );
  }
  return bytes;
}

/** Connections per port: a whole number from 1, with both ports below the open-file limit. */
function readMaxConnections(
  reader: EnvReader,
  text: string,
  openFiles: number | undefined,
): number {
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(value >= 1 && value <= MAX_CONNECTIONS_CEILING)) {
    reader.problem(
      `KUBECELL_MAX_CONNECTIONS=${JSON.stringify(text)} is not a connection count; set it to an ` +
        `integer from 1 to ${MAX_CONNECTIONS_CEILING} (default ${DEFAULTS.KUBECELL_MAX_CONNECTIONS})`,
    );
    return Number(DEFAULTS.KUBECELL_MAX_CONNECTIONS);
  }
  if (openFiles !== undefined && 2 * value + RESERVED_FILE_DESCRIPTORS > openFiles) {
    const fits = Math.floor((openFiles - RESERVED_FILE_DESCRIPTORS) / 2);
    reader.problem(
      `KUBECELL_MAX_CONNECTIONS=${value} does not fit the open-file limit of ${openFiles}: both ` +
        `ports at the cap plus ${RESERVED_FILE_DESCRIPTORS} descriptors need ` +
        `${2 * value + RESERVED_FILE_DESCRIPTORS}; set it to at most ${Math.max(fits, 0)} or raise the ` +
        `limit (ulimit -n, or the container runtime's)`,
    );
  }
  return value;
}

/** The three deadlines, each 1 s to an hour, none shorter than the one before it. */
function readDeadlines(reader: EnvReader): Deadlines {
  const seconds = (name: keyof typeof DEFAULTS): number =>
    reader.seconds(name, Number(DEFAULTS[name]), 1, MAX_DEADLINE_SECONDS);
  const deadlines: Deadlines = {
    headersSeconds: seconds('KUBECELL_HEADERS_TIMEOUT_SECONDS'),
    bodySeconds: seconds('KUBECELL_BODY_TIMEOUT_SECONDS'),
    requestSeconds: seconds('KUBECELL_REQUEST_TIMEOUT_SECONDS'),
  };
  const order: Array<[string, number]> = [
    ['KUBECELL_HEADERS_TIMEOUT_SECONDS', deadlines.headersSeconds],
    ['KUBECELL_BODY_TIMEOUT_SECONDS', deadlines.bodySeconds],
    ['KUBECELL_REQUEST_TIMEOUT_SECONDS', deadlines.requestSeconds],
  ];
  for (let i = 1; i < order.length; i++) {
    const [before, shorter] = order[i - 1] as [string, number];
    const [name, value] = order[i] as [string, number];
    if (value < shorter) {
      reader.problem(
        `${name}=${value} is shorter than ${before}=${shorter}; each deadline includes the one ` +
          `before it (headers <= body <= request): raise ${name} or lower ${before}`,
      );
    }
  }
  return deadlines;
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** `64mb` → 67108864; `1048576` → 1048576; anything else → undefined. */
export function parseByteSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(text.trim());
  if (match === null) return undefined;
  const unit = UNITS[(match[2] ?? 'b').toLowerCase()] ?? 1;
  const bytes = Math.floor(Number(match[1]) * unit);
  return bytes >= 1 && Number.isSafeInteger(bytes) ? bytes : undefined;
}

function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}
