/**
 * Reading settings from the environment, the same way for every controller: an unset or blank
 * variable takes its default; a bad value is collected as a problem that names the variable, what
 * it must be and the default, and `finish()` throws one ConfigError listing them all, so the
 * server refuses to start (exit code 2) instead of running on a guess.
 */

/** Every problem found in the environment, each naming its variable and the fix. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** Settings several controllers and the webhook share: one name, one default, one meaning. */
export const SHARED_DEFAULTS = {
  KUBECELL_CONTROLLER_NAMESPACE: 'kubecell-system',
  KUBECELL_NODEPORT_RANGE: '30000-32767',
  /** The k3k controller's Deployment: the Cell checks it, the host namespaces let it in. */
  KUBECELL_K3K_CONTROLLER: 'k3k-system/k3k',
} as const;

export interface PortRange {
  first: number;
  last: number;
}

export interface NamespacedName {
  namespace: string;
  name: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** `30000-32767` → {first: 30000, last: 32767}; anything else → undefined. */
export function parsePortRange(text: string): PortRange | undefined {
  const match = /^(\d{1,5})-(\d{1,5})$/.exec(text.trim());
  if (match === null) return undefined;
  const first = Number(match[1]);
  const last = Number(match[2]);
  if (first < 1 || last > 65535 || first > last) return undefined;
  return { first, last };
}

/** `<namespace>/<name>` split at its slash; for defaults, which are known to be well formed. */
export function splitNamespacedName(text: string): NamespacedName {
  const [namespace = '', name = ''] = text.split('/');
  return { namespace, name };
}

export const DEFAULT_K3K_CONTROLLER = splitNamespacedName(SHARED_DEFAULTS.KUBECELL_K3K_CONTROLLER);

export class EnvReader {
  readonly #env: NodeJS.ProcessEnv;
  readonly #problems: string[] = [];

  constructor(env: NodeJS.ProcessEnv) {
    this.#env = env;
  }

  /** The trimmed value, or undefined when unset or blank. */
  optional(name: string): string | undefined {
    const value = this.#env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  }

  text(name: string, fallback: string): string {
    return this.optional(name) ?? fallback;
  }

  /** A whole number of seconds in [min, max]. */
  seconds(name: string, fallback: number, min: number, max: number): number {
    const text = this.text(name, String(fallback));
    const value = /^\d+$/.test(text) ? Number(text) : NaN;
    if (value >= min && value <= max) return value;
    this.#problems.push(
      `${name}=${JSON.stringify(text)} is not a duration; set it to a whole number of seconds from ` +
        `${min} to ${max} (default ${fallback})`,
    );
    return fallback;
  }

  /** A limit on things in flight: a whole number in [0, max], 0 meaning no limit. */
  limit(name: string, fallback: number, max: number): number {
    const text = this.text(name, String(fallback));
    const value = /^\d+$/.test(text) ? Number(text) : NaN;
    if (value >= 0 && value <= max) return value;
    this.#problems.push(
      `${name}=${JSON.stringify(text)} is not a limit; set it to an integer from 0 (no limit) to ` +
        `${max} (default ${fallback})`,
    );
    return fallback;
  }

  /** The controller namespace, where Cells live. */
  controllerNamespace(): string {
    const name = 'KUBECELL_CONTROLLER_NAMESPACE';
    const fallback = SHARED_DEFAULTS[name];
    const value = this.text(name, fallback);
    if (DNS_LABEL.test(value)) return value;
    this.#problems.push(
      `${name}=${JSON.stringify(value)} is not a namespace name; set it to a DNS label such as ` +
        `${fallback} (the default)`,
    );
    return fallback;
  }

  /** The apiserver's --service-node-port-range. */
  nodePortRange(): PortRange {
    const name = 'KUBECELL_NODEPORT_RANGE';
    const fallback = SHARED_DEFAULTS[name];
    const text = this.text(name, fallback);
    const range = parsePortRange(text);
    if (range) return range;
    this.#problems.push(
      `${name}=${JSON.stringify(text)} is not a port range; set it to the apiserver's ` +
        `--service-node-port-range, FIRST-LAST with 1 <= FIRST <= LAST <= 65535 (default ${fallback})`,
    );
    return parsePortRange(fallback) as PortRange;
  }

  /** The k3k controller's Deployment, `<namespace>/<name>`. */
  k3kController(): NamespacedName {
    return this.namespacedName('KUBECELL_K3K_CONTROLLER', DEFAULT_K3K_CONTROLLER);
  }

  /** `<namespace>/<name>` of an object, e.g. a Deployment. */
  namespacedName(name: string, fallback: NamespacedName): NamespacedName {
    const text = this.optional(name);
    if (text === undefined) return fallback;
    const [namespace, objectName, extra] = text.split('/');
    if (namespace && objectName && extra === undefined && DNS_LABEL.test(namespace)) {
      return { namespace, name: objectName };
    }
    this.#problems.push(
      `${name}=${JSON.stringify(text)} is not <namespace>/<name>; set it like ` +
        `${fallback.namespace}/${fallback.name} (the default)`,
    );
    return fallback;
  }

  /** Records a problem found by a caller's own check. */
  problem(message: string): void {
    this.#problems.push(message);
  }

  /** Throws a ConfigError listing every problem, if there is any. */
  finish(): void {
    if (this.#problems.length > 0) throw new ConfigError([...this.#problems]);
  }
}
