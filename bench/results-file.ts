/** bench/results.json and bench/results.md on disk: read, rendered against the tree, written. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as prettier from 'prettier';
import { gitLookup, partCodes, type CodeLookup } from './part-code.js';
import { REPO_ROOT } from './processes.js';
import { markdown, targets, type Results } from './report.js';

export const RESULTS_JSON = path.join(REPO_ROOT, 'bench', 'results.json');
export const RESULTS_MD = path.join(REPO_ROOT, 'bench', 'results.md');

/** The results a file holds; undefined when there is none or it is not JSON. */
export function readResults(file = RESULTS_JSON): Results | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Results;
  } catch {
    return undefined;
  }
}

/**
 * Written as the repository's Prettier settings format it, so that `npm run lint` stays clean
 * (the settings of bench/, also for a copy written elsewhere).
 */
export async function writeFormatted(file: string, text: string): Promise<void> {
  const options = (await prettier.resolveConfig(path.join(REPO_ROOT, 'bench', 'x.md'))) ?? {};
  writeFileSync(file, await prettier.format(text, { ...options, filepath: file }));
}

/**
 * results.md for `results`, each part marked against the code `lookup` sees. The targets are
 * judged again from the figures (the same function the run used), so that each carries its part.
 */
export function renderMarkdown(results: Results, lookup: CodeLookup = gitLookup(REPO_ROOT)) {
  const judged: Results = { ...results, targets: targets(results) };
  return markdown(judged, { parts: partCodes(judged, lookup), present: lookup.present });
}

/** results.md (or a copy elsewhere) written for `results`, marked against the present tree. */
export async function writeResultsMarkdown(results: Results, file = RESULTS_MD): Promise<void> {
  await writeFormatted(file, renderMarkdown(results));
}
