/**
 * The five KubeCell kinds as the admission webhook and `kubecell validate` see them: the
 * generated ajv validator and the generated (bundled) schema that carries the CEL rules. Nothing
 * here restates a field or a rule; `kinds.test.ts` checks the plural names and scopes against
 * `schemas/` and the CRDs.
 */
// The schemas are imported, not read from disk beside this file, so that the bundled `kubecell`
// command (scripts/cli-package/) carries them and runs without the source tree.
import cellSchema from '../generated/schemas/cell.json' with { type: 'json' };
import gpuCellPoolSchema from '../generated/schemas/gpucellpool.json' with { type: 'json' };
import virtualClusterSchema from '../generated/schemas/virtualcluster.json' with { type: 'json' };
import virtualClusterPlanSchema from '../generated/schemas/virtualclusterplan.json' with { type: 'json' };
import virtualNodeClassSchema from '../generated/schemas/virtualnodeclass.json' with { type: 'json' };
import {
  validateCell,
  validateGPUCellPool,
  validateVirtualCluster,
  validateVirtualClusterPlan,
  validateVirtualNodeClass,
  type GeneratedValidator,
} from '../generated/validators.js';
import type { RuleSchema } from '../validation/cel-rules.js';

export const GROUP = 'kubecell.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export const KIND_NAMES = [
  'Cell',
  'GPUCellPool',
  'VirtualCluster',
  'VirtualClusterPlan',
  'VirtualNodeClass',
] as const;
export type KindName = (typeof KIND_NAMES)[number];

/** A schema node of the generated schema, as far as the webhook reads it. */
export interface SchemaNode extends RuleSchema {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
  anyOf?: SchemaNode[];
  'x-kubernetes-list-type'?: string;
}

export interface KindInfo {
  kind: KindName;
  /** The resource name in the REST path and in webhook rules. */
  plural: string;
  namespaced: boolean;
  validate: GeneratedValidator;
  /** The generated schema (`hooks/generated/schemas/<kind>.json`), CEL rules included. */
  schema: SchemaNode;
}

/** A generated schema as the webhook reads it (its JSON type is wider than SchemaNode says). */
function asSchema(schema: object): SchemaNode {
  return schema as SchemaNode;
}

export const KINDS: Readonly<Record<KindName, KindInfo>> = {
  Cell: {
    kind: 'Cell',
    plural: 'cells',
    namespaced: true,
    validate: validateCell,
    schema: asSchema(cellSchema),
  },
  GPUCellPool: {
    kind: 'GPUCellPool',
    plural: 'gpucellpools',
    namespaced: false,
    validate: validateGPUCellPool,
    schema: asSchema(gpuCellPoolSchema),
  },
  VirtualCluster: {
    kind: 'VirtualCluster',
    plural: 'virtualclusters',
    namespaced: true,
    validate: validateVirtualCluster,
    schema: asSchema(virtualClusterSchema),
  },
  VirtualClusterPlan: {
    kind: 'VirtualClusterPlan',
    plural: 'virtualclusterplans',
    namespaced: true,
    validate: validateVirtualClusterPlan,
    schema: asSchema(virtualClusterPlanSchema),
  },
  VirtualNodeClass: {
    kind: 'VirtualNodeClass',
    plural: 'virtualnodeclasses',
    namespaced: false,
    validate: validateVirtualNodeClass,
    schema: asSchema(virtualNodeClassSchema),
  },
};

export function isKindName(value: unknown): value is KindName {
  return typeof value === 'string' && (KIND_NAMES as readonly string[]).includes(value);
}

/** The kind of `kubecell.io/v1alpha1` with this name, if it is one of the five. */
export function kindInfo(apiVersion: unknown, kind: unknown): KindInfo | undefined {
  return apiVersion === API_VERSION && isKindName(kind) ? KINDS[kind] : undefined;
}
