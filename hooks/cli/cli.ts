/**
 * The `kubecell` command line: the command dispatcher and the overall usage. Each command lives
 * in a module of its own (validate.ts, kubeconfig.ts) and shares io.ts.
 */
// The version of the repository, which the packaged command (scripts/cli-package/) carries too.
import packageJson from '../../package.json' with { type: 'json' };
import { AGENT_USAGE, runAgentCommand } from './agent.js';
import { EXIT_OK, EXIT_USAGE, type CliIo } from './io.js';
import { KUBECONFIG_USAGE, runKubeconfig } from './kubeconfig.js';
import { VALIDATE_USAGE, runValidate } from './validate.js';

export { EXIT_INVALID, EXIT_OK, EXIT_USAGE, type CliIo } from './io.js';

export const VERSION: string = packageJson.version;

export const USAGE = `Usage:
  kubecell validate -f <file|directory|-> [-f ...] [--controller-namespace <namespace>]
      Check KubeCell manifests offline with the admission webhook's rules.
  kubecell kubeconfig <name> [-n <namespace>] [-o <file>] [--context <context>]
                      [--kubeconfig <file>]
      Print (or write) the admin kubeconfig of a Ready VirtualCluster, read with your own
      credentials; say why not otherwise.
  kubecell agent [--once]
      Run the cell agent on a managed cluster (installed there by the hub through OCM).
  kubecell help [<command>]    kubecell <command> --help
      Explain a command.
  kubecell --version
      Print the version.

Installed from its package, the same command is also the kubectl plugin kubectl-kubecell:
kubectl kubecell <command> ... runs kubecell <command> ...

Exit status: 0 success, 1 the command's answer is no (errors found, no kubeconfig to print),
2 usage error.
`;

const COMMANDS: Record<
  string,
  { usage: string; run: (args: readonly string[], io: CliIo) => Promise<number> }
> = {
  validate: { usage: VALIDATE_USAGE, run: runValidate },
  kubeconfig: { usage: KUBECONFIG_USAGE, run: runKubeconfig },
  agent: { usage: AGENT_USAGE, run: (args, io) => runAgentCommand(args, io) },
};

function usageError(io: CliIo, message: string): number {
  io.stderr.write(`kubecell: ${message}\n\n${USAGE}`);
  return EXIT_USAGE;
}

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) return usageError(io, 'no command given');
  if (command === '--version' && rest.length === 0) {
    io.stdout.write(`kubecell ${VERSION}\n`);
    return EXIT_OK;
  }
  if (command === 'help' || command === '--help' || command === '-h') {
    const topic = rest[0];
    if (topic === undefined) {
      io.stdout.write(USAGE);
      return EXIT_OK;
    }
    const about = COMMANDS[topic];
    if (about === undefined || rest.length > 1) {
      return usageError(io, `no help on ${JSON.stringify(rest.join(' '))}`);
    }
    io.stdout.write(about.usage);
    return EXIT_OK;
  }
  const found = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (found === undefined) return usageError(io, `unknown command ${JSON.stringify(command)}`);
  return found.run(rest, io);
}
