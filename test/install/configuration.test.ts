// The README's configuration table lists every environment variable the code under hooks/ reads,
// and only those, with the code's defaults. The variables are found by reading the sources
// (tests excluded): `env.NAME` and `process.env.NAME`, `env['NAME']`, a name passed to an
// EnvReader method or a `read(...)` helper, and the keys of every exported `*DEFAULTS` map.
// Calling the loaders with an environment that records what is asked for checks that the
// reading of the sources misses nothing they read, and that the loaders read every variable the
// sources name. The defaults are the ones the loaders apply (settings.ts), for every row of the
// table. Unit test: no cluster.
import { expect } from 'chai';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { backticked, column, readRepoFile, section, tables, type Table } from './markdown.js';
import {
  CREDENTIAL_VARIABLES,
  defaultsTableProblems,
  loadEverySetting,
  recordingEnv,
  settingsOfLoaders,
} from './settings.js';
import { repoRoot, runtimeSources } from './support.js';

/**
 * Variables that are not settings but are read to find Kubernetes credentials, as kubectl and
 * client-node do: set by the kubelet in every Pod, or by the operating system. The table must
 * still name them (in the row of `KUBECONFIG`), not list them as variables of their own.
 */
const NOT_SETTINGS = new Set([
  'KUBERNETES_SERVICE_HOST',
  'KUBERNETES_SERVICE_PORT',
  'HOME',
  'USERPROFILE',
]);

const NAME = '([A-Z][A-Z0-9_]*[A-Z0-9])';
const SOURCE_PATTERNS = [
  new RegExp(`\\benv\\??\\.${NAME}\\b`, 'g'),
  new RegExp(`\\benv\\[\\s*['"\`]${NAME}['"\`]\\s*\\]`, 'g'),
  new RegExp(
    `\\b(?:text|optional|seconds|namespacedName|read|integer|port)\\(\\s*['"]${NAME}['"]`,
    'g',
  ),
];

function sources(): string[] {
  return runtimeSources('hooks').filter(
    (file) => !file.startsWith('hooks/generated/') && !/(^|\/)testing\.ts$/.test(file),
  );
}

/** Variable → the files that read it, from the sources. */
async function variablesRead(): Promise<Map<string, Set<string>>> {
  const found = new Map<string, Set<string>>();
  const add = (name: string, file: string): void => {
    found.set(name, (found.get(name) ?? new Set()).add(file));
  };
  for (const file of sources()) {
    const text = readRepoFile(file);
    for (const pattern of SOURCE_PATTERNS) {
      for (const match of text.matchAll(pattern)) add(match[1] as string, file);
    }
    const defaults = [...text.matchAll(/export const (\w*DEFAULTS)\b/g)].map((m) => m[1] as string);
    if (defaults.length === 0) continue;
    const module = (await import(pathToFileURL(path.join(repoRoot, file)).href)) as Record<
      string,
      unknown
    >;
    for (const name of defaults) {
      const value = module[name];
      if (typeof value !== 'object' || value === null) continue;
      for (const key of Object.keys(value)) if (/^[A-Z][A-Z0-9_]*$/.test(key)) add(key, file);
    }
  }
  return found;
}

interface Row {
  variables: string[];
  fallback: string | undefined;
  text: string;
}

/** The README's "## Configuration" table. */
function readmeTable(): Table {
  const text = section(readRepoFile('README.md'), 2, 'Configuration');
  if (text === undefined) throw new Error('README.md has no "## Configuration"');
  const table = tables(text).find((candidate) => column(candidate, /^variable$/i) !== -1);
  if (table === undefined) throw new Error('README.md "## Configuration" has no Variable table');
  return table;
}

/** The rows of the README's "## Configuration" table. */
function configurationTable(): Row[] {
  const table = readmeTable();
  const variable = column(table, /^variable$/i);
  const fallback = column(table, /^default$/i);
  return table.rows.map((row) => ({
    variables: backticked(row[variable] ?? ''),
    fallback: backticked(row[fallback] ?? '')[0],
    text: row.join(' | '),
  }));
}

describe('README configuration table', () => {
  let read: Map<string, Set<string>>;
  before(async () => {
    read = await variablesRead();
  });

  it('(finds the variables the code reads)', () => {
    for (const name of [
      'KUBECELL_PORT',
      'KUBECELL_CONTROLLER_NAMESPACE',
      'KUBECELL_NODEPORT_RANGE',
      'KUBECELL_CNI_DAEMONSET',
      'KUBECELL_GPUCELLPOOL_GPU_RESOURCE',
      'KUBECELL_TLS_CERT_FILE',
      'KUBECONFIG',
    ]) {
      expect(read.has(name), name).to.equal(true);
    }
  });

  it('reading the sources finds every variable the settings loaders ask for', () => {
    const { env, asked } = recordingEnv();
    loadEverySetting(env);
    expect(asked.size).to.be.greaterThan(10);
    expect([...asked].filter((name) => !read.has(name)).sort()).to.deep.equal([]);
  });

  it('the settings loaders read every variable the sources name (so each default is seen)', () => {
    const { env, asked } = recordingEnv();
    loadEverySetting(env);
    expect(
      [...read.keys()].filter((name) => !asked.has(name) && !CREDENTIAL_VARIABLES.has(name)).sort(),
    ).to.deep.equal([]);
  });

  it('lists every variable the code reads', () => {
    const rows = configurationTable();
    const listed = new Set(rows.flatMap((row) => row.variables));
    const named = new Set(rows.flatMap((row) => backticked(row.text)));
    const missing = [...read.keys()]
      .filter((name) => (NOT_SETTINGS.has(name) ? !named.has(name) : !listed.has(name)))
      .map((name) => `${name} (read in ${[...(read.get(name) ?? [])].join(', ')})`);
    expect(missing.sort()).to.deep.equal([]);
  });

  it('lists only variables the code reads, none twice', () => {
    const listed = configurationTable().flatMap((row) => row.variables);
    expect(listed.filter((name) => !read.has(name))).to.deep.equal([]);
    expect(listed.filter((name, index) => listed.indexOf(name) !== index)).to.deep.equal([]);
    expect(listed.filter((name) => NOT_SETTINGS.has(name))).to.deep.equal([]);
  });

  it('gives the code’s default of every variable, and unset where the code has none', () => {
    expect(defaultsTableProblems(readmeTable(), settingsOfLoaders(), 'README.md')).to.deep.equal(
      [],
    );
  });
});
