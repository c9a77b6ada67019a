import { API_GROUP, API_VERSION, type KindSchema, type SchemaNode } from './schema-source.js';

/** Keywords a structural CRD schema may carry; everything else is JSON-Schema-only. */
const CRD_KEYWORDS = new Set([
  'type',
  'description',
  'properties',
  'items',
  'required',
  'enum',
  'default',
  'format',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'nullable',
  'anyOf',
  'allOf',
  'oneOf',
  'not',
  'additionalProperties',
]);

/** Converts a bundled JSON Schema node into the apiextensions.k8s.io/v1 structural dialect. */
export function toStructural(node: SchemaNode): SchemaNode {
  const out: SchemaNode = {};
  for (const [keyword, value] of Object.entries(node)) {
    if (keyword.startsWith('x-kubernetes-')) {
      out[keyword] = value;
    } else if (!CRD_KEYWORDS.has(keyword)) {
      continue;
    } else if (keyword === 'properties') {
      out[keyword] = Object.fromEntries(
        Object.entries(value as Record<string, SchemaNode>).map(([name, child]) => [
          name,
          toStructural(child),
        ]),
      );
    } else if (keyword === 'items' || keyword === 'not') {
      out[keyword] = toStructural(value as SchemaNode);
    } else if (keyword === 'anyOf' || keyword === 'allOf' || keyword === 'oneOf') {
      out[keyword] = (value as SchemaNode[]).map(toStructural);
    } else if (keyword === 'additionalProperties') {
      // `false` is the JSON Schema way to reject unknown fields; the apiserver prunes them instead
      // and forbids the keyword, so only map-valued additionalProperties survive.
      if (typeof value === 'object' && value !== null)
        out[keyword] = toStructural(value as SchemaNode);
    } else {
      out[keyword] = value;
    }
  }
  return out;
}

/** The apiserver accepts nothing on the root metadata node but its type. */
function withBareMetadata(schema: SchemaNode): SchemaNode {
  const properties = schema['properties'] as Record<string, SchemaNode>;
  return { ...schema, properties: { ...properties, metadata: { type: 'object' } } };
}

export function renderCrd(kind: KindSchema, bundled: SchemaNode): SchemaNode {
  const { crd } = kind;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${crd.plural}.${API_GROUP}`,
      labels: { 'app.kubernetes.io/part-of': 'kubecell' },
    },
    spec: {
      group: API_GROUP,
      names: {
        kind: crd.kind,
        listKind: crd.listKind,
        plural: crd.plural,
        singular: crd.singular,
        shortNames: crd.shortNames,
        categories: crd.categories,
      },
      scope: crd.scope,
      versions: [
        {
          name: API_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: crd.printerColumns,
          schema: { openAPIV3Schema: withBareMetadata(toStructural(bundled)) },
        },
      ],
    },
  };
}
