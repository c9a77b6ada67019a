// The documentation set, checked in CI (unit test: no cluster):
// - no dead internal link: relative links of every Markdown file resolve to files, anchors to
//   headings (GitHub's slugs);
// - every samples/ path a doc names exists and passes `kubecell validate`;
// - reasons and phases the docs list (tables with a Phase or Reason column, and the prose lists
//   of docs/concepts.md) are tokens the code writes; documented defaults of KUBECELL_*
//   variables are the code's defaults, and every variable a doc names is read by the code;
// - docs/README.md indexes every doc DESIGN.md §5 asks for;
// - no private path (a home directory, /work/, /root/, /tmp/kubecell) in docs, samples or
//   manifests.
import { expect } from 'chai';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { runCli } from '../../hooks/cli/validate.js';
import { backticked, readRepoFile, tables, withoutFences } from './markdown.js';
import { repoRoot, runtimeSources } from './support.js';

const SKIPPED_DIRS = new Set(['node_modules', '.cache', '.git', 'dist']);

/** Repository-relative files below `dir` (skipping node_modules, caches, .git). */
function walk(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(path.join(repoRoot, dir), { withFileTypes: true })) {
    if (SKIPPED_DIRS.has(entry.name)) continue;
    const file = dir === '.' ? entry.name : path.posix.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...walk(file));
    else if (entry.isFile()) files.push(file);
  }
  return files.sort();
}

const isGenerated = (file: string): boolean =>
  /Code generated .*DO NOT EDIT/.test(readRepoFile(file).split('\n', 3).join('\n'));

const ALL_MARKDOWN = walk('.').filter((file) => file.endsWith('.md'));
/** Written by hand: the generated API reference is checked by `npm run verify` instead. */
const MARKDOWN = ALL_MARKDOWN.filter((file) => !isGenerated(file));

/** Inline code spans blanked, so a link written as code is not taken for a link. */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)[^`]*?\1/g, (span) => ' '.repeat(span.length));
}

/** GitHub's anchor of a heading (github-slugger), duplicates numbered. */
function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(text).split('\n')) {
    const match = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!match) continue;
    const rendered = (match[1] as string)
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
      .replace(/<[^>]+>/g, '')
      .replace(/[`*_~]/g, (char) => (char === '_' ? '_' : ''));
    const base = rendered
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

function linksOf(file: string): Link[] {
  const links: Link[] = [];
  withoutFences(readRepoFile(file))
    .split('\n')
    .forEach((raw, index) => {
      const line = withoutCodeSpans(raw);
      const inline = /\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)>?(?:\s+["'(][^)]*)?\)/g;
      for (const [, target = ''] of line.matchAll(inline)) {
        links.push({ file, line: index + 1, target });
      }
      const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line);
      if (definition) links.push({ file, line: index + 1, target: definition[1] as string });
    });
  return links;
}

/** Why a link is dead, or undefined when it resolves. */
function deadLink({ file, target }: Link): string | undefined {
  if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) {
    return undefined; // external (https:, mailto:, ...)
  }
  const [rawPath = '', anchor] = target.split('#', 2);
  const decoded = decodeURIComponent(rawPath);
  const resolved =
    decoded === ''
      ? file
      : decoded.startsWith('/')
        ? path.posix.normalize(decoded.slice(1))
        : path.posix.normalize(path.posix.join(path.posix.dirname(file), decoded));
  if (resolved.startsWith('..')) return `${target}: outside the repository`;
  const absolute = path.join(repoRoot, resolved);
  if (!existsSync(absolute)) return `${target}: ${resolved} does not exist`;
  if (anchor !== undefined && resolved.endsWith('.md') && statSync(absolute).isFile()) {
    if (!headingAnchors(readRepoFile(resolved)).has(anchor)) {
      return `${target}: ${resolved} has no heading #${anchor}`;
    }
  }
  return undefined;
}

// --- tokens the code writes, and the defaults it applies -----------------------------------

function stringsIn(value: unknown, into: Set<string>): void {
  if (typeof value === 'string') into.add(value);
  else if (Array.isArray(value)) value.forEach((item) => stringsIn(item, into));
  else if (typeof value === 'object' && value !== null) {
    Object.values(value).forEach((item) => stringsIn(item, into));
  }
}

