// The documentation set, checked in CI (unit test: no cluster):
// - no dead internal link: relative links of every Markdown file resolve to files, anchors to
//   headings (GitHub's slugs);
// - every samples/ path a doc names exists and passes `kubecell validate`;
// - reasons and phases the docs list (tables with a Phase or Reason column, and the prose lists
//   of docs/concepts.md) are tokens the code writes (api-tokens.ts: every export of every
//   hooks/*/reasons.ts, and the schemas' enums), and every token of a reasons module is listed
//   there; every row of every Variable/Default table gives the code's default (settings.ts: as
//   the settings loaders apply it), or says unset where the code has none, and every variable a
//   doc names is read by the code;
// - docs/README.md indexes every doc DESIGN.md §5 asks for;
// - no private path (a home directory, /work/, /root/, /tmp/kubecell) in docs, samples or
//   manifests.
import { expect } from 'chai';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { runCli } from '../../hooks/cli/validate.js';
import { TOKEN, schemaEnums, tokensByModule } from './api-tokens.js';
import {
  allMarkdown,
  backticked,
  handWrittenMarkdown,
  headingAnchors,
  linesMatching,
  readRepoFile,
  repoFiles,
  tables,
  withoutFences,
} from './markdown.js';
import {
  defaultsTableProblems,
  isDefaultsTable,
  settingsOfLoaders,
  type Setting,
} from './settings.js';
import { repoRoot, runtimeSources } from './support.js';

const ALL_MARKDOWN = allMarkdown();
/** Written by hand: the generated API reference is checked by `npm run verify` instead. */
const MARKDOWN = handWrittenMarkdown();

/** Inline code spans blanked, so a link written as code is not taken for a link. */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)[^`]*?\1/g, (span) => ' '.repeat(span.length));
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

// --- tokens the code writes --------------------------------------------------------------------

/** The tokens the code writes: every string of every hooks/<folder>/reasons.ts, and the enums of the schemas. */
function knownTokens(byModule: ReadonlyMap<string, ReadonlySet<string>>): Set<string> {
  const tokens = schemaEnums();
  for (const module of byModule.values()) module.forEach((token) => tokens.add(token));
  return tokens;
}

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

/** A cell of a Phase or Reason column, where it is. */
interface TokenCell {
  where: string;
  cell: string;
}

/** Every cell of every Phase or Reason column of the docs' tables. */
function tokenCells(): TokenCell[] {
  return MARKDOWN.flatMap((file) =>
    tables(readRepoFile(file)).flatMap((table) => {
      const columns = table.header
        .map((title, index) => [title.replace(/`/g, '').trim(), index] as const)
        .filter(([title]) => TOKEN_COLUMN.test(title))
        .map(([, index]) => index);
      return table.rows.flatMap((row) =>
        columns.map((column) => ({ where: `${file}:${table.line}`, cell: row[column] ?? '' })),
      );
    }),
  );
}

/** The tokens of a prose list of TOKEN_PROSE. */
function proseTokens([file, section, sub]: (typeof TOKEN_PROSE)[number]): string[] {
  return backticked(subsection(file, section, sub)).filter((token) => TOKEN.test(token));
}

// --- private paths -----------------------------------------------------------------------------

