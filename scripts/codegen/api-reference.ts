import { markdownHeader } from './header.js';
import type { KindSchema, SchemaNode } from './schema-source.js';

interface FieldRow {
  path: string;
  type: string;
  required: boolean;
  description: string;
  constraints: string[];
}

function typeOf(node: SchemaNode): string {
  if (node['x-kubernetes-int-or-string']) {
    // Only the schemas' Quantity types are quantities; other int-or-string fields (maxUnhealthy's
    // count or percentage) are not.
    const title = node['title'];
    return typeof title === 'string' && title.endsWith('Quantity')
      ? 'quantity (int or string)'
      : 'int or string';
  }
  const type = node['type'];
  if (type === 'array') {
    const items = (node['items'] ?? {}) as SchemaNode;
    return `[]${typeOf(items)}`;
  }
  if (type === 'object' && typeof node['additionalProperties'] === 'object') {
    return `map[string]${typeOf(node['additionalProperties'] as SchemaNode)}`;
  }
  return typeof type === 'string' ? type : 'any';
}

/** One untyped anyOf branch (a format or a pattern), as the reference lists it. */
function valueRule(branch: SchemaNode): string {
  return Object.entries(branch)
    .map(([keyword, value]) =>
      keyword === 'pattern' ? `pattern \`${String(value)}\`` : `${keyword} ${String(value)}`,
    )
    .join(', ');
}

function constraintsOf(node: SchemaNode): string[] {
  const out: string[] = [];
  if (Array.isArray(node['enum']))
    out.push(`one of: ${node['enum'].map((v) => `\`${String(v)}\``).join(', ')}`);
  if (node['default'] !== undefined) out.push(`default: \`${JSON.stringify(node['default'])}\``);
  if (node['format']) out.push(`format: ${String(node['format'])}`);
  const branches = node['anyOf'];
  if (
    Array.isArray(branches) &&
    branches.every((branch) => typeOf(branch as SchemaNode) === 'any')
  ) {
    out.push(`any of: ${branches.map((branch) => valueRule(branch as SchemaNode)).join('; ')}`);
  }
  for (const keyword of ['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems']) {
    if (node[keyword] !== undefined) out.push(`${keyword}: ${String(node[keyword])}`);
  }
  const rules = (node['x-kubernetes-validations'] ?? []) as { rule: string; message?: string }[];
  for (const rule of rules) out.push(`rule: \`${rule.rule}\` — ${rule.message ?? ''}`.trim());
  return out;
}

function collectFields(node: SchemaNode, path: string, required: boolean, rows: FieldRow[]): void {
  rows.push({
    path,
    type: typeOf(node),
    required,
    description: String(node['description'] ?? ''),
    constraints: constraintsOf(node),
  });
  const requiredNames = new Set((node['required'] ?? []) as string[]);
  const properties = (node['properties'] ?? {}) as Record<string, SchemaNode>;
  for (const [name, child] of Object.entries(properties)) {
    collectFields(child, `${path}.${name}`, requiredNames.has(name), rows);
  }
  const items = node['items'] as SchemaNode | undefined;
  if (items && items['properties']) collectFields(items, `${path}[]`, false, rows);
  const values = node['additionalProperties'];
  if (typeof values === 'object' && values !== null && (values as SchemaNode)['properties']) {
    collectFields(values as SchemaNode, `${path}.<key>`, false, rows);
  }
}

const escapeCell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n+/g, ' ');

function renderKind(kind: KindSchema, bundled: SchemaNode): string {
  const { crd } = kind;
  const rows: FieldRow[] = [];
  const properties = (bundled['properties'] ?? {}) as Record<string, SchemaNode>;
  const requiredTop = new Set((bundled['required'] ?? []) as string[]);
  for (const part of ['spec', 'status']) {
    const node = properties[part];
    if (node) collectFields(node, part, requiredTop.has(part), rows);
  }
  const table = rows
    .map(
      (row) =>
        `| \`${row.path}\` | ${escapeCell(row.type)} | ${row.required ? 'yes' : ''} | ${escapeCell(
          [row.description, ...row.constraints].filter(Boolean).join('<br>'),
        )} |`,
    )
    .join('\n');
  return `## ${crd.kind}

${escapeCell(String(bundled['description'] ?? ''))}

- API: \`kubecell.io/v1alpha1\`, scope \`${crd.scope}\`, plural \`${crd.plural}\`, short names ${crd.shortNames.map((s) => `\`${s}\``).join(', ')}, categories ${crd.categories.map((c) => `\`${c}\``).join(', ')}.
- Printer columns: ${crd.printerColumns.map((c) => `${c.name} (\`${c.jsonPath}\`)`).join(', ')}.

| Field | Type | Required | Description |
| --- | --- | --- | --- |
${table}
`;
}

export function renderApiReference(kinds: { kind: KindSchema; bundled: SchemaNode }[]): string {
  const toc = kinds
    .map(({ kind }) => `- [${kind.crd.kind}](#${kind.crd.kind.toLowerCase()})`)
    .join('\n');
  const sections = kinds.map(({ kind, bundled }) => renderKind(kind, bundled)).join('\n');
  return `${markdownHeader}
# API reference: kubecell.io/v1alpha1

Every field of every KubeCell kind, generated from \`schemas/\`; the same text is what
\`kubectl explain\` shows. Rules marked "rule" are CEL rules the apiserver enforces.

${toc}

${sections}`;
}
