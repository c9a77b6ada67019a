/**
 * `kubecell kubeconfig <name> [-n <namespace>] [-o <file>]`: the admin kubeconfig KubeCell
 * published for a Ready VirtualCluster, read with the user's own credentials.
 *
 * The Secret is the one the VirtualCluster's `status.credential.secretName` names (the
 * controller sets it once the kubeconfig is published, hooks/virtualcluster/sync.ts), key
 * `kubeconfig.yaml` (KUBECONFIG_KEY), and must be controlled by that VirtualCluster (its UID).
 * Nothing is guessed from the naming scheme.
 *
 * When it cannot, it says why, one paragraph on stderr, exit 1: the VirtualCluster does not
 * exist (or KubeCell is not installed), it is not Ready (its phase and Ready condition), the
 * kubeconfig is not published, or the user may not read it (the permission that is missing).
 * Exit 2 on bad arguments, an unreadable --kubeconfig or an unknown --context.
 */
import { ApiException, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, open, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';
import { GROUP, KINDS, VERSION } from '../api/kinds.js';
import { describeFailure } from '../kube/api-failure.js';
import { KUBECONFIG_KEY } from '../virtualcluster/constants.js';
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE, UsageError, splitFlag, type CliIo } from './io.js';

const PLURAL = KINDS.VirtualCluster.plural;
const VC_RESOURCE = `${PLURAL}.${GROUP}`;
const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export const KUBECONFIG_USAGE = `Usage:
  kubecell kubeconfig <name> [-n <namespace>] [-o <file>] [--context <context>]
                      [--kubeconfig <file>]

Prints the admin kubeconfig KubeCell published for VirtualCluster <name> once it is Ready: the
key ${KUBECONFIG_KEY} of the Secret its status.credential.secretName names, in the
VirtualCluster's namespace. Anyone who can read it is cluster-admin of the VirtualCluster.

Options:
  -n, --namespace <namespace>  the VirtualCluster's namespace (default: the namespace of the
                               context, else "default")
  -o, --output <file>          write the kubeconfig to <file>, mode 0600 (replacing it), and
                               print nothing on stdout
      --context <context>      use this context of your kubeconfig, not the current one
      --kubeconfig <file>      read this kubeconfig, not $KUBECONFIG or ~/.kube/config

Your own credentials are used: --kubeconfig, else $KUBECONFIG (its files merged as kubectl
does), else ~/.kube/config, else the in-cluster ServiceAccount. You need get on
${VC_RESOURCE} and on secrets in the namespace: the built-in admin and edit
ClusterRoles grant both once KubeCell is installed; view grants only the first
(docs/tenants.md).

Otherwise it says why not: the VirtualCluster does not exist, it is not Ready (its phase and
Ready condition are printed), its kubeconfig is not published yet, or you may not read it
(the missing permission is named).

Exit status: 0 printed (or written), 1 not possible (the message says why), 2 usage error
(bad arguments, unreadable --kubeconfig, unknown --context).
`;

interface Options {
  name: string;
  namespace?: string;
  output?: string;
  context?: string;
  kubeconfig?: string;
}

/** The arguments after `kubeconfig`. */
function parseArgs(args: readonly string[]): Options | 'help' {
  const names: string[] = [];
  const options: Omit<Options, 'name'> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--help' || arg === '-h') return 'help';
    if (!arg.startsWith('-') || arg === '-') {
      names.push(arg);
      continue;
    }
    const { flag, inline } = splitFlag(arg, ['-n', '-o']);
    const value = (): string => {
      if (inline !== undefined && inline !== '') return inline;
      const next = inline === undefined ? args[++i] : undefined;
      if (next === undefined || next === '') throw new UsageError(`${flag} needs a value`);
      return next;
    };
    if (flag === '-n' || flag === '--namespace') options.namespace = value();
    else if (flag === '-o' || flag === '--output') options.output = value();
    else if (flag === '--context') options.context = value();
    else if (flag === '--kubeconfig') options.kubeconfig = value();
    else throw new UsageError(`unknown argument ${JSON.stringify(arg)}`);
  }
  if (names.length === 0) throw new UsageError('kubeconfig needs the name of a VirtualCluster');
  if (names.length > 1) {
    throw new UsageError(
      `kubeconfig takes one VirtualCluster name, got ${names.map((n) => JSON.stringify(n)).join(', ')}`,
    );
  }
  return { name: names[0] as string, ...options };
}

