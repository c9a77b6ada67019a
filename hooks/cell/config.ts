/**
 * Where the Cell controller looks for the provider baseline. Every platform installs k3k, its
 * CNI and TopoLVM a little differently, so each name is configurable; the defaults are the
 * upstream charts' own.
 */
import {
  DEFAULT_K3K_CONTROLLER,
  EnvReader,
  SHARED_DEFAULTS,
  splitNamespacedName,
  type NamespacedName,
} from '../config/env-reader.js';

export type { NamespacedName };

export interface CellControllerConfig {
  /** The namespace Cells live in. */
  controllerNamespace: string;
  k3kNamespace: string;
  k3kController: NamespacedName;
  k3kCRDs: string[];
  cniDaemonSet: NamespacedName;
  topolvmNodeDaemonSet: NamespacedName;
  /**
   * Longest a Cell goes without a sync: metacontroller/cell.yaml's resyncPeriodSeconds, which
   * must be the same: 1800 s, a safety net only (issue 25; it was 60 s). Each sync asks for the
   * next one (resyncAfterSeconds) when something judged against the clock falls due: the status
   * heartbeat (publication.ts, 300 s after the last write) or the end of a hold, the lease's
   * expiry (liveness.ts, never sooner than 60 s while renewals arrive on time) and a remote
   * Cell's agent report age limit (assess-report.ts). Every sync asks for one at most 300 s
   * away, so this period brings a sync only if Metacontroller lost what was asked. 1800 s is
   * Metacontroller's default --cache-flush-interval, whose resync reaches every parent anyway
   * (v4.17.2 pkg/dynamic/informer/informer.go), so it starts no timer of its own.
   */
  resyncSeconds: number;
}

/** The variables only the Cell controller reads, with their defaults (`<namespace>/<name>`). */
export const CELL_DEFAULTS = {
  KUBECELL_CNI_DAEMONSET: 'kube-flannel/kube-flannel-ds',
  KUBECELL_TOPOLVM_DAEMONSET: 'topolvm-system/topolvm-node',
} as const;

export const DEFAULT_CELL_CONFIG: CellControllerConfig = {
  controllerNamespace: SHARED_DEFAULTS.KUBECELL_CONTROLLER_NAMESPACE,
  k3kNamespace: DEFAULT_K3K_CONTROLLER.namespace,
  k3kController: DEFAULT_K3K_CONTROLLER,
  k3kCRDs: ['clusters.k3k.io', 'virtualclusterpolicies.k3k.io'],
  cniDaemonSet: splitNamespacedName(CELL_DEFAULTS.KUBECELL_CNI_DAEMONSET),
  topolvmNodeDaemonSet: splitNamespacedName(CELL_DEFAULTS.KUBECELL_TOPOLVM_DAEMONSET),
  resyncSeconds: 1800,
};

/** Reads overrides from the environment; throws a ConfigError naming every bad variable. */
export function loadCellConfig(env: NodeJS.ProcessEnv): CellControllerConfig {
  const reader = new EnvReader(env);
  const defaults = DEFAULT_CELL_CONFIG;
  const k3kController = reader.k3kController();
  const config: CellControllerConfig = {
    ...structuredClone(defaults),
    controllerNamespace: reader.controllerNamespace(),
    k3kNamespace: k3kController.namespace,
    k3kController,
    cniDaemonSet: reader.namespacedName('KUBECELL_CNI_DAEMONSET', defaults.cniDaemonSet),
    topolvmNodeDaemonSet: reader.namespacedName(
      'KUBECELL_TOPOLVM_DAEMONSET',
      defaults.topolvmNodeDaemonSet,
    ),
  };
  reader.finish();
  return config;
}
