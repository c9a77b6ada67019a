/**
 * Settings of the kubecell-plan controller, read once at startup from the environment.
 *
 * | Variable                        | Default           | Meaning                                                |
 * |---------------------------------|-------------------|--------------------------------------------------------|
 * | `KUBECELL_PLAN_TTL_SECONDS`     | `900`             | Seconds a decision stays current: `expiresAt` = `evaluatedAt` + this (1 to 31536000) |
 * | `KUBECELL_CONTROLLER_NAMESPACE` | `kubecell-system` | The KubeCell controller namespace, where Cells live    |
 * | `KUBECELL_NODEPORT_RANGE`       | `30000-32767`     | The apiserver's `--service-node-port-range` (LOW-HIGH) |
 *
 * The last two are shared with the Cell controller and the admission webhook (same names,
 * same defaults). Invalid values throw a `ConfigError` (the hook server's), listing every
 * problem.
 */
import { DEFAULT_NODE_PORT_RANGE, type NodePortRange } from '../feasibility/evaluate.js';
import { ConfigError } from '../server/config.js';

export interface PlanConfig {
  /** Seconds from evaluation to expiry. */
  ttlSeconds: number;
  /** The namespace Cells live in. */
  cellNamespace: string;
  /** The cluster's NodePort range. */
  nodePortRange: NodePortRange;
}

export const PLAN_DEFAULTS = {
  KUBECELL_PLAN_TTL_SECONDS: '900',
  KUBECELL_CONTROLLER_NAMESPACE: 'kubecell-system',
  KUBECELL_NODEPORT_RANGE: `${DEFAULT_NODE_PORT_RANGE.first}-${DEFAULT_NODE_PORT_RANGE.last}`,
} as const;

/** A year: a longer TTL is a typo, not a policy. */
const MAX_TTL_SECONDS = 365 * 24 * 3600;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Reads the settings; throws a `ConfigError` listing every invalid variable. */
export function loadPlanConfig(env: NodeJS.ProcessEnv = process.env): PlanConfig {
  const problems: string[] = [];
  const read = (name: keyof typeof PLAN_DEFAULTS): string => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? PLAN_DEFAULTS[name] : value;
  };

  const ttlText = read('KUBECELL_PLAN_TTL_SECONDS');
  const ttlSeconds = /^\d+$/.test(ttlText) ? Number(ttlText) : NaN;
  if (!(ttlSeconds >= 1 && ttlSeconds <= MAX_TTL_SECONDS)) {
    problems.push(
      `KUBECELL_PLAN_TTL_SECONDS=${JSON.stringify(ttlText)} is not a duration; set it to a whole number ` +
        `of seconds from 1 to ${MAX_TTL_SECONDS} (default ${PLAN_DEFAULTS.KUBECELL_PLAN_TTL_SECONDS})`,
    );
  }

  const cellNamespace = read('KUBECELL_CONTROLLER_NAMESPACE');
  if (!DNS_LABEL.test(cellNamespace)) {
    problems.push(
      `KUBECELL_CONTROLLER_NAMESPACE=${JSON.stringify(cellNamespace)} is not a namespace name; set it to a ` +
        `DNS label such as ${PLAN_DEFAULTS.KUBECELL_CONTROLLER_NAMESPACE} (the default)`,
    );
  }

  const rangeText = read('KUBECELL_NODEPORT_RANGE');
  const nodePortRange = parsePortRange(rangeText);
  if (nodePortRange === undefined) {
    problems.push(
      `KUBECELL_NODEPORT_RANGE=${JSON.stringify(rangeText)} is not a port range; set it to the ` +
        `apiserver's --service-node-port-range, FIRST-LAST with 1 <= FIRST <= LAST <= 65535 ` +
        `(default ${PLAN_DEFAULTS.KUBECELL_NODEPORT_RANGE})`,
    );
  }

  if (problems.length > 0 || nodePortRange === undefined) throw new ConfigError(problems);
  return { ttlSeconds, cellNamespace, nodePortRange };
}

/** `30000-32767` → {first: 30000, last: 32767}; anything else → undefined. */
export function parsePortRange(text: string): NodePortRange | undefined {
  const match = /^(\d{1,5})-(\d{1,5})$/.exec(text.trim());
  if (match === null) return undefined;
  const first = Number(match[1]);
  const last = Number(match[2]);
  if (first < 1 || last > 65535 || first > last) return undefined;
  return { first, last };
}
