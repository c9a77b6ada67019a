/**
 * Which Kubernetes API credentials the webhook's lookups use, loaded with
 * @kubernetes/client-node (1.x: the 2.x line needs Node.js 22.19 or later, KubeCell supports 20).
 *
 * The order is client-node's `loadFromDefault` with the in-cluster ServiceAccount moved ahead of
 * `~/.kube/config`: a `KUBECONFIG` variable always wins (its files merged as kubectl does), then
 * the ServiceAccount when running in a Pod, then `~/.kube/config`. `loadFromDefault` alone would
 * prefer a `~/.kube/config` in the image to the Pod's own ServiceAccount, and would fall back to
 * an unauthenticated `http://localhost:8080` when there is nothing, where this throws.
 */
import { KubeConfig, findHomeDir } from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface LoadedKubeConfig {
  kubeConfig: KubeConfig;
  /** Where the credentials came from, for messages. */
  source: string;
}

/**
 * The credentials of the hook server (see above). Reads `process.env`, as client-node does;
 * `serviceAccountPrefix` is prepended to SERVICE_ACCOUNT_DIR (client-node's `loadFromCluster`).
 */
export function loadKubeConfig(serviceAccountPrefix = ''): LoadedKubeConfig {
  const kubeConfig = new KubeConfig();
  const env = process.env;
  let source: string;
  const serviceAccount = `${serviceAccountPrefix}${SERVICE_ACCOUNT_DIR}`;
  if (env.KUBECONFIG) {
    kubeConfig.loadFromDefault();
    source = `KUBECONFIG ${env.KUBECONFIG}`;
  } else if (env.KUBERNETES_SERVICE_HOST && existsSync(join(serviceAccount, 'token'))) {
    kubeConfig.loadFromCluster(serviceAccountPrefix);
    source = `in-cluster ServiceAccount (${serviceAccount})`;
  } else {
    const home = findHomeDir();
    const file = home === null ? undefined : join(home, '.kube', 'config');
    if (file === undefined || !existsSync(file)) {
      throw new Error(
        'no Kubernetes API credentials for the webhook lookups: KUBECONFIG unset, not in a Pod ' +
          `with a ServiceAccount, and no ${file ?? '~/.kube/config'}`,
      );
    }
    kubeConfig.loadFromFile(file);
    source = `kubeconfig ${file}`;
  }
  if (kubeConfig.getCurrentCluster() === null) {
    throw new Error(
      `${source}: no cluster for the current context ${JSON.stringify(kubeConfig.getCurrentContext())}`,
    );
  }
  return { kubeConfig, source };
}
