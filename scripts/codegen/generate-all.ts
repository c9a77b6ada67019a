import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { renderApiReference } from './api-reference.js';
import { bundleKind } from './bundle.js';
import { renderCrd } from './crd.js';
import { hashHeader } from './header.js';
import { loadSchemaSource, type SchemaNode } from './schema-source.js';
import { renderCommonTypes, renderKindTypes } from './typescript-types.js';
import { renderValidators } from './validators.js';

/** Folders the generator owns entirely: verify treats any other file in them as drift. */
export const GENERATED_DIRS = ['manifests/crds', 'hooks/generated'];
/** Single generated files that live among hand-written ones. */
export const GENERATED_FILES = ['docs/api-reference.md'];

/** Renders every generated file from schemas/, as repo-relative path → content. */
export async function renderAll(repoRoot: string): Promise<Map<string, string>> {
  const source = loadSchemaSource(path.join(repoRoot, 'schemas'));
  const files = new Map<string, string>();
  const bundledByKind = new Map<string, SchemaNode>();
  const kindsWithBundles = source.kinds.map((kind) => ({
    kind,
    bundled: bundleKind(kind, source),
  }));

  for (const { kind, bundled } of kindsWithBundles) {
    bundledByKind.set(kind.crd.kind, bundled);
    const crd = renderCrd(kind, bundled);
    files.set(
      `manifests/crds/kubecell.io_${kind.crd.plural}.yaml`,
      hashHeader + stringify(crd, { lineWidth: 0, aliasDuplicateObjects: false }),
    );
    files.set(`hooks/generated/schemas/${kind.stem}.json`, `${JSON.stringify(bundled, null, 2)}\n`);
    files.set(`hooks/generated/types/${kind.stem}.ts`, await renderKindTypes(kind.source, source));
  }
  files.set('hooks/generated/types/common.ts', await renderCommonTypes(source));
  files.set(
    'hooks/generated/types/index.ts',
    [
      "export * from './common.js';",
      ...source.kinds.map((kind) => `export * from './${kind.stem}.js';`),
    ].join('\n') + '\n',
  );
  const validators = renderValidators(bundledByKind);
  files.set('hooks/generated/validators.js', validators.js);
  files.set('hooks/generated/validators.d.ts', validators.dts);
  files.set('docs/api-reference.md', renderApiReference(kindsWithBundles));
  return files;
}

export function writeAll(outRoot: string, files: Map<string, string>): void {
  for (const [relative, content] of files) {
    const target = path.join(outRoot, relative);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
}
