/**
 * What every `kubecell` command shares: where it writes, the exit codes, and the usage error
 * that makes it print its usage and exit 2.
 */

export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Read for `validate -f -`. */
  stdin?: AsyncIterable<Buffer | string>;
  /** The environment (KUBECELL_CONTROLLER_NAMESPACE, KUBECONFIG, HOME, ...); process.env if absent. */
  env?: NodeJS.ProcessEnv;
}

/** Success. */
export const EXIT_OK = 0;
/** The command ran and the answer is no: errors found, or no kubeconfig to print (see the message). */
export const EXIT_INVALID = 1;
/** Bad arguments, an unreadable path, an unknown context. */
export const EXIT_USAGE = 2;

/**
 * Bad arguments: the command prints `kubecell: <message>`, its usage (unless `showUsage` is
 * false: an unreadable path is not a misuse of the syntax), and exits 2.
 */
export class UsageError extends Error {
  readonly showUsage: boolean;
  constructor(message: string, { showUsage = true }: { showUsage?: boolean } = {}) {
    super(message);
    this.showUsage = showUsage;
  }
}

/**
 * Splits a flag argument into its name and inline value: `--name=value`, `-nvalue` (a short
 * flag in `withValue` with its value attached), or the flag alone.
 */
export function splitFlag(
  arg: string,
  shortWithValue: readonly string[],
): { flag: string; inline?: string } {
  if (arg.startsWith('--')) {
    const eq = arg.indexOf('=');
    return eq > 0 ? { flag: arg.slice(0, eq), inline: arg.slice(eq + 1) } : { flag: arg };
  }
  const short = arg.slice(0, 2);
  if (arg.length > 2 && shortWithValue.includes(short)) {
    const rest = arg.slice(2);
    return { flag: short, inline: rest.startsWith('=') ? rest.slice(1) : rest };
  }
  return { flag: arg };
}