/** Exports that hold API tokens: reasons, phases, condition types, decisions. */
const TOKEN_EXPORT = /reason|phase|condition|decision/i;

/**
 * Every string of every export whose name says it holds reasons, phases, condition types or
 * decisions (`CELL_REASONS`, `VC_PHASES`, `Decision`, ...), and every enum of the schemas.
 */
async function knownTokens(): Promise<Set<string>> {
  const tokens = new Set<string>();
  const declares = /export const (\w+)/g;
  for (const file of runtimeSources('hooks')) {
    const names = [...readRepoFile(file).matchAll(declares)]
      .map((match) => match[1] as string)
      .filter((name) => TOKEN_EXPORT.test(name));
    if (names.length === 0) continue;
    const module = (await import(pathToFileURL(path.join(repoRoot, file)).href)) as Record<
      string,
      unknown
    >;
    for (const name of names) stringsIn(module[name], tokens);
  }
  const collectEnums = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(collectEnums);
    else if (typeof node === 'object' && node !== null) {
      for (const [key, value] of Object.entries(node)) {
        if (key === 'enum') stringsIn(value, tokens);
        else collectEnums(value);
      }
    }
  };
  const schemas = path.join(repoRoot, 'hooks', 'generated', 'schemas');
  for (const file of readdirSync(schemas).filter((name) => name.endsWith('.json'))) {
    collectEnums(JSON.parse(readFileSync(path.join(schemas, file), 'utf8')));
  }
  return tokens;
}

/** `KUBECELL_*` → its default, from every exported `*DEFAULTS` map of a config module. */
async function codeDefaults(): Promise<Map<string, Set<string>>> {
  const defaults = new Map<string, Set<string>>();
  for (const file of runtimeSources('hooks').filter((name) => name.endsWith('/config.ts'))) {
    const module = (await import(pathToFileURL(path.join(repoRoot, file)).href)) as Record<
      string,
      unknown
    >;
    for (const value of Object.values(module)) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
      for (const [name, fallback] of Object.entries(value)) {
        if (!name.startsWith('KUBECELL_') || typeof fallback !== 'string') continue;
        const known = defaults.get(name) ?? new Set<string>();
        known.add(fallback);
        defaults.set(name, known);
      }
    }
  }
  return defaults;
}

const CAMEL_TOKEN = /^[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)*$/;
/** The text of `### sub` inside `## section` of a Markdown file. */
function subsection(file: string, section: string, sub: string): string {
  const text = readRepoFile(file);
  const start = text.indexOf(`\n## ${section}\n`);
  if (start === -1) throw new Error(`${file} has no "## ${section}"`);
  const end = text.indexOf('\n## ', start + 1);
  const body = text.slice(start, end === -1 ? undefined : end);
  const from = body.indexOf(`\n### ${sub}\n`);
  if (from === -1) throw new Error(`${file} "## ${section}" has no "### ${sub}"`);
  const to = body.indexOf('\n### ', from + 1);
  return body.slice(from, to === -1 ? undefined : to);
}

/**
 * Prose that lists reasons and phases as tokens (`Pass `CellFound`; Fail `CellNotFound``):
 * every CamelCase token there is a reason, phase, condition type or decision.
 */
const TOKEN_PROSE: Array<[file: string, section: string, sub: string]> = [
  ['docs/concepts.md', 'Cell', 'Conditions'],
  ['docs/concepts.md', 'Feasibility evaluation', 'Decision'],
  ['docs/concepts.md', 'Feasibility evaluation', 'The checks'],
  ['docs/concepts.md', 'VirtualCluster', 'Status'],
];

/** Tokens of other projects that the docs quote on purpose, with whose they are. */
const FOREIGN_TOKENS = new Map([['Provisioned', "k3k's reason on its Cluster's Ready condition"]]);

const TOKEN_COLUMN = /^(phases?|reasons?|condition reasons?)$/i;

// --- private paths -----------------------------------------------------------------------------

const PRIVATE_PATHS = [
  /\/work\//,
  /\/root\//,
  /\/tmp\/kubecell/,
  /\/home\/[A-Za-z0-9_.-]+/,
  /\/Users\/[A-Za-z0-9_.-]+/,
  /[A-Z]:\\Users\\/,
];

