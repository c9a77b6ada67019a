// The API tokens the code writes (condition reasons, phases, condition types, check names,
// decisions), for the tests that check the documentation against them (docs.test.ts,
// troubleshooting.test.ts). They are read from each folder's reasons module,
// hooks/<folder>/reasons.ts, every export of it: no export is picked by its name, so a renamed
// or added export is read all the same. The enums of the generated schemas are the tokens the
// API declares (phases and results among them). Unit test helper: no cluster.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from './support.js';

/** What a token looks like: `CellNotFound`, `GPUClaimNotFound`, `Ready`. */
export const TOKEN = /^[A-Z][A-Za-z0-9]+$/;

/** Every hooks/<folder>/reasons.ts, repository-relative, sorted. */
export function reasonModules(): string[] {
  return readdirSync(path.join(repoRoot, 'hooks'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `hooks/${entry.name}/reasons.ts`)
    .filter((file) => existsSync(path.join(repoRoot, file)))
    .sort();
}

/** A module's exports, by name. */
export async function exportsOf(file: string): Promise<Record<string, unknown>> {
  return (await import(pathToFileURL(path.join(repoRoot, file)).href)) as Record<string, unknown>;
}

/** Every string in a value: itself, or those of a list's items or an object's values. */
export function stringsIn(value: unknown, into: Set<string>): Set<string> {
  if (typeof value === 'string') into.add(value);
  else if (Array.isArray(value)) value.forEach((item) => stringsIn(item, into));
  else if (typeof value === 'object' && value !== null) {
    Object.values(value).forEach((item) => stringsIn(item, into));
  }
  return into;
}

/** Reasons module → every string of every one of its exports. */
export async function tokensByModule(): Promise<Map<string, Set<string>>> {
  const found = new Map<string, Set<string>>();
  for (const file of reasonModules()) {
    found.set(file, stringsIn(Object.values(await exportsOf(file)), new Set()));
  }
  return found;
}

/** Every `enum` value of the generated schemas. */
export function schemaEnums(): Set<string> {
  const tokens = new Set<string>();
  const collect = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(collect);
    else if (typeof node === 'object' && node !== null) {
      for (const [key, value] of Object.entries(node)) {
        if (key === 'enum') stringsIn(value, tokens);
        else collect(value);
      }
    }
  };
  const schemas = path.join(repoRoot, 'hooks', 'generated', 'schemas');
  for (const file of readdirSync(schemas).filter((name) => name.endsWith('.json'))) {
    collect(JSON.parse(readFileSync(path.join(schemas, file), 'utf8')));
  }
  return tokens;
}
