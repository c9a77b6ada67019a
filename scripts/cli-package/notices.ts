/**
 * THIRD-PARTY-NOTICES.md of the `kubecell` package: the bundle (bundle.ts) carries code of the npm
 * packages it imports, and their licences (MIT, ISC, Apache-2.0, ...) ask that their notices go
 * with it. One section per package esbuild took a file from, with its licence files verbatim.
 */
import type { Metafile } from 'esbuild';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

const LICENCE_FILE = /^(licen[cs]e|copying|notice)([.-].*)?$/i;

/** The package directories (relative to the repository) the bundle's inputs come from. */
export function bundledPackageDirs(metafile: Metafile): string[] {
  const dirs = new Set<string>();
  for (const input of Object.keys(metafile.inputs)) {
    const at = input.lastIndexOf('node_modules/');
    if (at < 0) continue;
    const parts = input.slice(at + 'node_modules/'.length).split('/');
    const name = parts[0]?.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
    dirs.add(`${input.slice(0, at)}node_modules/${name}`);
  }
  return [...dirs].sort();
}

interface PackageInfo {
  name: string;
  version: string;
  license?: string;
}

function section(repoRoot: string, dir: string): string {
  const absolute = path.join(repoRoot, dir);
  const info = JSON.parse(readFileSync(path.join(absolute, 'package.json'), 'utf8')) as PackageInfo;
  const files = readdirSync(absolute)
    .filter((file) => LICENCE_FILE.test(file))
    .sort();
  const texts = files.map(
    (file) =>
      `${file}:\n\n\`\`\`text\n${readFileSync(path.join(absolute, file), 'utf8').trim()}\n\`\`\``,
  );
  return [
    `## ${info.name} ${info.version}`,
    `License: ${info.license ?? 'not stated in its package.json'}`,
    ...(texts.length > 0 ? texts : ['(the package ships no licence file)']),
  ].join('\n\n');
}

/** The notices file for the packages a bundle holds. */
export function thirdPartyNotices(repoRoot: string, metafile: Metafile): string {
  const dirs = bundledPackageDirs(metafile);
  return [
    '# Third-party notices',
    `The \`kubecell\` program (kubecell.mjs) includes code of these ${dirs.length} npm packages.`,
    ...dirs.map((dir) => section(repoRoot, dir)),
  ].join('\n\n');
}
