/**
 * Settings of the kubecell-virtualcluster controller, read once at startup from the
 * environment.
 *
 * | Variable                                 | Default           | Meaning                                                   |
 * |------------------------------------------|-------------------|-----------------------------------------------------------|
 * | `KUBECELL_CONTROLLER_NAMESPACE`          | `kubecell-system` | The KubeCell controller namespace, where Cells live       |
 * | `KUBECELL_NODEPORT_RANGE`                | `30000-32767`     | The apiserver's `--service-node-port-range` (FIRST-LAST)  |
 * | `KUBECELL_VIRTUALCLUSTER_RESYNC_SECONDS` | `30`              | Resync while Pending, Provisioning, Degraded or Deleting (1 to 3600) |
 * | `KUBECELL_SEALING_KEY_FILE`              | (unset)           | The hub's private sealing key (PEM): opens the kubeconfigs of VirtualClusters on `ManifestWork` Cells |
 * | `KUBECELL_SEALING_PREVIOUS_KEY_FILE`     | (unset)           | During a rotation, the key it replaces: still opens what was sealed for it |
 *
 * The first two are shared with the Cell and plan controllers and the admission webhook (same
 * names, same defaults). The sealing keys are read by hooks/remote/sealing-keys.ts
 * (`loadSealingKeysFromEnv`); without them a VirtualCluster on a `delivery: ManifestWork` Cell
 * stays Provisioning (KubeconfigPublished False, SealingKeyMissing). Invalid values throw a `ConfigError` (the hook server's) listing
 * every problem, so the server refuses to start rather than run with a guess.
 */
import { ConfigError, EnvReader, SHARED_DEFAULTS, type PortRange } from '../config/env-reader.js';
import { DEFAULT_INVENTORY_MAX_AGE_SECONDS } from '../feasibility/evaluate.js';
import { loadSealingKeysFromEnv, type SealingKeys } from '../remote/sealing-keys.js';

export interface VirtualClusterConfig {
  /** The namespace Cells live in. */
  cellNamespace: string;
  /** The cluster's NodePort range, for the NodePorts feasibility check. */
  nodePortRange: PortRange;
  /** Seconds between resyncs while the VirtualCluster is not settled. */
  resyncSeconds: number;
  /** How old a Cell's inventory may be for the feasibility evaluation to trust it. */
  inventoryMaxAgeSeconds: number;
  /** The hub's private sealing keys; undefined when KUBECELL_SEALING_KEY_FILE is unset. */
  sealingKeys?: SealingKeys;
}

const DEFAULT_RESYNC_SECONDS = 30;
const MAX_RESYNC_SECONDS = 3600;

/** The variables this controller reads and their defaults, as documented. */
export const VIRTUALCLUSTER_DEFAULTS = {
  KUBECELL_CONTROLLER_NAMESPACE: SHARED_DEFAULTS.KUBECELL_CONTROLLER_NAMESPACE,
  KUBECELL_NODEPORT_RANGE: SHARED_DEFAULTS.KUBECELL_NODEPORT_RANGE,
  KUBECELL_VIRTUALCLUSTER_RESYNC_SECONDS: String(DEFAULT_RESYNC_SECONDS),
} as const;

/** Reads the settings; throws a `ConfigError` listing every invalid variable. */
export function loadVirtualClusterConfig(
  env: NodeJS.ProcessEnv = process.env,
): VirtualClusterConfig {
  const reader = new EnvReader(env);
  const config = {
    cellNamespace: reader.controllerNamespace(),
    nodePortRange: reader.nodePortRange(),
    resyncSeconds: reader.seconds(
      'KUBECELL_VIRTUALCLUSTER_RESYNC_SECONDS',
      DEFAULT_RESYNC_SECONDS,
      1,
      MAX_RESYNC_SECONDS,
    ),
    inventoryMaxAgeSeconds: DEFAULT_INVENTORY_MAX_AGE_SECONDS,
  };
  let sealingKeys: SealingKeys | undefined;
  try {
    sealingKeys = loadSealingKeysFromEnv(env);
  } catch (error) {
    // One ConfigError lists every problem, the key file's included.
    if (!(error instanceof ConfigError)) throw error;
    error.problems.forEach((problem) => reader.problem(problem));
  }
  reader.finish();
  return sealingKeys === undefined ? config : { ...config, sealingKeys };
}

/**
 * The settings with no variable set: the shared defaults of hooks/config/env-reader.ts
 * (`SHARED_DEFAULTS`, e.g. the NodePort range) and this controller's own.
 */
export const DEFAULT_VIRTUALCLUSTER_CONFIG: Readonly<VirtualClusterConfig> = Object.freeze(
  loadVirtualClusterConfig({}),
);
