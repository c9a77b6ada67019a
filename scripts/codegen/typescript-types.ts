import { compile, type Options } from 'json-schema-to-typescript';
import { slashHeader } from './header.js';
import { inlineRefs, type SchemaNode, type SchemaSource } from './schema-source.js';

const COMPILE_OPTIONS: Partial<Options> = {
  bannerComment: '',
  additionalProperties: false,
  unknownAny: true,
  strictIndexSignatures: true,
  format: false,
  // maxItems bounds exist for the apiserver's CEL cost estimate; as tuples they would be noise.
  maxItems: -1,
};

/** Keywords that constrain a string's value, not its type. */
const VALUE_KEYWORDS = new Set(['format', 'pattern', 'minLength', 'maxLength']);

function constrainsValueOnly(branch: unknown): boolean {
  return (
    typeof branch === 'object' &&
    branch !== null &&
    Object.keys(branch).every((keyword) => VALUE_KEYWORDS.has(keyword))
  );
}

/**
 * Drops an `anyOf` whose branches only constrain the value (`anyOf` of formats and a pattern, as
 * an address has): the type beside it is the whole TypeScript type, and json-schema-to-typescript
 * would read each untyped branch as an object.
 */
export function withoutValueBranches(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutValueBranches);
  if (node === null || typeof node !== 'object') return node;
  const out: SchemaNode = {};
  for (const [keyword, value] of Object.entries(node)) {
    if (keyword === 'anyOf' && Array.isArray(value) && value.every(constrainsValueOnly)) continue;
    out[keyword] = withoutValueBranches(value);
  }
  return out;
}

function definitionsOf(source: SchemaSource): Record<string, SchemaNode> {
  return (source.common['definitions'] ?? {}) as Record<string, SchemaNode>;
}

function titleOf(name: string, definition: SchemaNode): string {
  const title = definition['title'];
  if (typeof title !== 'string') {
    throw new Error(
      `common.schema.json#/definitions/${name} needs a "title": it names the TypeScript type`,
    );
  }
  return title;
}

/**
 * A reference to a shared definition becomes its named type, not a structural copy, so every kind
 * shares one `Condition` rather than `Condition1`, `Condition2`...
 */
function referToNamedType() {
  return (name: string, definition: SchemaNode, siblings: SchemaNode): SchemaNode => ({
    ...siblings,
    tsType: titleOf(name, definition),
  });
}

export async function renderCommonTypes(source: SchemaSource): Promise<string> {
  const parts: string[] = [];
  for (const [name, definition] of Object.entries(definitionsOf(source)).sort(([a], [b]) =>
    a.localeCompare(b),
  )) {
    // Inline the definition's own refs to other definitions as named types too.
    const schema = withoutValueBranches(
      inlineRefs(definition, source.common, referToNamedType()),
    ) as SchemaNode;
    parts.push(
      await compile(schema as never, titleOf(name, definition), {
        ...COMPILE_OPTIONS,
        declareExternallyReferenced: true,
      }),
    );
  }
  return `${slashHeader}\n${parts.join('\n')}`;
}

/** Titles of shared definitions that the generated body refers to without declaring. */
function referencedCommonTitles(body: string, source: SchemaSource): string[] {
  const titles = Object.entries(definitionsOf(source)).map(([name, node]) => titleOf(name, node));
  return titles.filter((title) => new RegExp(`\\b${title}\\b`).test(body)).sort();
}

export async function renderKindTypes(
  kind: SchemaNode & { title?: unknown },
  source: SchemaSource,
): Promise<string> {
  const withNamedRefs = withoutValueBranches(
    inlineRefs(kind, source.common, referToNamedType()),
  ) as SchemaNode;
  const schema = Object.fromEntries(
    Object.entries(withNamedRefs).filter(
      ([keyword]) => keyword !== 'x-kubecell-crd' && keyword !== 'definitions',
    ),
  );
  const properties = (schema['properties'] ?? {}) as Record<string, SchemaNode>;
  const title = String(schema['title']);
  const objectSchema: SchemaNode = {
    ...schema,
    properties: {
      apiVersion: { type: 'string', const: 'kubecell.io/v1alpha1' },
      kind: { type: 'string', const: title },
      metadata: { tsType: 'ObjectMeta' },
      ...properties,
    },
    required: ['apiVersion', 'kind', 'metadata', ...((schema['required'] as string[]) ?? [])],
  };
  const body = await compile(objectSchema as never, title, COMPILE_OPTIONS);
  const common = referencedCommonTitles(body, source);
  const imports = [
    "import type { ObjectMeta } from '../../metacontroller/protocol.js';",
    common.length ? `import type { ${common.join(', ')} } from './common.js';` : '',
  ]
    .filter(Boolean)
    .join('\n');
  return `${slashHeader}${imports}\n\n${body}`;
}
