/**
 * `npm run bench:report`: writes bench/results.md again from bench/results.json, without running
 * anything, so that each part's CURRENT or STALE mark follows the code in the tree now (after a
 * commit that changes hooks/, schemas/ or metacontroller/, every part measured before it turns
 * STALE).
 *
 *   npm run bench:report                          bench/results.json → bench/results.md
 *   npm run bench:report -- --out=/tmp/results.md  somewhere else (bench/results.md untouched)
 *   npm run bench:report -- --in=<file.json>       another results file
 */
import path from 'node:path';
import { readResults, RESULTS_JSON, RESULTS_MD, writeResultsMarkdown } from './results-file.js';

function option(argv: string[], name: string): string | undefined {
  const arg = argv.find((a) => a.startsWith(`--${name}=`));
  return arg?.slice(name.length + 3);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const unknown = argv.filter((a) => !/^--(in|out)=./.test(a));
  if (unknown.length > 0)
    throw new Error(
      `unknown argument ${unknown.join(' ')}; use --in=<results.json> --out=<results.md>`,
    );
  const input = path.resolve(option(argv, 'in') ?? RESULTS_JSON);
  const output = path.resolve(option(argv, 'out') ?? RESULTS_MD);
  const results = readResults(input);
  if (results === undefined)
    throw new Error(`${input}: no results (missing or not JSON); run \`npm run bench\` first`);
  await writeResultsMarkdown(results, output);
  process.stderr.write(`wrote ${output} from ${input}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(
    `bench:report failed: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
});
