/**
 * Settings of the kubecell-delivery controller, read once at startup from the environment.
 *
 * | Variable                        | Default                 | Meaning                                                    |
 * |---------------------------------|-------------------------|------------------------------------------------------------|
 * | `KUBECELL_CONTROLLER_NAMESPACE` | `kubecell-system`       | Where Cells live                                           |
 * | `KUBECELL_AGENT_IMAGE`          | `kubecell-hooks:0.1.0`  | The cell agent's image (the hook server's own image)       |
 * | `KUBECELL_SEALING_KEY_FILE`     | unset                   | The hub's private sealing key; its public half goes to the agents |
 *
 * The provider baseline's names (`KUBECELL_K3K_CONTROLLER`, `KUBECELL_CNI_DAEMONSET`,
 * `KUBECELL_TOPOLVM_DAEMONSET`) are the Cell controller's (hooks/cell/config.ts): the agent's
 * Deployment passes the hub's values (or their defaults) on, so that a remote Cell checks its
 * baseline where a local one does, and where the NetworkPolicies expect k3k.
 *
 * The host-namespace settings (`KUBECELL_PSA_LEVEL`, `KUBECELL_HOST_EGRESS_CIDRS`,
 * `KUBECELL_API_CLIENT_CIDRS`, `KUBECELL_K3K_CONTROLLER`) are the host-namespace controller's own
 * (hooks/host-namespace/config.ts): a remote host namespace gets the same baseline as a local one.
 *
 * Without `KUBECELL_SEALING_KEY_FILE` the agent work carries no public key, so no agent can seal
 * a kubeconfig and no VirtualCluster on a ManifestWork Cell gets one (the agent's volume is
 * optional: it still reports its Cells).
 */
import { ConfigError, EnvReader } from '../config/env-reader.js';
import {
  DEFAULT_HOST_NAMESPACE_CONFIG,
  loadHostNamespaceConfig,
  type HostNamespaceConfig,
} from '../host-namespace/config.js';
import { DEFAULT_CELL_CONFIG, loadCellConfig, type CellControllerConfig } from '../cell/config.js';
import { loadSealingKeysFromEnv, publicKeyPemOf } from '../remote/sealing-keys.js';

/**
 * Where the agent looks for the provider baseline: the hub's Cell controller settings (k3k's CRD
 * names are fixed, not a setting); the agent's ClusterRole names these objects too.
 */
export type ProviderBaseline = Pick<
  CellControllerConfig,
  'k3kController' | 'cniDaemonSet' | 'topolvmNodeDaemonSet' | 'k3kCRDs'
>;

function providerBaseline(cell: CellControllerConfig): ProviderBaseline {
  return {
    k3kController: { ...cell.k3kController },
    cniDaemonSet: { ...cell.cniDaemonSet },
    topolvmNodeDaemonSet: { ...cell.topolvmNodeDaemonSet },
    k3kCRDs: [...cell.k3kCRDs],
  };
}

export interface DeliveryConfig {
  /** The namespace Cells live in. */
  controllerNamespace: string;
  /** The image of the cell agent's Deployment. */
  agentImage: string;
  /** The isolation baseline of host namespaces, as the host-namespace controller applies it. */
  hostNamespace: HostNamespaceConfig;
  /** The hub's public sealing key (SPKI PEM), when a private key is configured. */
  publicKeyPem?: string;
  /** The provider baseline's names the agent checks, as the hub's Cell controller has them. */
  providerBaseline: ProviderBaseline;
}

/**
 * The image manifests/kustomization.yaml installs the hook server with (`images`): the agent
 * runs the same image, as `kubecell agent`.
 */
export const DEFAULT_AGENT_IMAGE = 'kubecell-hooks:0.1.0';

export const DEFAULT_DELIVERY_CONFIG: Readonly<DeliveryConfig> = Object.freeze({
  controllerNamespace: 'kubecell-system',
  agentImage: DEFAULT_AGENT_IMAGE,
  hostNamespace: DEFAULT_HOST_NAMESPACE_CONFIG,
  providerBaseline: providerBaseline(DEFAULT_CELL_CONFIG),
});

/** An image reference: no whitespace, no scheme, at most 512 characters. */
const IMAGE = /^[A-Za-z0-9][A-Za-z0-9._\-/:@]{0,511}$/;

/** Reads the settings; throws a `ConfigError` listing every invalid variable. */
export function loadDeliveryConfig(env: NodeJS.ProcessEnv = process.env): DeliveryConfig {
  const reader = new EnvReader(env);
  const agentImage = reader.text('KUBECELL_AGENT_IMAGE', DEFAULT_AGENT_IMAGE);
  if (!IMAGE.test(agentImage) || agentImage.includes('://')) {
    reader.problem(
      `KUBECELL_AGENT_IMAGE=${JSON.stringify(agentImage)} is not an image reference; set it to ` +
        `the hook server's image, such as ${DEFAULT_AGENT_IMAGE} (the default)`,
    );
  }
  const controllerNamespace = reader.controllerNamespace();
  const hostNamespace = collect(reader, () => loadHostNamespaceConfig(env));
  const keys = collect(reader, () => loadSealingKeysFromEnv(env));
  const cell = collect(reader, () => loadCellConfig(env));
  finishOnce(reader);
  return {
    controllerNamespace,
    agentImage,
    hostNamespace: hostNamespace ?? DEFAULT_HOST_NAMESPACE_CONFIG,
    providerBaseline: providerBaseline(cell ?? DEFAULT_CELL_CONFIG),
    ...(keys === undefined ? {} : { publicKeyPem: publicKeyPemOf(keys.current) }),
  };
}

/**
 * `reader.finish()`, each problem listed once: the loaders read some variables in common
 * (`KUBECELL_CONTROLLER_NAMESPACE`, `KUBECELL_K3K_CONTROLLER`) and word their problems alike.
 */
function finishOnce(reader: EnvReader): void {
  try {
    reader.finish();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ConfigError([...new Set(error.problems)]);
  }
}

/** Runs another loader, its problems added to `reader`'s so that one error lists them all. */
function collect<T>(reader: EnvReader, load: () => T): T | undefined {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) reader.problem(problem);
    return undefined;
  }
}
