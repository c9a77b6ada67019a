/** The shipped TypeScript modules of hooks/, and their relative imports, read from the sources. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const HOOKS = path.join(REPO_ROOT, 'hooks');

/** A module the image ships: not a test, not a test helper, not generated. */
export function isShippedModule(relative: string): boolean {
  return (
    relative.endsWith('.ts') &&
    !relative.endsWith('.test.ts') &&
    !relative.endsWith('.d.ts') &&
    path.basename(relative) !== 'testing.ts' &&
    !relative.startsWith('hooks/generated/')
  );
}

/** Every shipped module under hooks/, relative to the repository (`hooks/cell/status.ts`). */
export function shippedModules(): string[] {
  return readdirSync(HOOKS, { recursive: true, encoding: 'utf8' })
    .map((file) => path.posix.join('hooks', file.split(path.sep).join('/')))
    .filter(isShippedModule)
    .sort();
}

const IMPORT =
  /(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** The repository paths `module` imports relatively (`.js` specifiers mapped to their `.ts`). */
export function relativeImports(module: string): string[] {
  const text = readFileSync(path.join(REPO_ROOT, module), 'utf8');
  const found = new Set<string>();
  for (const match of text.matchAll(IMPORT)) {
    const specifier = (match[1] ?? match[2]) as string;
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(module), specifier));
    found.add(target.replace(/\.js$/, '.ts'));
  }
  return [...found].sort();
}

/** The folder right under hooks/ a module lives in; `main` for hooks/main.ts. */
export function folderOf(module: string): string {
  const parts = module.split('/');
  return parts.length > 2 ? (parts[1] as string) : 'main';
}
