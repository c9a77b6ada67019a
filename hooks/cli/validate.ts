/**
 * `kubecell validate -f <file|dir|->`: the admission webhook's rules, offline. Every YAML (or
 * JSON) document of every file is checked: KubeCell objects against the generated schema of
 * their kind and its CEL rules, exactly as the webhook checks a CREATE, plus the rules that the
 * input alone can answer (a Cell's namespace; a VirtualCluster or plan whose Namespace is in the
 * input must be a host namespace; one VirtualCluster per namespace within the input; a
 * GPUCellPool's provisioner label matches its type). Rules that need the cluster are not
 * checked, and the output says so. Other kinds are skipped.
 *
 * Each error is one line on stdout, `<file>: <Kind>/<name>: <field>: <message>`; a summary goes
 * to stderr. Exit code 0 when nothing is wrong, 1 on any error, 2 on a usage error. The input
 * is read in manifests.ts and checked in offline-rules.ts.
 */
import { DEFAULT_CONTROLLER_NAMESPACE } from '../admission/rules.js';
import { LABELS } from '../kube/labels.js';
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE, UsageError, splitFlag, type CliIo } from './io.js';
import { readManifests, type Manifests } from './manifests.js';
import { checkDocuments, type Verdicts } from './offline-rules.js';

export { EXIT_INVALID, EXIT_OK, EXIT_USAGE, type CliIo } from './io.js';

/**
 * The whole `kubecell` command line (cli.ts), for callers that import it from here
 * (test/install/docs.test.ts). Loaded on call: cli.ts imports this module.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const cli = await import('./cli.js');
  return cli.runCli(argv, io);
}

const OFFLINE_NOTE =
  'offline check: the rules that need the cluster are not checked here (a Cell whose refs ' +
  'VirtualClusters have resolved; a namespace that already hosts a VirtualCluster in the cluster; ' +
  'the host-namespace label of a Namespace that is not in the input); the admission webhook ' +
  'enforces them';

export const VALIDATE_USAGE = `Usage:
  kubecell validate -f <file|directory|-> [-f ...] [--controller-namespace <namespace>]

Checks KubeCell manifests offline with the admission webhook's rules: the JSON Schema of each
kind (unknown fields are errors), the CEL rules of the CRDs, and the cross-object rules the
input can answer by itself:
  - a Cell must be in the controller namespace (--controller-namespace, or
    KUBECELL_CONTROLLER_NAMESPACE, default ${DEFAULT_CONTROLLER_NAMESPACE});
  - a VirtualCluster or VirtualClusterPlan whose Namespace is in the input must be in a
    namespace labelled ${LABELS.hostNamespace}=true;
  - the input puts at most one VirtualCluster in a namespace;
  - a GPUCellPool's label ${LABELS.provisioner}, when set, matches spec.provisioner.type
    (the admission webhook sets it when it is missing).
It is offline: rules that need the cluster (a Cell in use by VirtualClusters, a namespace
already hosting a VirtualCluster, Namespaces not in the input) are left to the webhook.

Directories are read recursively (*.yaml, *.yml, *.json); files may hold several documents;
"-" reads standard input. Documents of other kinds are skipped.

Each error is printed as <file>: <Kind>/<name>: <field>: <message>.
Exit status: 0 no errors, 1 errors found, 2 usage error (bad arguments, unreadable path).
`;

interface Options {
  files: string[];
  controllerNamespace: string;
}

/** The arguments after `validate`. */
function parseArgs(args: readonly string[], env: NodeJS.ProcessEnv): Options | 'help' {
  const options: Options = {
    files: [],
    controllerNamespace: env.KUBECELL_CONTROLLER_NAMESPACE?.trim() || DEFAULT_CONTROLLER_NAMESPACE,
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--help' || arg === '-h') return 'help';
    const { flag, inline } = splitFlag(arg, ['-f']);
    const value = (): string => {
      if (inline !== undefined) return inline;
      const next = args[++i];
      if (next === undefined || next === '') throw new UsageError(`${flag} needs a value`);
      return next;
    };
    if (flag === '-f' || flag === '--filename') options.files.push(value());
    else if (flag === '--controller-namespace') options.controllerNamespace = value();
    else throw new UsageError(`unknown argument ${JSON.stringify(arg)}`);
  }
  if (options.files.length === 0) throw new UsageError('validate needs -f <file|directory|->');
  return options;
}

/** `kubecell validate <args>`: the arguments after `validate`. */
export async function runValidate(args: readonly string[], io: CliIo): Promise<number> {
  const env = io.env ?? process.env;
  let options: Options | 'help';
  try {
    options = parseArgs(args, env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr.write(`kubecell: ${err.message}\n\n${VALIDATE_USAGE}`);
    return EXIT_USAGE;
  }
  if (options === 'help') {
    io.stdout.write(VALIDATE_USAGE);
    return EXIT_OK;
  }
  let manifests: Manifests;
  try {
    manifests = await readManifests(options.files, io);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr.write(`kubecell: ${err.message}\n`);
    return EXIT_USAGE;
  }
  const verdicts = checkDocuments(manifests.documents, options.controllerNamespace);
  const problems = [...manifests.problems, ...verdicts.problems];
  for (const line of problems) io.stdout.write(`${line}\n`);
  io.stderr.write(summary(problems.length, manifests.fileCount, verdicts));
  return problems.length === 0 ? EXIT_OK : EXIT_INVALID;
}

/** The summary on stderr: what was checked, what was skipped, how many errors. */
function summary(errors: number, fileCount: number, { checked, skipped }: Verdicts): string {
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  return (
    `kubecell validate: ${plural(checked, 'KubeCell object')} checked in ${plural(fileCount, 'file')} ` +
    `(${plural(skipped, 'other document')} skipped): ${errors === 0 ? 'no errors' : plural(errors, 'error')}\n` +
    `note: ${OFFLINE_NOTE}\n`
  );
}
