// docs/troubleshooting.md has a row for every condition and check reason the code writes, and
// names no reason the code does not write. The reasons are read the way docs.test.ts reads
// tokens (api-tokens.ts): every export of every hooks/<folder>/reasons.ts, whatever its name,
// except the exports listed in NOT_REASONS (phases, condition types, decisions, check names),
// which must exist. An export renamed or added is read as reasons, so it cannot drop out of the
// check unseen; reasons exported anywhere else fail the test. Each reasons module belongs to one
// `## ` section of the document; a module without a section fails the test, so a new kind cannot
// go undocumented. Unit test: no cluster.
import { expect } from 'chai';
import { REASONS_BY_CHECK } from '../../hooks/feasibility/reasons.js';
import { TOKEN, exportsOf, reasonModules } from './api-tokens.js';
import { backticked, column, readRepoFile, section, tables } from './markdown.js';
import { runtimeSources } from './support.js';

const DOC = 'docs/troubleshooting.md';

/** The `## ` section of docs/troubleshooting.md where each module's reasons have their rows. */
const SECTIONS: Readonly<Record<string, string>> = {
  'hooks/cell/reasons.ts': 'Cell',
  'hooks/plan/reasons.ts': 'VirtualClusterPlan',
  'hooks/feasibility/reasons.ts': 'Feasibility checks',
  'hooks/virtualcluster/reasons.ts': 'VirtualCluster',
  'hooks/gpucellpool/reasons.ts': 'GPUCellPool',
};

/** The exports of a reasons module that hold other tokens than condition reasons. */
const NOT_REASONS: Readonly<Record<string, readonly string[]>> = {
  'hooks/cell/reasons.ts': ['CELL_PHASES', 'CELL_CONDITION_TYPES'],
  'hooks/feasibility/reasons.ts': ['Decision', 'CHECK_ORDER'],
  'hooks/virtualcluster/reasons.ts': ['VC_PHASES', 'VC_CONDITION_TYPES'],
};

/** Exports that say they hold reasons, by name: they belong in a reasons module. */
const REASON_EXPORT = /export const (\w*reason\w*)/gi;

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

/**
 * Reasons module (repository-relative) → the reasons of its exports. Throws when NOT_REASONS
 * names an export the module does not have.
 */
async function reasonsByModule(): Promise<Map<string, Set<string>>> {
  const found = new Map<string, Set<string>>();
  for (const file of reasonModules()) {
    const exported = await exportsOf(file);
    const others = NOT_REASONS[file] ?? [];
    const missing = others.filter((name) => !(name in exported));
    if (missing.length > 0) {
      throw new Error(`${file} has no export ${missing.join(', ')}: update NOT_REASONS`);
    }
    const reasons = new Set<string>();
    for (const [name, value] of Object.entries(exported)) {
      if (!others.includes(name)) reasonStrings(value, reasons);
    }
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
    expect(Object.keys(NOT_REASONS).filter((file) => !modules.has(file))).to.deep.equal([]);
  });

  it('reasons are exported by reasons modules only', () => {
    const elsewhere = runtimeSources('hooks')
      .filter((file) => !file.startsWith('hooks/generated/') && !modules.has(file))
      .flatMap((file) =>
        [...readRepoFile(file).matchAll(REASON_EXPORT)].map((match) => `${file}: ${match[1]}`),
      );
    expect(elsewhere).to.deep.equal([]);
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
