import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** A JSON Schema node as written in `schemas/`; loose on purpose, the files are the contract. */
export type SchemaNode = { [keyword: string]: unknown };

/** What a kind file declares about its CustomResourceDefinition beyond the field schema. */
export interface CrdInfo {
  kind: string;
  plural: string;
  singular: string;
  listKind: string;
  scope: 'Namespaced' | 'Cluster';
  shortNames: string[];
  categories: string[];
  printerColumns: PrinterColumn[];
}

export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  priority?: number;
  format?: string;
}

export interface KindSchema {
  /** File stem in schemas/, e.g. `cell` for schemas/cell.schema.json. */
  stem: string;
  crd: CrdInfo;
  /** The schema exactly as written, `$ref`s intact. */
  source: SchemaNode;
}

export interface SchemaSource {
  common: SchemaNode;
  kinds: KindSchema[];
}

export const API_GROUP = 'kubecell.io';
export const API_VERSION = 'v1alpha1';
export const COMMON_FILE = 'common.schema.json';
const KIND_SUFFIX = '.schema.json';

export function loadSchemaSource(schemaDir: string): SchemaSource {
  const read = (file: string): SchemaNode =>
    JSON.parse(readFileSync(path.join(schemaDir, file), 'utf8')) as SchemaNode;
  const kindFiles = readdirSync(schemaDir)
    .filter((file) => file.endsWith(KIND_SUFFIX) && file !== COMMON_FILE)
    .sort();
  const kinds = kindFiles.map((file) => {
    const source = read(file);
    const crd = source['x-kubecell-crd'] as CrdInfo | undefined;
    if (!crd) {
      throw new Error(
        `schemas/${file}: missing "x-kubecell-crd"; every kind file declares its CRD`,
      );
    }
    return { stem: file.slice(0, -KIND_SUFFIX.length), crd, source };
  });
  return { common: read(COMMON_FILE), kinds };
}

/** The definition a `common.schema.json#/definitions/<name>` reference points at. */
export function resolveRef(common: SchemaNode, ref: string): { name: string; node: SchemaNode } {
  const prefix = `${COMMON_FILE}#/definitions/`;
  const localPrefix = '#/definitions/';
  const name = ref.startsWith(prefix)
    ? ref.slice(prefix.length)
    : ref.startsWith(localPrefix)
      ? ref.slice(localPrefix.length)
      : undefined;
  const definitions = common['definitions'] as Record<string, SchemaNode> | undefined;
  const node = name === undefined ? undefined : definitions?.[name];
  if (name === undefined || !node) {
    throw new Error(`unresolvable $ref "${ref}": only ${prefix}<name> is supported`);
  }
  return { name, node };
}

/**
 * Replaces every `$ref` with what it points at, recursively. A `description` beside a `$ref`
 * wins over the definition's own, so a field can say what it means in its place.
 * `onRef` lets a caller substitute something else for a reference (TypeScript generation
 * substitutes the named type instead of a structural copy).
 */
export function inlineRefs(
  node: unknown,
  common: SchemaNode,
  onRef?: (name: string, definition: SchemaNode, siblings: SchemaNode) => SchemaNode | undefined,
): unknown {
  if (Array.isArray(node)) return node.map((item) => inlineRefs(item, common, onRef));
  if (node === null || typeof node !== 'object') return node;
  const schema = node as SchemaNode;
  if (typeof schema['$ref'] === 'string') {
    const { $ref, ...siblings } = schema;
    const { name, node: definition } = resolveRef(common, $ref as string);
    const substituted = onRef?.(name, definition, siblings);
    if (substituted) return substituted;
    const inlined = inlineRefs(definition, common, onRef) as SchemaNode;
    return { ...inlined, ...siblings };
  }
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(schema)) out[key] = inlineRefs(value, common, onRef);
  return out;
}