/** The documentation DESIGN.md §5 asks for, all linked from docs/README.md. */
const REQUIRED_DOCS = [
  'quickstart.md',
  'concepts.md',
  'api-reference.md',
  'autoscaling.md',
  'networking.md',
  'security.md',
  'limitations.md',
  'cell-image.md',
  'design/decisions.md',
];

describe('documentation', () => {
  it('finds the Markdown files', () => {
    expect(MARKDOWN).to.include.members(['README.md', 'docs/concepts.md']);
    expect(ALL_MARKDOWN).to.include('docs/api-reference.md');
    expect(MARKDOWN).to.not.include('docs/api-reference.md');
  });

  describe('no dead internal link', () => {
    for (const file of MARKDOWN) {
      it(file, () => {
        const dead = linksOf(file).flatMap((link) => {
          const why = deadLink(link);
          return why === undefined ? [] : [`${file}:${link.line}: ${why}`];
        });
        expect(dead).to.deep.equal([]);
      });
    }

    it('(the checker finds links, anchors and dead ones)', () => {
      const anchors = headingAnchors('# A `b` (c) d.e\n## Option 1: cert-manager\n## A b c de\n');
      expect([...anchors]).to.deep.equal(['a-b-c-de', 'option-1-cert-manager', 'a-b-c-de-1']);
      expect(deadLink({ file: 'README.md', line: 1, target: 'docs/nope.md' })).to.be.a('string');
      expect(deadLink({ file: 'README.md', line: 1, target: '#nope' })).to.be.a('string');
      expect(deadLink({ file: 'README.md', line: 1, target: '#configuration' })).to.equal(
        undefined,
      );
      expect(linksOf('README.md').length).to.be.greaterThan(3);
    });
  });

  describe('every samples/ path a doc names exists and passes kubecell validate', () => {
    const referenced = new Map<string, string[]>();
    for (const file of MARKDOWN) {
      const text = readRepoFile(file);
      for (const match of text.matchAll(/(?<![\w-])((?:\.\.\/)*samples\/[\w./-]*)(.?)/g)) {
        const [, raw = '', next = ''] = match;
        if (['*', '<', '{', '$'].includes(next)) continue; // a pattern, not a path
        const cleaned = raw.replace(/\.+$/, '');
        const sample = cleaned.startsWith('..')
          ? path.posix.normalize(path.posix.join(path.posix.dirname(file), cleaned))
          : path.posix.normalize(cleaned);
        referenced.set(sample, [...(referenced.get(sample) ?? []), file]);
      }
    }

    it('(docs name samples)', () => {
      expect(referenced.size).to.be.greaterThan(2);
    });

    for (const [sample, files] of [...referenced].sort()) {
      it(`${sample} (${[...new Set(files)].join(', ')})`, async () => {
        expect(existsSync(path.join(repoRoot, sample)), `${sample} exists`).to.equal(true);
        let out = '';
        const code = await runCli(['validate', '-f', path.join(repoRoot, sample)], {
          stdout: { write: (text: string) => (out += text) },
          stderr: { write: (text: string) => (out += text) },
          env: {},
        });
        expect(code, out).to.equal(0);
      });
    }
  });

  describe('reasons, phases and defaults are the code’s', () => {
    let tokens: Set<string>;
    let defaults: Map<string, Set<string>>;
    before(async () => {
      tokens = await knownTokens();
      defaults = await codeDefaults();
    });

    it('(the code’s tokens and defaults are found)', () => {
      for (const token of ['Ready', 'CellNotFound', 'ManagedClusterReplaced', 'Accepted']) {
        expect(tokens.has(token), token).to.equal(true);
      }
      expect(defaults.get('KUBECELL_PORT')).to.deep.equal(new Set(['8080']));
    });

    it('every token in a Phase or Reason column of a table is one the code writes', () => {
      const unknown: string[] = [];
      let checked = 0;
      for (const file of MARKDOWN) {
        for (const table of tables(readRepoFile(file))) {
          const columns = table.header
            .map((title, index) => [title.replace(/`/g, ''), index] as const)
            .filter(([title]) => TOKEN_COLUMN.test(title))
            .map(([, index]) => index);
          for (const row of table.rows) {
            for (const column of columns) {
              for (const token of backticked(row[column] ?? '').filter((t) =>
                CAMEL_TOKEN.test(t),
              )) {
                checked++;
                if (!tokens.has(token)) unknown.push(`${file}:${table.line}: ${token}`);
              }
            }
          }
        }
      }
      expect(checked).to.be.greaterThan(20);
      expect(unknown).to.deep.equal([]);
    });

    for (const [file, section, sub] of TOKEN_PROSE) {
      it(`every token of ${file} "${section}" › "${sub}" is one the code writes`, () => {
        const found = backticked(subsection(file, section, sub)).filter((t) => CAMEL_TOKEN.test(t));
        expect(found.length).to.be.greaterThan(3);
        expect(
          found.filter((token) => !tokens.has(token) && !FOREIGN_TOKENS.has(token)),
        ).to.deep.equal([]);
      });
    }

    it('every KUBECELL_* variable a doc names is read by the code', () => {
      const sources = [
        ...runtimeSources('hooks'),
        ...runtimeSources('scripts'),
        ...runtimeSources('test'),
      ]
        .map(readRepoFile)
        .join('\n');
      const unknown = MARKDOWN.flatMap((file) =>
        [...readRepoFile(file).matchAll(/\bKUBECELL_[A-Z0-9_]*[A-Z0-9]\b/g)]
          .map((match) => match[0])
          .filter((name) => !sources.includes(name))
          .map((name) => `${file}: ${name}`),
      );
      expect([...new Set(unknown)]).to.deep.equal([]);
    });

    it('every default in a Variable/Default table is the code’s', () => {
      const wrong: string[] = [];
      let checked = 0;
      for (const file of MARKDOWN) {
        for (const table of tables(readRepoFile(file))) {
          const titles = table.header.map((title) => title.replace(/`/g, '').toLowerCase());
          const variable = titles.indexOf('variable');
          const fallback = titles.indexOf('default');
          if (variable === -1 || fallback === -1) continue;
          for (const row of table.rows) {
            const name = backticked(row[variable] ?? '').find((t) => t.startsWith('KUBECELL_'));
            const documented = backticked(row[fallback] ?? '')[0];
            const known = name === undefined ? undefined : defaults.get(name);
            if (name === undefined || documented === undefined || known === undefined) continue;
            checked++;
            if (!known.has(documented)) {
              wrong.push(
                `${file}:${table.line}: ${name} documented ${documented}, code ${[...known]}`,
              );
            }
          }
        }
      }
      expect(checked).to.be.greaterThan(3);
      expect(wrong).to.deep.equal([]);
    });
  });

  describe('docs/README.md', () => {
    const index = 'docs/README.md';

    it('links every doc DESIGN.md §5 asks for, and every doc of docs/', () => {
      const linked = new Set(
        linksOf(index).map((link) =>
          path.posix.normalize(path.posix.join('docs', link.target.split('#')[0] as string)),
        ),
      );
      const expected = [
        ...REQUIRED_DOCS.map((doc) => `docs/${doc}`),
        ...ALL_MARKDOWN.filter((file) => file.startsWith('docs/') && file !== index),
      ];
      expect([...new Set(expected)].filter((doc) => !linked.has(doc)).sort()).to.deep.equal([]);
    });

    it('separates "Using KubeCell" from "Why it is built this way"', () => {
      const text = readRepoFile(index);
      const using = text.indexOf('\n## Using KubeCell');
      const why = text.indexOf('\n## Why it is built this way');
      expect(using).to.be.greaterThan(-1);
      expect(why).to.be.greaterThan(using);
      expect(text.slice(why)).to.include('design/decisions.md');
      expect(text.slice(using, why)).to.not.include('design/decisions.md');
    });
  });

  it('no private path in docs, samples, manifests or the Dockerfile', () => {
    const files = [
      ...ALL_MARKDOWN,
      ...walk('samples'),
      ...walk('manifests'),
      ...walk('metacontroller'),
      'Dockerfile',
    ];
    const found = files.flatMap((file) =>
      readRepoFile(file)
        .split('\n')
        .flatMap((line, index) =>
          PRIVATE_PATHS.some((pattern) => pattern.test(line))
            ? [`${file}:${index + 1}: ${line.trim()}`]
            : [],
        ),
    );
    expect(found).to.deep.equal([]);
  });
});
