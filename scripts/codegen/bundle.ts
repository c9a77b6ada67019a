import {
  API_GROUP,
  API_VERSION,
  inlineRefs,
  type KindSchema,
  type SchemaNode,
  type SchemaSource,
} from './schema-source.js';

const SOURCE_ONLY_KEYWORDS = new Set(['$schema', '$id', 'definitions', 'x-kubecell-crd']);

/**
 * The whole-object schema of one kind with every reference inlined: what the webhook validates
 * against and what the CRD is derived from. apiVersion, kind and metadata are the same for every
 * kind, so they are added here rather than repeated in each schema file.
 */
export function bundleKind(kind: KindSchema, source: SchemaSource): SchemaNode {
  const inlined = inlineRefs(kind.source, source.common) as SchemaNode;
  const body = Object.fromEntries(
    Object.entries(inlined).filter(([keyword]) => !SOURCE_ONLY_KEYWORDS.has(keyword)),
  );
  const properties = (body['properties'] ?? {}) as Record<string, SchemaNode>;
  return {
    ...body,
    properties: {
      apiVersion: {
        type: 'string',
        const: `${API_GROUP}/${API_VERSION}`,
        description:
          'APIVersion defines the versioned schema of this representation of an object. Always kubecell.io/v1alpha1 for this kind.',
      },
      kind: {
        type: 'string',
        const: kind.crd.kind,
        description: `Kind is the REST resource this object represents. Always ${kind.crd.kind}.`,
      },
      metadata: {
        type: 'object',
        description:
          'Standard object metadata: name, namespace, labels and annotations. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
      },
      ...properties,
    },
    required: ['apiVersion', 'kind', 'metadata', ...((body['required'] as string[]) ?? [])],
  };
}
