/**
 * Where the Cell controller looks for the provider baseline. Every platform installs k3k, its
 * CNI and TopoLVM a little differently, so each name is configurable; the defaults are the
 * upstream charts' own.
 */
export interface NamespacedName {
  namespace: string;
  name: string;
}

export interface CellControllerConfig {
  /** The namespace Cells live in. */
  controllerNamespace: string;
  k3kNamespace: string;
  k3kController: NamespacedName;
  k3kCRDs: string[];
  cniDaemonSet: NamespacedName;
  topolvmNodeDaemonSet: NamespacedName;
  /** Size of the cluster's NodePort range (service-node-port-range), 30000-32767 by default. */
  nodePortRangeSize: number;
  /** Longest a Cell's status may go without a refresh (Metacontroller resync). */
  resyncSeconds: number;
}

export const DEFAULT_CELL_CONFIG: CellControllerConfig = {
  controllerNamespace: 'kubecell-system',
  k3kNamespace: 'k3k-system',
  k3kController: { namespace: 'k3k-system', name: 'k3k' },
  k3kCRDs: ['clusters.k3k.io', 'virtualclusterpolicies.k3k.io'],
  cniDaemonSet: { namespace: 'kube-flannel', name: 'kube-flannel-ds' },
  topolvmNodeDaemonSet: { namespace: 'topolvm-system', name: 'topolvm-node' },
  nodePortRangeSize: 32767 - 30000 + 1,
  resyncSeconds: 30,
};

function namespacedName(value: string, variable: string): NamespacedName {
  const [namespace, name, extra] = value.split('/');
  if (!namespace || !name || extra !== undefined) {
    throw new Error(
      `${variable}="${value}": expected <namespace>/<name>, e.g. kube-system/calico-node`,
    );
  }
  return { namespace, name };
}

function portRangeSize(value: string, variable: string): number {
  const match = /^(\d+)-(\d+)$/.exec(value);
  const low = Number(match?.[1]);
  const high = Number(match?.[2]);
  if (!match || !(low > 0 && high >= low && high <= 65535)) {
    throw new Error(`${variable}="${value}": expected <low>-<high>, e.g. 30000-32767`);
  }
  return high - low + 1;
}

/** Reads overrides from the environment; an unusable value names the variable and the fix. */
export function cellConfigFromEnv(env: NodeJS.ProcessEnv): CellControllerConfig {
  const config = structuredClone(DEFAULT_CELL_CONFIG);
  if (env['KUBECELL_CONTROLLER_NAMESPACE'])
    config.controllerNamespace = env['KUBECELL_CONTROLLER_NAMESPACE'];
  if (env['KUBECELL_K3K_CONTROLLER']) {
    config.k3kController = namespacedName(
      env['KUBECELL_K3K_CONTROLLER'],
      'KUBECELL_K3K_CONTROLLER',
    );
    config.k3kNamespace = config.k3kController.namespace;
  }
  if (env['KUBECELL_CNI_DAEMONSET']) {
    config.cniDaemonSet = namespacedName(env['KUBECELL_CNI_DAEMONSET'], 'KUBECELL_CNI_DAEMONSET');
  }
  if (env['KUBECELL_TOPOLVM_DAEMONSET']) {
    config.topolvmNodeDaemonSet = namespacedName(
      env['KUBECELL_TOPOLVM_DAEMONSET'],
      'KUBECELL_TOPOLVM_DAEMONSET',
    );
  }
  if (env['KUBECELL_NODEPORT_RANGE']) {
    config.nodePortRangeSize = portRangeSize(
      env['KUBECELL_NODEPORT_RANGE'],
      'KUBECELL_NODEPORT_RANGE',
    );
  }
  return config;
}
