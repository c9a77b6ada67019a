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
import { EnvReader, type PortRange } from '../config/env-reader.js';

export interface PlanConfig {
  /** Seconds from evaluation to expiry. */
  ttlSeconds: number;
  /** The namespace Cells live in. */
  cellNamespace: string;
  /** The cluster's NodePort range. */
  nodePortRange: PortRange;
}

const DEFAULT_TTL_SECONDS = 900;
/** A year: a longer TTL is a typo, not a policy. */
const MAX_TTL_SECONDS = 365 * 24 * 3600;

/** Reads the settings; throws a `ConfigError` listing every invalid variable. */
export function loadPlanConfig(env: NodeJS.ProcessEnv = process.env): PlanConfig {
  const reader = new EnvReader(env);
  const config = {
    ttlSeconds: reader.seconds(
      'KUBECELL_PLAN_TTL_SECONDS',
      DEFAULT_TTL_SECONDS,
      1,
      MAX_TTL_SECONDS,
    ),
    cellNamespace: reader.controllerNamespace(),
    nodePortRange: reader.nodePortRange(),
  };
  reader.finish();
  return config;
}
