/**
 * The convention by which README.md and docs/performance.md say which benchmark run their figures
 * come from (docs/performance.md, "Method: which code a figure measured"):
 *
 *   <!-- bench: part=idle commit=617cf8a -->         figures of the idle part, measured on this
 *                                                    code: results.json's idle part must be
 *                                                    CURRENT and of commit 617cf8a
 *   <!-- bench: part=idle commit=3c0563c stale -->   figures measured on older code, shown as such:
 *                                                    no "yes" in a table's Met column there
 *
 * A marker covers the section it stands in (from its heading to the next heading of the same or a
 * higher level, subsections included). In docs/performance.md every section that quotes figures
 * (a table row with a number, a number followed by ×, or a bold number) must be covered by one.
 */
import { PARTS } from '../../bench/report.js';
import { column, tables, withoutFences } from '../install/markdown.js';

export interface Marker {
  /** 1-based line. */
  line: number;
  part: string;
  commit: string;
  stale: boolean;
}

/** A part of results.json as bench/part-code.ts marks it against the tree. */
export interface PartMark {
  part: string;
  status: 'CURRENT' | 'STALE';
  gitCommit?: string;
  reason?: string;
}

interface Section {
  /** 0-based lines: the heading (or -1 before the first heading) to the end, exclusive. */
  start: number;
  end: number;
  level: number;
}

const MARKER = /<!--\s*bench:(.*?)-->/;
const HEADING = /^(#{1,6})\s/;

function parseMarker(body: string, line: number): Marker | string {
  const words = body.trim().split(/\s+/);
  const fields = new Map<string, string>(
    words.map((word): [string, string] => {
      const [key = '', value = ''] = word.split('=', 2);
      return [key, value];
    }),
  );
  const unknown = [...fields.keys()].filter((key) => !['part', 'commit', 'stale'].includes(key));
  const part = fields.get('part') ?? '';
  const commit = fields.get('commit') ?? '';
  if (unknown.length > 0 || !(PARTS as readonly string[]).includes(part))
    return `line ${line}: \`<!-- bench:${body}-->\`: expected part=<${PARTS.join('|')}> commit=<sha> and optionally stale`;
  if (!/^[0-9a-f]{7,40}$/.test(commit))
    return `line ${line}: marker of part ${part}: commit=<the commit of the run the figures come from, 7 to 40 hex digits>`;
  return { line, part, commit, stale: fields.has('stale') };
}

/** The markers of a text (fenced code skipped), and the malformed ones as problems. */
export function markersOf(text: string): { markers: Marker[]; problems: string[] } {
  const markers: Marker[] = [];
  const problems: string[] = [];
  withoutFences(text)
    .split('\n')
    .forEach((line, index) => {
      // A marker quoted in inline code (the convention's own description) is not one.
      const body = MARKER.exec(line.replace(/`[^`]*`/g, ''))?.[1];
      if (body === undefined) return;
      const parsed = parseMarker(body, index + 1);
      if (typeof parsed === 'string') problems.push(parsed);
      else markers.push(parsed);
    });
  return { markers, problems };
}

/** The section a 0-based line is in: from the nearest heading above to the next of its level. */
function sectionAt(lines: string[], index: number): Section {
  let start = index;
  while (start >= 0 && !HEADING.test(lines[start] as string)) start--;
  const level = start < 0 ? 0 : (HEADING.exec(lines[start] as string)?.[1]?.length ?? 0);
  let end = Math.max(start, index) + 1;
  while (end < lines.length) {
    const found = HEADING.exec(lines[end] as string);
    if (found && (found[1] as string).length <= level) break;
    if (found && level === 0) break;
    end++;
  }
  return { start, end, level };
}

const quotesFigures = (line: string) =>
  (/^\s*\|/.test(line) && !/^\s*\|?\s*:?-{3}/.test(line) && /\d/.test(line)) ||
  /\d×/.test(line) ||
  /\*\*[^*]*\d[^*]*\*\*/.test(line);

/** The headings whose own text (up to the next heading of any level) quotes figures, uncovered. */
function uncovered(lines: string[], covered: Section[]): string[] {
  const found: string[] = [];
  let heading = -1;
  for (let i = 0; i <= lines.length; i++) {
    if (i < lines.length && !HEADING.test(lines[i] as string)) continue;
    const own = lines.slice(Math.max(heading, 0), i);
    const inScope = covered.some((s) => s.start <= heading && heading < s.end);
    if (own.some(quotesFigures) && !inScope)
      found.push(heading < 0 ? 'the text before the first heading' : (lines[heading] as string));
    heading = i;
  }
  return found;
}

/** A table with a Met column saying a bare "yes" within the lines of a section. */
function metYes(lines: string[], section: Section): boolean {
  const text = lines.slice(Math.max(section.start, 0), section.end).join('\n');
  return tables(text).some((table) => {
    const met = column(table, /^met$/i);
    return (
      met >= 0 &&
      table.rows.some((row) => (row[met] ?? '').replace(/\*/g, '').trim().toLowerCase() === 'yes')
    );
  });
}

function markerProblem(marker: Marker, parts: PartMark[], section: Section, lines: string[]) {
  const where = `line ${marker.line} (${section.start < 0 ? 'top' : lines[section.start]})`;
  const part = parts.find((p) => p.part === marker.part);
  if (marker.stale)
    return metYes(lines, section)
      ? `${where}: part ${marker.part} is marked stale, but a Met column there says "yes": a figure measured on older code is not shown as met (write "yes, on older code")`
      : undefined;
  if (part === undefined)
    return `${where}: quotes part ${marker.part} as current, but bench/results.json has no ${marker.part} part: run \`npm run bench -- --only=${marker.part}\`, or mark the marker stale`;
  if (part.status !== 'CURRENT')
    return `${where}: quotes part ${marker.part} as current, but bench/results.json's ${marker.part} part (commit ${part.gitCommit ?? '?'}) is STALE: ${part.reason ?? ''}. Run \`npm run bench -- --only=${marker.part}\` and update the figures, or add \`stale\` to the marker and say in the text that they were measured on older code`;
  const recorded = part.gitCommit ?? '';
  if (!(recorded.startsWith(marker.commit) || marker.commit.startsWith(recorded)) || !recorded)
    return `${where}: quotes part ${marker.part} of commit ${marker.commit}, but bench/results.json's ${marker.part} part was measured on commit ${recorded || '?'}: update the figures and the marker from bench/results.md`;
  return undefined;
}

/**
 * What is wrong with a document's figures: a marker quoting a STALE part (or another run than
 * results.json's) as current, a stale section showing a target as met, a malformed marker, and
 * with `coverage`, a section quoting figures without a marker.
 */
export function figureProblems(text: string, parts: PartMark[], coverage: boolean): string[] {
  const lines = withoutFences(text).split('\n');
  const { markers, problems } = markersOf(text);
  const sections = markers.map((marker) => sectionAt(lines, marker.line - 1));
  markers.forEach((marker, i) => {
    const problem = markerProblem(marker, parts, sections[i] as Section, lines);
    if (problem !== undefined) problems.push(problem);
  });
  if (coverage) {
    for (const heading of uncovered(lines, sections))
      problems.push(
        `"${heading}" quotes figures without a marker: add <!-- bench: part=<part> commit=<sha> --> (with stale when measured on older code)`,
      );
  }
  return problems;
}
