// Reading the tables and sections of a Markdown document, for the tests that check a document
// against the code (troubleshooting reasons, metrics, the README configuration table).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './support.js';

/** A repository file's text. */
export function readRepoFile(file: string): string {
  return readFileSync(path.join(repoRoot, file), 'utf8');
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
