/**
 * Settings of the kubecell-virtualcluster controller, read once at startup from the
 * environment.
 *
 * | Variable                                 | Default           | Meaning                                                   |
 * |------------------------------------------|-------------------|-----------------------------------------------------------|
 * | `KUBECELL_CONTROLLER_NAMESPACE`          | `kubecell-system` | The KubeCell controller namespace, where Cells live       |
 * | `KUBECELL_NODEPORT_RANGE`                | `30000-32767`     | The apiserver's `--service-node-port-range` (FIRST-LAST)  |
 * | `KUBECELL_VIRTUALCLUSTER_RESYNC_SECONDS` | `30`              | Resync while Pending, Provisioning, Degraded or Deleting (1 to 3600) |
 *
 * The first two are shared with the Cell and plan controllers and the admission webhook (same
 * names, same defaults). Invalid values throw a `ConfigError` (the hook server's) listing
 * every problem, so the server refuses to start rather than run with a guess.
 */
import {
  DEFAULT_INVENTORY_MAX_AGE_SECONDS,
  DEFAULT_NODE_PORT_RANGE,
  type NodePortRange,
} from '../feasibility/evaluate.js';
import { ConfigError } from '../server/config.js';

export interface VirtualClusterConfig {
  /** The namespace Cells live in. */
  cellNamespace: string;
  /** The cluster's NodePort range, for the NodePorts feasibility check. */
  nodePortRange: NodePortRange;
  /** Seconds between resyncs while the VirtualCluster is not settled. */
  resyncSeconds: number;
  /** How old a Cell's inventory may be for the feasibility evaluation to trust it. */
  inventoryMaxAgeSeconds: number;
}

export const VIRTUALCLUSTER_DEFAULTS = {
  KUBECELL_CONTROLLER_NAMESPACE: 'kubecell-system',
  KUBECELL_NODEPORT_RANGE: `${DEFAULT_NODE_PORT_RANGE.first}-${DEFAULT_NODE_PORT_RANGE.last}`,
  KUBECELL_VIRTUALCLUSTER_RESYNC_SECONDS: '30',
} as const;

export const DEFAULT_VIRTUALCLUSTER_CONFIG: Readonly<VirtualClusterConfig> = Object.freeze({
  cellNamespace: VIRTUALCLUSTER_DEFAULTS.KUBECELL_CONTROLLER_NAMESPACE,
  nodePortRange: DEFAULT_NODE_PORT_RANGE,
  resyncSeconds: 30,
  inventoryMaxAgeSeconds: DEFAULT_INVENTORY_MAX_AGE_SECONDS,
});

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const MAX_RESYNC_SECONDS = 3600;

/** Reads the settings; throws a `ConfigError` listing every invalid variable. */
export function loadVirtualClusterConfig(
  env: NodeJS.ProcessEnv = process.env,
): VirtualClusterConfig {
  const problems: string[] = [];
  const read = (name: keyof typeof VIRTUALCLUSTER_DEFAULTS): string => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? VIRTUALCLUSTER_DEFAULTS[name] : value;
  };

  const cellNamespace = read('KUBECELL_CONTROLLER_NAMESPACE');
  if (!DNS_LABEL.test(cellNamespace)) {
    problems.push(
      `KUBECELL_CONTROLLER_NAMESPACE=${JSON.stringify(cellNamespace)} is not a namespace name; set it ` +
        `to a DNS label such as ${VIRTUALCLUSTER_DEFAULTS.KUBECELL_CONTROLLER_NAMESPACE} (the default)`,
    );
  }

  const rangeText = read('KUBECELL_NODEPORT_RANGE');
  const nodePortRange = portRange(rangeText);
  if (nodePortRange === undefined) {
    problems.push(
      `KUBECELL_NODEPORT_RANGE=${JSON.stringify(rangeText)} is not a port range; set it to the ` +
        `apiserver's --service-node-port-range, FIRST-LAST with 1 <= FIRST <= LAST <= 65535 ` +
        `(default ${VIRTUALCLUSTER_DEFAULTS.KUBECELL_NODEPORT_RANGE})`,
    );
  }

  const resyncText = read('KUBECELL_VIRTUALCLUSTER_RESYNC_SECONDS');
  const resyncSeconds = /^\d+$/.test(resyncText) ? Number(resyncText) : NaN;
  if (!(resyncSeconds >= 1 && resyncSeconds <= MAX_RESYNC_SECONDS)) {
    problems.push(
      `KUBECELL_VIRTUALCLUSTER_RESYNC_SECONDS=${JSON.stringify(resyncText)} is not a duration; set ` +
        `it to a whole number of seconds from 1 to ${MAX_RESYNC_SECONDS} ` +
        `(default ${VIRTUALCLUSTER_DEFAULTS.KUBECELL_VIRTUALCLUSTER_RESYNC_SECONDS})`,
    );
  }

  if (problems.length > 0 || nodePortRange === undefined) throw new ConfigError(problems);
  return {
    cellNamespace,
    nodePortRange,
    resyncSeconds,
    inventoryMaxAgeSeconds: DEFAULT_INVENTORY_MAX_AGE_SECONDS,
  };
}

function portRange(text: string): NodePortRange | undefined {
  const match = /^(\d{1,5})-(\d{1,5})$/.exec(text);
  if (match === null) return undefined;
  const first = Number(match[1]);
  const last = Number(match[2]);
  if (first < 1 || last > 65535 || first > last) return undefined;
  return { first, last };
}