// An absolute path starts the token: `pkg/work/spoke/...` (OCM's source) is not /work/.
const PRIVATE_PATHS = [
  /(^|[^\w.-])\/work\//,
  /(^|[^\w.-])\/root\//,
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
    let byModule: Map<string, Set<string>>;
    let tokens: Set<string>;
    let settings: Map<string, Setting>;
    before(async () => {
      byModule = await tokensByModule();
      tokens = knownTokens(byModule);
      settings = settingsOfLoaders();
    });

    it('(the code’s tokens and defaults are found)', () => {
      expect([...byModule.keys()]).to.include.members([
        'hooks/cell/reasons.ts',
        'hooks/feasibility/reasons.ts',
        'hooks/gpucellpool/reasons.ts',
        'hooks/plan/reasons.ts',
        'hooks/virtualcluster/reasons.ts',
      ]);
      const empty = [...byModule].filter(([, found]) => found.size === 0).map(([file]) => file);
      expect(empty, 'reasons modules without a token').to.deep.equal([]);
      for (const token of ['Ready', 'CellNotFound', 'ManagedClusterReplaced', 'Accepted']) {
        expect(tokens.has(token), token).to.equal(true);
      }
      expect(settings.get('KUBECELL_PORT')?.defaults).to.deep.equal(new Set(['8080']));
      expect(settings.get('KUBECELL_TLS_CERT_FILE')?.defaults).to.deep.equal(new Set());
    });

    it('every token in a Phase or Reason column of a table is one the code writes', () => {
      const wrong = tokenCells().flatMap(({ where, cell }) => {
        const spans = backticked(cell);
        if (spans.length === 0) return [`${where}: "${cell}" names no token`];
        return spans.flatMap((span) => {
          if (!TOKEN.test(span)) return [`${where}: \`${span}\` is not a token`];
          return tokens.has(span) ? [] : [`${where}: ${span} is not written by the code`];
        });
      });
      expect(wrong).to.deep.equal([]);
    });

    for (const prose of TOKEN_PROSE) {
      const [file, section, sub] = prose;
      it(`every token of ${file} "${section}" › "${sub}" is one the code writes`, () => {
        const found = proseTokens(prose);
        expect(found, 'tokens listed').to.not.deep.equal([]);
        expect(
          found.filter((token) => !tokens.has(token) && !FOREIGN_TOKENS.has(token)),
        ).to.deep.equal([]);
      });
    }

    it('every token of every hooks/*/reasons.ts is listed in a Phase or Reason column or a token list', () => {
      const documented = new Set([
        ...tokenCells().flatMap(({ cell }) => backticked(cell)),
        ...TOKEN_PROSE.flatMap(proseTokens),
      ]);
      const undocumented = [...byModule].flatMap(([file, found]) =>
        [...found].filter((token) => !documented.has(token)).map((token) => `${file}: ${token}`),
      );
      expect(undocumented).to.deep.equal([]);
    });

    it('every KUBECELL_* variable a doc names is read by the code', () => {
      const sources = [
        ...runtimeSources('hooks'),
        ...runtimeSources('scripts'),
        ...runtimeSources('harness'),
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

    it('(the defaults check names every row it cannot match)', () => {
      const table = tables(
        [
          '| Variable | Default | Meaning |',
          '| --- | --- | --- |',
          '| `KUBECELL_PORT` | `8080` | right |',
          '| `KUBECELL_TLS_CERT_FILE` | unset | right: no default |',
          '| `KUBECONFIG` | (unset) | right: credentials |',
          '| `KUBECELL_PORT` | `80` | wrong value |',
          '| `KUBECELL_PORT` | unset | has a default |',
          '| `KUBECELL_TLS_KEY_FILE` | `tls.key` | has none |',
          '| `KUBECELL_NO_SUCH_THING` | `1` | read by nothing |',
          '| `KUBECELL_LOG_LEVEL` | info | no backticks |',
          '| the port | `8080` | no variable |',
        ].join('\n'),
      )[0];
      expect(table !== undefined && isDefaultsTable(table)).to.equal(true);
      const problems = defaultsTableProblems(table!, settings, 'x.md');
      expect(problems.map((problem) => problem.replace(/^x\.md:1: /, ''))).to.deep.equal([
        'KUBECELL_PORT: documented 80, the code’s default is 8080',
        'KUBECELL_PORT: documented unset, the code’s default is 8080',
        'KUBECELL_TLS_KEY_FILE: documented tls.key, the code has no default',
        'KUBECELL_NO_SUCH_THING: no settings loader of the hook server reads it',
        'KUBECELL_LOG_LEVEL: the default "info" is neither a value in backticks nor unset/none/required',
        'the row "the port | `8080` | no variable" names no variable',
      ]);
    });

    it('every row of every Variable/Default table gives the code’s default, or unset for none', () => {
      const found = MARKDOWN.flatMap((file) =>
        tables(readRepoFile(file))
          .filter(isDefaultsTable)
          .map((table) => ({ file, table })),
      );
      expect(found.map(({ file }) => file)).to.include('README.md');
      expect(
        found.flatMap(({ file, table }) => defaultsTableProblems(table, settings, file)),
      ).to.deep.equal([]);
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
      ...repoFiles('samples'),
      ...repoFiles('manifests'),
      ...repoFiles('metacontroller'),
      'Dockerfile',
    ];
    expect(linesMatching(files, PRIVATE_PATHS)).to.deep.equal([]);
  });
});