/** Why the command cannot print the kubeconfig: printed as `kubecell: <message>`, exit 1. */
class Refusal extends Error {}

interface LoadedKubeConfig {
  kubeConfig: KubeConfig;
  /** Where the credentials came from, for messages. */
  source: string;
}

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
  const load = (file: string, into: KubeConfig): void => {
    try {
      into.loadFromFile(file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new Refusal(
        `cannot read the kubeconfig ${file}: ${code ?? (err as Error).message.split('\n')[0]}`,
      );
    }
  };
  if (explicitFile !== undefined) {
    if (!existsSync(explicitFile)) {
      throw new UsageError(`cannot read ${explicitFile}: ENOENT`, { showUsage: false });
    }
    load(explicitFile, kubeConfig);
    return { kubeConfig, source: `--kubeconfig ${explicitFile}` };
  }
  if (env.KUBECONFIG) {
    const files = env.KUBECONFIG.split(delimiter).filter((file) => file !== '');
    const present = files.filter((file) => existsSync(file));
    if (present.length === 0) {
      throw new Refusal(`KUBECONFIG=${env.KUBECONFIG} names no file that exists`);
    }
    load(present[0] as string, kubeConfig);
    for (const file of present.slice(1)) {
      const more = new KubeConfig();
      load(file, more);
      // As kubectl merges: the first file that sets a value wins, duplicates are no error
      // (client-node's mergeConfig throws on them).
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
    return { kubeConfig, source: `KUBECONFIG=${env.KUBECONFIG}` };
  }
  const home = env.HOME || env.USERPROFILE || homedir();
  const file = join(home, '.kube', 'config');
  if (existsSync(file)) {
    load(file, kubeConfig);
    return { kubeConfig, source: file };
  }
  if (env.KUBERNETES_SERVICE_HOST && existsSync(SERVICE_ACCOUNT_TOKEN)) {
    kubeConfig.loadFromCluster();
    return { kubeConfig, source: 'the in-cluster ServiceAccount' };
  }
  throw new Refusal(
    `no kubeconfig: KUBECONFIG is not set and ${file} does not exist; ` +
      'pass --kubeconfig <file> or set KUBECONFIG',
  );
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The apiserver's Status of a failed call, when its body is one. */
function statusOf(err: ApiException<unknown>): Json | undefined {
  let body: unknown = err.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body) as unknown;
    } catch {
      return undefined;
    }
  }
  return isObject(body) ? body : undefined;
}

interface Target {
  namespace: string;
  context: string;
  server: string;
  user: string;
}

/** `get <resource> in namespace <ns>` refused: who asked, what is missing, who grants it. */
function forbidden(err: ApiException<unknown>, resource: string, target: Target, why: string) {
  const message = typeof statusOf(err)?.message === 'string' ? String(statusOf(err)?.message) : '';
  return new Refusal(
    `forbidden: you may not get ${resource} in namespace ${target.namespace} ` +
      `(context ${target.context}, user ${target.user}). ${why}` +
      (message === '' ? '' : `\nThe API server said: ${message}`),
  );
}

/** A failure that is neither NotFound nor Forbidden: credentials, network, anything else. */
function otherFailure(err: unknown, what: string, target: Target): Refusal {
  if (err instanceof ApiException && err.code === 401) {
    return new Refusal(
      `${what}: the API server ${target.server} refused the credentials of user ${target.user} ` +
        `(context ${target.context}): 401 Unauthorized; log in again or check your kubeconfig`,
    );
  }
  if (!(err instanceof ApiException)) {
    return new Refusal(
      `${what}: cannot reach the API server ${target.server} (context ${target.context}): ` +
        describeFailure(err),
    );
  }
  return new Refusal(`${what} failed: ${describeFailure(err)}`);
}

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

