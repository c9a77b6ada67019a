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
}

export const DEFAULTS = {
  KUBECELL_PORT: '8080',
  KUBECELL_BODY_LIMIT: '64mb',
  KUBECELL_LOG_LEVEL: 'info',
  KUBECELL_MAX_INFLIGHT: '64',
  KUBECELL_RETRY_AFTER_SECONDS: '1',
} as const;

/** Every problem found in the environment, each naming its variable and the fix. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** Reads the settings; throws a `ConfigError` listing every invalid variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const problems: string[] = [];
  const read = (name: keyof typeof DEFAULTS): string => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? DEFAULTS[name] : value;
  };

  const portText = read('KUBECELL_PORT');
  const port = /^\d+$/.test(portText) ? Number(portText) : NaN;
  if (!(port >= 0 && port <= 65535)) {
    problems.push(
      `KUBECELL_PORT=${JSON.stringify(portText)} is not a port; set it to an integer from 0 to 65535 ` +
        `(default ${DEFAULTS.KUBECELL_PORT})`,
    );
  }

  const bodyLimit = read('KUBECELL_BODY_LIMIT');
  const bodyLimitBytes = parseByteSize(bodyLimit);
  if (bodyLimitBytes === undefined) {
    problems.push(
      `KUBECELL_BODY_LIMIT=${JSON.stringify(bodyLimit)} is not a size; set it to a positive ` +
        `number with an optional unit b, kb, mb or gb, e.g. 64mb (default ${DEFAULTS.KUBECELL_BODY_LIMIT})`,
    );
  }

  const logLevel = read('KUBECELL_LOG_LEVEL').toLowerCase();
  if (!isLogLevel(logLevel)) {
    problems.push(
      `KUBECELL_LOG_LEVEL=${JSON.stringify(logLevel)} is not a log level; set it to one of ` +
        `${LOG_LEVELS.join(', ')} (default ${DEFAULTS.KUBECELL_LOG_LEVEL})`,
    );
  }

  // --- load shedding
  const maxInflightText = read('KUBECELL_MAX_INFLIGHT');
  const maxInflight = /^\d+$/.test(maxInflightText) ? Number(maxInflightText) : NaN;
  if (!(maxInflight >= 0 && maxInflight <= 100_000)) {
    problems.push(
      `KUBECELL_MAX_INFLIGHT=${JSON.stringify(maxInflightText)} is not a limit; set it to an ` +
        `integer from 0 (no limit) to 100000 (default ${DEFAULTS.KUBECELL_MAX_INFLIGHT})`,
    );
  }
  const retryAfterText = read('KUBECELL_RETRY_AFTER_SECONDS');
  const retryAfterSeconds = /^\d+$/.test(retryAfterText) ? Number(retryAfterText) : NaN;
  if (!(retryAfterSeconds >= 1 && retryAfterSeconds <= 3600)) {
    problems.push(
      `KUBECELL_RETRY_AFTER_SECONDS=${JSON.stringify(retryAfterText)} is not a delay; set it to ` +
        `an integer number of seconds from 1 to 3600 (default ${DEFAULTS.KUBECELL_RETRY_AFTER_SECONDS})`,
    );
  }
  // --- end load shedding

  if (problems.length > 0 || bodyLimitBytes === undefined || !isLogLevel(logLevel)) {
    throw new ConfigError(problems);
  }
  return { port, bodyLimit, bodyLimitBytes, logLevel, maxInflight, retryAfterSeconds };
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
