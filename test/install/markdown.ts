// Finding the repository's Markdown files and reading the tables and sections of a document, for
// the tests that check a document against the code (troubleshooting reasons, metrics, the README
// configuration table, the claims of doc-claims.test.ts).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './support.js';

/** A repository file's text. */
export function readRepoFile(file: string): string {
  return readFileSync(path.join(repoRoot, file), 'utf8');
}

const SKIPPED_DIRS = new Set(['node_modules', '.cache', '.git', 'dist']);

/** Repository-relative files below `dir` (skipping node_modules, caches, .git), sorted. */
export function repoFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(path.join(repoRoot, dir), { withFileTypes: true })) {
    if (SKIPPED_DIRS.has(entry.name)) continue;
    const file = dir === '.' ? entry.name : path.posix.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...repoFiles(file));
    else if (entry.isFile()) files.push(file);
  }
  return files.sort();
}

/** Whether a file says, in its first lines, that it is generated. */
function isGenerated(file: string): boolean {
  return /Code generated .*DO NOT EDIT/.test(readRepoFile(file).split('\n', 3).join('\n'));
}

/** Every Markdown file of the repository, generated ones included. */
export function allMarkdown(): string[] {
  return repoFiles('.').filter((file) => file.endsWith('.md'));
}

/** The Markdown files written by hand (not the generated API reference). */
export function handWrittenMarkdown(): string[] {
  return allMarkdown().filter((file) => !isGenerated(file));
}

/** `<file>:<line>: <text>` of every line of `files` that one of `patterns` matches. */
export function linesMatching(files: readonly string[], patterns: readonly RegExp[]): string[] {
  return files.flatMap((file) =>
    readRepoFile(file)
      .split('\n')
      .flatMap((line, index) =>
        patterns.some((pattern) => pattern.test(line))
          ? [`${file}:${index + 1}: ${line.trim()}`]
          : [],
      ),
  );
}

/** The text with fenced code blocks blanked (line numbers kept). */
export function withoutFences(text: string): string {
  let fence: string | undefined;
  return text
    .split('\n')
    .map((line) => {
      const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence === undefined && marker !== undefined) {
        fence = marker;
        return '';
      }
      if (fence !== undefined) {
        if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) {
          fence = undefined;
        }
        return '';
      }
      return line;
    })
    .join('\n');
}

/** GitHub's anchor of a heading (github-slugger), duplicates numbered. */
export function headingAnchors(text: string): Set<string> {
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

/**
 * The part of `text` under the heading `title` of the given level (`##` is 2), up to the next
 * heading of that level or a higher one; undefined when there is no such heading.
 */
export function section(text: string, level: number, title: string): string | undefined {
  const lines = withoutFences(text).split('\n');
  const start = lines.findIndex((line) => line === `${'#'.repeat(level)} ${title}`);
  if (start === -1) return undefined;
  const end = lines.findIndex(
    (line, index) => index > start && new RegExp(`^#{1,${level}}\\s`).test(line),
  );
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n');
}

/** The titles of the headings of one level, in order. */
export function headings(text: string, level: number): string[] {
  const pattern = new RegExp(`^#{${level}}\\s+(.*?)\\s*$`);
  return withoutFences(text)
    .split('\n')
    .flatMap((line) => {
      const match = pattern.exec(line);
      return match ? [match[1] as string] : [];
    });
}

export interface Table {
  /** 1-based line of the header, within the text given. */
  line: number;
  header: string[];
  rows: string[][];
}

function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim());
}

/** Every pipe table of the text (fenced code skipped). */
export function tables(text: string): Table[] {
  const lines = withoutFences(text).split('\n');
  const found: Table[] = [];
  for (let i = 0; i + 1 < lines.length; i++) {
    const header = lines[i] as string;
    if (!header.trim().startsWith('|') || !/^\s*\|?\s*:?-{3,}/.test(lines[i + 1] as string)) {
      continue;
    }
    const table: Table = { line: i + 1, header: cells(header), rows: [] };
    let j = i + 2;
    for (; j < lines.length && (lines[j] as string).trim().startsWith('|'); j++) {
      table.rows.push(cells(lines[j] as string));
    }
    found.push(table);
    i = j;
  }
  return found;
}

/** The index of the column whose title (backticks and case aside) matches, or -1. */
export function column(table: Table, title: RegExp): number {
  return table.header.findIndex((cell) => title.test(cell.replace(/`/g, '').trim()));
}

/** The contents of the inline code spans of a text. */
export function backticked(text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1] as string);
}
