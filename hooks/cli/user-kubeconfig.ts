/**
 * The user's own kubeconfig, found as kubectl finds it, and the context `kubecell kubeconfig`
 * reads with: the current one, or the one --context names.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { SERVICE_ACCOUNT_DIR, type LoadedKubeConfig } from '../kube/kube-config.js';
import { UsageError } from './io.js';
import { Refusal, type Target } from './refusal.js';

/**
 * The user's kubeconfig, as kubectl and client-node's `loadFromDefault` find it, reading `env`
 * rather than process.env: --kubeconfig; else every existing file of $KUBECONFIG, merged (the
 * first file's current context wins, as with kubectl); else ~/.kube/config; else the in-cluster
 * ServiceAccount. Unlike `loadFromDefault`, finding nothing is an error, not a silent
 * `http://localhost:8080`.
 */
export function loadUserKubeConfig(
  env: NodeJS.ProcessEnv,
  explicitFile?: string,
): LoadedKubeConfig {
  const kubeConfig = new KubeConfig();
  if (explicitFile !== undefined) {
    if (!existsSync(explicitFile)) {
      throw new UsageError(`cannot read ${explicitFile}: ENOENT`, { showUsage: false });
    }
    loadFile(explicitFile, kubeConfig);
    return { kubeConfig, source: `--kubeconfig ${explicitFile}` };
  }
  if (env.KUBECONFIG) return loadKubeconfigVariable(env.KUBECONFIG);
  const home = env.HOME || env.USERPROFILE || homedir();
  const file = join(home, '.kube', 'config');
  if (existsSync(file)) {
    loadFile(file, kubeConfig);
    return { kubeConfig, source: file };
  }
  if (env.KUBERNETES_SERVICE_HOST && existsSync(join(SERVICE_ACCOUNT_DIR, 'token'))) {
    kubeConfig.loadFromCluster();
    return { kubeConfig, source: 'the in-cluster ServiceAccount' };
  }
  throw new Refusal(
    `no kubeconfig: KUBECONFIG is not set and ${file} does not exist; ` +
      'pass --kubeconfig <file> or set KUBECONFIG',
  );
}

function loadFile(file: string, into: KubeConfig): void {
  try {
    into.loadFromFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Refusal(
      `cannot read the kubeconfig ${file}: ${code ?? (err as Error).message.split('\n')[0]}`,
    );
  }
}

/** Every existing file of $KUBECONFIG, merged as kubectl merges them. */
function loadKubeconfigVariable(variable: string): LoadedKubeConfig {
  const files = variable.split(delimiter).filter((file) => file !== '');
  const present = files.filter((file) => existsSync(file));
  if (present.length === 0) {
    throw new Refusal(`KUBECONFIG=${variable} names no file that exists`);
  }
  const kubeConfig = new KubeConfig();
  loadFile(present[0] as string, kubeConfig);
  for (const file of present.slice(1)) {
    const more = new KubeConfig();
    loadFile(file, more);
    mergeInto(kubeConfig, more);
  }
  return { kubeConfig, source: `KUBECONFIG=${variable}` };
}

/**
 * As kubectl merges: the first file that sets a value wins, duplicates are no error
 * (client-node's mergeConfig throws on them).
 */
function mergeInto(kubeConfig: KubeConfig, more: KubeConfig): void {
  for (const cluster of more.clusters) {
    if (kubeConfig.getCluster(cluster.name) === null) kubeConfig.addCluster(cluster);
  }
  for (const user of more.users) {
    if (kubeConfig.getUser(user.name) === null) kubeConfig.addUser(user);
  }
  for (const context of more.contexts) {
    if (kubeConfig.getContextObject(context.name) === null) kubeConfig.addContext(context);
  }
  if (!kubeConfig.getCurrentContext() && more.getCurrentContext()) {
    kubeConfig.setCurrentContext(more.getCurrentContext());
  }
}

/**
 * Switches to `--context` when given (a usage error when the kubeconfig has no such context)
 * and says where the command will read: the context's namespace unless `namespace` is given.
 */
export function selectTarget(
  { kubeConfig, source }: LoadedKubeConfig,
  options: { context?: string; namespace?: string },
): Target {
  if (options.context !== undefined) {
    if (kubeConfig.getContextObject(options.context) === null) {
      const known = kubeConfig.getContexts().map((context) => context.name);
      throw new UsageError(
        `no context ${JSON.stringify(options.context)} in ${source}` +
          (known.length === 0 ? '' : ` (it has ${known.join(', ')})`),
        { showUsage: false },
      );
    }
    kubeConfig.setCurrentContext(options.context);
  }
  const context = kubeConfig.getCurrentContext();
  const cluster = kubeConfig.getCurrentCluster();
  if (!context || kubeConfig.getContextObject(context) === null || cluster === null) {
    throw new Refusal(
      `${source} has no usable current context (${JSON.stringify(context ?? '')}): pick one ` +
        'with --context or kubectl config use-context',
    );
  }
  return {
    namespace: options.namespace ?? (kubeConfig.getContextObject(context)?.namespace || 'default'),
    context,
    server: cluster.server,
    user: kubeConfig.getCurrentUser()?.name ?? '(none)',
  };
}
