// docs/troubleshooting.md has a row for every condition and check reason the code writes, and
// names no reason the code does not write. The reasons are found the way docs.test.ts finds
// tokens: every `export const` of hooks/ whose name says it holds reasons (CELL_REASONS,
// REASONS, Reason, READY_REASONS, ...), imported and read. Each module's reasons belong to
// one `## ` section of the document; a module that starts exporting reasons without a section
// fails the test, so a new kind cannot go undocumented. Unit test: no cluster.
import { expect } from 'chai';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REASONS_BY_CHECK } from '../../hooks/feasibility/reasons.js';
import { backticked, column, readRepoFile, section, tables } from './markdown.js';
import { repoRoot, runtimeSources } from './support.js';

const DOC = 'docs/troubleshooting.md';

/** The `## ` section of docs/troubleshooting.md where each module's reasons have their rows. */
const SECTIONS: Readonly<Record<string, string>> = {
  'hooks/cell/reasons.ts': 'Cell',
  'hooks/plan/reasons.ts': 'VirtualClusterPlan',
  'hooks/feasibility/reasons.ts': 'Feasibility checks',
  'hooks/virtualcluster/reasons.ts': 'VirtualCluster',
  'hooks/gpucellpool/reasons.ts': 'GPUCellPool',
};

const REASON_EXPORT = /reason/i;
const TOKEN = /^[A-Z][A-Za-z0-9]+$/;

/**
 * The reason strings of an exported value: a string itself, the strings of a list or a map, and
 * of an entry that pairs a reason with other data (`{reason, result}`) only its `reason`.
 */
function reasonStrings(value: unknown, into: Set<string>): void {
  if (typeof value === 'string') into.add(value);
  else if (Array.isArray(value)) value.forEach((item) => reasonStrings(item, into));
  else if (typeof value === 'object' && value !== null) {
    const entry = value as Record<string, unknown>;
    if (typeof entry.reason === 'string') into.add(entry.reason);
    else Object.values(entry).forEach((item) => reasonStrings(item, into));
  }
}

/** Module (repository-relative) → the reasons its reason exports hold. */
async function reasonsByModule(): Promise<Map<string, Set<string>>> {
  const found = new Map<string, Set<string>>();
  for (const file of runtimeSources('hooks').filter(
    (name) => !name.startsWith('hooks/generated/'),
  )) {
    const names = [...readRepoFile(file).matchAll(/export const (\w+)/g)]
      .map((match) => match[1] as string)
      .filter((name) => REASON_EXPORT.test(name));
    if (names.length === 0) continue;
    const module = (await import(pathToFileURL(path.join(repoRoot, file)).href)) as Record<
      string,
      unknown
    >;
    const reasons = new Set<string>();
    for (const name of names) reasonStrings(module[name], reasons);
    found.set(file, reasons);
  }
  return found;
}

/** The reasons a section's tables list in their Reason column, with the rows they come from. */
function documentedReasons(
  title: string,
): Array<{ reason: string; row: string[]; header: string[] }> {
  const text = section(readRepoFile(DOC), 2, title);
  if (text === undefined) throw new Error(`${DOC} has no "## ${title}"`);
  return tables(text).flatMap((table) => {
    const reasonColumn = column(table, /^reasons?$/i);
    if (reasonColumn === -1) return [];
    return table.rows.flatMap((row) =>
      backticked(row[reasonColumn] ?? '')
        .filter((token) => TOKEN.test(token))
        .map((reason) => ({ reason, row, header: table.header })),
    );
  });
}

describe('docs/troubleshooting.md', () => {
  let modules: Map<string, Set<string>>;
  before(async () => {
    modules = await reasonsByModule();
  });

  it('(finds the reasons of every kind in the code)', () => {
    const all = new Set([...modules.values()].flatMap((reasons) => [...reasons]));
    for (const reason of [
      'ManagedClusterNotFound',
      'FreeCapacityUnknown',
      'Expired',
      'K3kNotReady',
      'JoinSecretNotFound',
      'AtMaxReplicas',
    ]) {
      expect(all.has(reason), reason).to.equal(true);
    }
    // Results and other data that sit next to reasons are not reasons.
    expect(all.has('Pass')).to.equal(false);
  });

  it('every module that exports reasons has its section', () => {
    expect([...modules.keys()].filter((file) => SECTIONS[file] === undefined)).to.deep.equal([]);
    expect(Object.keys(SECTIONS).filter((file) => !modules.has(file))).to.deep.equal([]);
  });

  for (const [file, title] of Object.entries(SECTIONS)) {
    it(`"## ${title}" has a row for every reason of ${file}, and only those`, () => {
      const code = modules.get(file) ?? new Set<string>();
      const documented = new Set(documentedReasons(title).map((entry) => entry.reason));
      expect(
        [...code].filter((reason) => !documented.has(reason)).sort(),
        'reasons without an entry',
      ).to.deep.equal([]);
      expect(
        [...documented].filter((reason) => !code.has(reason)).sort(),
        'entries for reasons the code does not write',
      ).to.deep.equal([]);
    });
  }

  it('"## Feasibility checks" gives each reason with its check and result', () => {
    const byCheck = REASONS_BY_CHECK as Readonly<
      Record<string, ReadonlyArray<{ reason: string; result: string }>>
    >;
    const wrong: string[] = [];
    for (const { reason, row, header } of documentedReasons('Feasibility checks')) {
      const checks = backticked(row[header.indexOf('Check')] ?? '').filter((t) => TOKEN.test(t));
      const result = (row[header.indexOf('Result')] ?? '').trim();
      if (checks.length === 0) {
        // A row for all checks ("each check"): some check gives the reason with that result.
        const given = Object.values(byCheck).some((entries) =>
          entries.some((entry) => entry.reason === reason && entry.result === result),
        );
        if (!given) wrong.push(`no check gives ${reason} with result ${result}`);
        continue;
      }
      for (const check of checks) {
        const entry = byCheck[check]?.find((candidate) => candidate.reason === reason);
        if (entry === undefined) wrong.push(`${check} never gives ${reason}`);
        else if (entry.result !== result) {
          wrong.push(`${check} gives ${reason} as ${entry.result}, documented ${result}`);
        }
      }
    }
    expect(wrong).to.deep.equal([]);
  });

  it('tells the TopoLVM story: a VirtualCluster Pending on FreeCapacityUnknown', () => {
    const text = section(readRepoFile(DOC), 3, 'A VirtualCluster stays `Pending`');
    expect(text).to.be.a('string');
    for (const needle of ['FeasibilityUnknown', 'FreeCapacityUnknown', 'capacity.topolvm.io/']) {
      expect(text).to.include(needle);
    }
  });
});
