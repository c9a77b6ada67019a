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
import { KUBECONFIG_KEY } from '../virtualcluster/constants.js';
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE, UsageError, splitFlag, type CliIo } from './io.js';
import { writePrivateFile } from './private-file.js';
import { VC_RESOURCE, publishedKubeconfig } from './published-kubeconfig.js';
import { Refusal, type Target } from './refusal.js';
import { loadUserKubeConfig, selectTarget } from './user-kubeconfig.js';

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

/** `kubecell kubeconfig <args>`: the arguments after `kubeconfig`. */
export async function runKubeconfig(args: readonly string[], io: CliIo): Promise<number> {
  const env = io.env ?? process.env;
  try {
    const options = parseArgs(args);
    if (options === 'help') {
      io.stdout.write(KUBECONFIG_USAGE);
      return EXIT_OK;
    }
    const loaded = loadUserKubeConfig(env, options.kubeconfig);
    const target = selectTarget(loaded, options);
    const text = await publishedKubeconfig(loaded.kubeConfig, options.name, target);
    await deliver(text, options, target, io);
    return EXIT_OK;
  } catch (err) {
    return exitCodeFor(err, io);
  }
}

/** Prints the kubeconfig, or writes it to --output and says so on stderr. */
async function deliver(text: string, options: Options, target: Target, io: CliIo): Promise<void> {
  if (options.output === undefined) {
    io.stdout.write(text);
    return;
  }
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

/** Usage errors exit 2 (with the usage unless told not to), refusals 1; anything else is a bug. */
function exitCodeFor(err: unknown, io: CliIo): number {
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