interface VirtualClusterObject {
  metadata?: { name?: string; namespace?: string; uid?: string; deletionTimestamp?: string };
  status?: {
    phase?: string;
    conditions?: Condition[];
    credential?: { secretName?: string };
  };
}

interface SecretObject {
  metadata?: {
    ownerReferences?: Array<{
      apiVersion?: string;
      kind?: string;
      uid?: string;
      controller?: boolean;
    }>;
  };
  data?: Record<string, string>;
}

/** What to do about a VirtualCluster that is not Ready, by phase. */
function notReadyAdvice(phase: string | undefined, watch: string, secretName?: string): string {
  switch (phase) {
    case undefined:
      return `It has no status yet: KubeCell has not synced it. Check that Metacontroller and the KubeCell hook server run; watch it with: ${watch}`;
    case 'Pending':
      return `The feasibility evaluation has not accepted its placement: see status.feasibilityChecks (kubectl get ${VC_RESOURCE} -o yaml), or try a VirtualClusterPlan first (docs/tenants.md).`;
    case 'Provisioning':
      return `Its children are being created; try again when it is Ready: ${watch}`;
    case 'Degraded':
      return (
        'The cluster is left as it is, but KubeCell no longer vouches for it.' +
        (secretName === undefined
          ? ''
          : ` The kubeconfig published earlier is still in Secret ${secretName} (key ${KUBECONFIG_KEY}) if you need it now.`)
      );
    case 'Failed':
      return 'Failed is terminal: a platform operator must act (docs/concepts.md, VirtualCluster status).';
    case 'Deleting':
      return 'It is being deleted.';
    default:
      return watch;
  }
}

/** The published kubeconfig of a Ready VirtualCluster, or a Refusal saying why not. */
async function publishedKubeconfig(
  kubeConfig: KubeConfig,
  name: string,
  target: Target,
): Promise<string> {
  const { namespace } = target;
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const watch = `kubectl get ${VC_RESOURCE} ${name} -n ${namespace} -w`;

  let vc: VirtualClusterObject;
  try {
    vc = (await custom.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: PLURAL,
      name,
    })) as VirtualClusterObject;
  } catch (err) {
    if (err instanceof ApiException && err.code === 404) {
      const details = statusOf(err)?.details;
      if (isObject(details) && details.name === name) {
        throw new Refusal(
          `VirtualCluster ${namespace}/${name} not found (context ${target.context}); ` +
            `kubectl get ${VC_RESOURCE} -n ${namespace} lists those that exist`,
        );
      }
      throw new Refusal(
        `the API server ${target.server} (context ${target.context}) serves no ` +
          `${VC_RESOURCE}/${VERSION}: KubeCell is not installed on that cluster`,
      );
    }
    if (err instanceof ApiException && err.code === 403) {
      throw forbidden(
        err,
        VC_RESOURCE,
        target,
        `Reading a VirtualCluster needs get on ${VC_RESOURCE} there, which the built-in ` +
          'ClusterRoles view, edit and admin grant once KubeCell is installed: ask your platform ' +
          'team for a RoleBinding to edit or admin in that namespace (docs/tenants.md).',
      );
    }
    throw otherFailure(err, `reading VirtualCluster ${namespace}/${name}`, target);
  }

  const status = vc.status ?? {};
  const secretName = status.credential?.secretName || undefined;
  if (status.phase !== 'Ready') {
    const ready = status.conditions?.find((condition) => condition.type === 'Ready');
    const condition =
      ready === undefined
        ? 'no Ready condition'
        : `Ready=${ready.status ?? '?'} ${ready.reason ?? ''}${ready.message ? `: ${ready.message}` : ''}`;
    throw new Refusal(
      `VirtualCluster ${namespace}/${name} is not Ready: phase ${status.phase ?? '(none)'}; ` +
        `${condition}\n${notReadyAdvice(status.phase, watch, secretName)}`,
    );
  }
  if (secretName === undefined) {
    throw new Refusal(
      `VirtualCluster ${namespace}/${name} is Ready but its kubeconfig is not published yet ` +
        '(status.credential.secretName is empty); try again in a moment: ' +
        watch,
    );
  }

  let secret: SecretObject;
  try {
    secret = (await core.readNamespacedSecret({ name: secretName, namespace })) as SecretObject;
  } catch (err) {
    if (err instanceof ApiException && err.code === 404) {
      throw new Refusal(
        `the kubeconfig Secret ${namespace}/${secretName} that VirtualCluster ${name} names in ` +
          'status.credential.secretName does not exist (yet): KubeCell publishes it again on ' +
          'its next sync; try again in a moment',
      );
    }
    if (err instanceof ApiException && err.code === 403) {
      throw forbidden(
        err,
        'secrets',
        target,
        'The kubeconfig is in a Secret: reading it needs get on secrets there, which the ' +
          'built-in ClusterRoles edit and admin grant and view does not. Ask your platform team ' +
          'for a RoleBinding to edit or admin in that namespace (docs/tenants.md).',
      );
    }
    throw otherFailure(err, `reading Secret ${namespace}/${secretName}`, target);
  }

  const uid = vc.metadata?.uid;
  const owned = (secret.metadata?.ownerReferences ?? []).some(
    (ref) => ref.controller === true && ref.kind === 'VirtualCluster' && ref.uid === uid,
  );
  if (!owned) {
    throw new Refusal(
      `Secret ${namespace}/${secretName} is not controlled by VirtualCluster ${name} (UID ` +
        `${uid ?? 'unknown'}): refusing to hand out a credential KubeCell did not publish`,
    );
  }
  const encoded = secret.data?.[KUBECONFIG_KEY];
  if (encoded === undefined || encoded === '') {
    throw new Refusal(
      `Secret ${namespace}/${secretName} has no key ${KUBECONFIG_KEY}: it is not the kubeconfig ` +
        'KubeCell publishes; KubeCell puts it back on its next sync',
    );
  }
  return Buffer.from(encoded, 'base64').toString('utf8');
}

