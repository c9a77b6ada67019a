// The hook server's settings and their defaults, as the code applies them, for the tests that
// check the documentation's Variable/Default tables (docs.test.ts, configuration.test.ts). The
// defaults are not looked up by export name: every settings loader the server runs at start-up
// (hooks/main.ts `loadSettings`: the server's, the webhook's, and each controller's through
// registerControllers), and the cell agent's (`kubecell agent`, hooks/cli/agent.ts, which the
// kubecell-cell-agent ManifestWork runs on a managed cluster), is called with an empty
// environment while the one env reader (hooks/config/env-reader.ts) records what it is asked: a
// variable read with a fallback has that default, one read only as `optional` has none. A
// variable the loaders read without the env reader is reported, since its default could not be
// seen; only the variables that locate Kubernetes credentials are read otherwise, and have no
// default. Unit test helper: no cluster.
import { loadWebhookConfig } from '../../hooks/admission/config.js';
import { loadAgentConfig } from '../../hooks/agent/config.js';
import { EnvReader, type NamespacedName } from '../../hooks/config/env-reader.js';
import { registerControllers } from '../../hooks/controllers/register.js';
import { loadConfig } from '../../hooks/server/config.js';
import { HookRegistry } from '../../hooks/server/registry.js';
import { backticked, type Table } from './markdown.js';

/** A variable the loaders read, and the defaults they give it (none: read as `optional` only). */
export interface Setting {
  name: string;
  defaults: Set<string>;
}

/**
 * Variables read to find Kubernetes API credentials, as kubectl and client-node do, not through
 * the env reader: none has a default of KubeCell's, so a table must say they are unset.
 */
export const CREDENTIAL_VARIABLES: ReadonlySet<string> = new Set([
  'KUBECONFIG',
  'KUBERNETES_SERVICE_HOST',
  'KUBERNETES_SERVICE_PORT',
  'HOME',
  'USERPROFILE',
]);

/** How a table says that a variable has no default. */
const NO_DEFAULT = /^\(?(unset|none|required)\)?$/i;

/** An environment that records every variable asked for, and has none set. */
export function recordingEnv(): { env: NodeJS.ProcessEnv; asked: Set<string> } {
  const asked = new Set<string>();
  const env = new Proxy({} as NodeJS.ProcessEnv, {
    get(_target, key) {
      if (typeof key === 'string') asked.add(key);
      return undefined;
    },
    has(_target, key) {
      if (typeof key === 'string') asked.add(key);
      return false;
    },
  });
  return { env, asked };
}

/**
 * Every settings loader of the hook server, as hooks/main.ts runs them at start-up, and the cell
 * agent's, as `kubecell agent` runs it.
 */
export function loadEverySetting(env: NodeJS.ProcessEnv): void {
  loadConfig(env);
  loadWebhookConfig(env);
  registerControllers(new HookRegistry(), { env, clock: () => new Date(0) });
  loadAgentConfig(env);
}

type ReaderMethods = Pick<EnvReader, 'optional' | 'text' | 'namespacedName'>;

/**
 * The settings the loaders read, by name, with their defaults. Throws when the loaders read a
 * variable without the env reader (its default would go unchecked).
 */
export function settingsOfLoaders(): Map<string, Setting> {
  const settings = new Map<string, Setting>();
  const note = (name: string, fallback?: string): void => {
    const setting = settings.get(name) ?? { name, defaults: new Set<string>() };
    if (fallback !== undefined) setting.defaults.add(fallback);
    settings.set(name, setting);
  };
  const prototype = EnvReader.prototype as ReaderMethods;
  const original: ReaderMethods = {
    optional: prototype.optional,
    text: prototype.text,
    namespacedName: prototype.namespacedName,
  };
  // `seconds`, `limit`, `controllerNamespace` and `nodePortRange` read through `text`.
  prototype.optional = function (this: EnvReader, name: string) {
    note(name);
    return original.optional.call(this, name);
  };
  prototype.text = function (this: EnvReader, name: string, fallback: string) {
    note(name, fallback);
    return original.text.call(this, name, fallback);
  };
  prototype.namespacedName = function (this: EnvReader, name: string, fallback: NamespacedName) {
    note(name, `${fallback.namespace}/${fallback.name}`);
    return original.namespacedName.call(this, name, fallback);
  };
  const { env, asked } = recordingEnv();
  try {
    loadEverySetting(env);
  } finally {
    Object.assign(prototype, original);
  }
  const unseen = [...asked]
    .filter((name) => !settings.has(name) && !CREDENTIAL_VARIABLES.has(name))
    .sort();
  if (unseen.length > 0) {
    throw new Error(
      `the settings loaders read ${unseen.join(', ')} without the env reader ` +
        '(hooks/config/env-reader.ts), so no default can be checked: read them through it',
    );
  }
  return settings;
}

/** What a Default cell says: a value (its first code span), no default, or nothing readable. */
function documentedDefault(cell: string): { value?: string; none?: true } {
  const value = backticked(cell)[0];
  if (value !== undefined) return { value };
  return NO_DEFAULT.test(cell.trim()) ? { none: true } : {};
}

/** The problem of one variable of a row, or undefined when the row gives the code's default. */
function variableProblem(
  name: string,
  cell: string,
  settings: ReadonlyMap<string, Setting>,
): string | undefined {
  const documented = documentedDefault(cell);
  const shown = documented.value ?? (documented.none ? cell.trim() : JSON.stringify(cell.trim()));
  if (documented.value === undefined && !documented.none) {
    return `${name}: the default ${shown} is neither a value in backticks nor unset/none/required`;
  }
  const setting = settings.get(name);
  if (setting === undefined && !CREDENTIAL_VARIABLES.has(name)) {
    return `${name}: no settings loader of the hook server reads it`;
  }
  const code = [...(setting?.defaults ?? [])];
  if (code.length > 1) return `${name}: the code has ${code.length} defaults, ${code.join(', ')}`;
  if (code.length === 0) {
    return documented.none ? undefined : `${name}: documented ${shown}, the code has no default`;
  }
  return documented.value === code[0]
    ? undefined
    : `${name}: documented ${shown}, the code’s default is ${code[0]}`;
}

/** The column of a table whose title (backticks and case aside) is `title`, or -1. */
function columnOf(table: Table, title: string): number {
  return table.header.findIndex((cell) => cell.replace(/`/g, '').trim().toLowerCase() === title);
}

/** Whether a table is a Variable/Default table. */
export function isDefaultsTable(table: Table): boolean {
  return columnOf(table, 'variable') !== -1 && columnOf(table, 'default') !== -1;
}

/**
 * Every row of a Variable/Default table that does not give the code's default of each variable
 * it names, each problem with the table's line (`where` prefixes it). A row that names no
 * variable, or whose default cannot be read, is a problem too: no row goes unchecked.
 */
export function defaultsTableProblems(
  table: Table,
  settings: ReadonlyMap<string, Setting>,
  where: string,
): string[] {
  const variable = columnOf(table, 'variable');
  const fallback = columnOf(table, 'default');
  return table.rows.flatMap((row) => {
    const names = backticked(row[variable] ?? '').filter((token) =>
      /^[A-Z][A-Z0-9_]*$/.test(token),
    );
    if (names.length === 0) {
      return [`${where}:${table.line}: the row "${row.join(' | ')}" names no variable`];
    }
    return names.flatMap((name) => {
      const problem = variableProblem(name, row[fallback] ?? '', settings);
      return problem === undefined ? [] : [`${where}:${table.line}: ${problem}`];
    });
  });
}