/**
 * Writes `text` to `file` with mode 0600: to a new file beside it, created 0600, then renamed
 * over it, so the credential is never readable by others, not even while being written.
 */
async function writePrivateFile(file: string, text: string): Promise<void> {
  const temporary = join(dirname(file), `.${basename(file)}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.chmod(0o600);
    await handle.close();
    await rename(temporary, file);
    await chmod(file, 0o600);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(temporary, { force: true });
    throw err;
  }
}

/** `kubecell kubeconfig <args>`: the arguments after `kubeconfig`. */
export async function runKubeconfig(args: readonly string[], io: CliIo): Promise<number> {
  const env = io.env ?? process.env;
  try {
    const options = parseArgs(args);
    if (options === 'help') {
      io.stdout.write(KUBECONFIG_USAGE);
      return EXIT_OK;
    }
    const { kubeConfig, source } = loadUserKubeConfig(env, options.kubeconfig);
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
    const target: Target = {
      namespace:
        options.namespace ?? (kubeConfig.getContextObject(context)?.namespace || 'default'),
      context,
      server: cluster.server,
      user: kubeConfig.getCurrentUser()?.name ?? '(none)',
    };
    const text = await publishedKubeconfig(kubeConfig, options.name, target);
    if (options.output === undefined) {
      io.stdout.write(text);
    } else {
      try {
        await writePrivateFile(options.output, text);
      } catch (err) {
        throw new Refusal(
          `cannot write ${options.output}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        );
      }
      io.stderr.write(
        `kubecell: wrote the admin kubeconfig of VirtualCluster ${target.namespace}/${options.name} ` +
          `to ${options.output} (mode 0600); whoever can read it is cluster-admin of that cluster\n`,
      );
    }
    return EXIT_OK;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`kubecell: ${err.message}\n${err.showUsage ? `\n${KUBECONFIG_USAGE}` : ''}`);
      return EXIT_USAGE;
    }
    if (err instanceof Refusal) {
      io.stderr.write(`kubecell: ${err.message}\n`);
      return EXIT_INVALID;
    }
    throw err;
  }
}
