import { celEnv, isCelError, parse, plan, type CelInput } from '@bufbuild/cel';
import { isJsonObject } from '../json/json.js';

/** A schema node as generated into hooks/generated/schemas; only what rule evaluation reads. */
export interface RuleSchema {
  type?: string;
  properties?: Record<string, RuleSchema>;
  items?: RuleSchema;
  additionalProperties?: RuleSchema | boolean;
  default?: unknown;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-validations'?: ValidationRule[];
  'x-kubernetes-list-map-keys'?: string[];
}

export interface ValidationRule {
  rule: string;
  message?: string;
  fieldPath?: string;
  reason?: string;
}

export interface RuleViolation {
  /** Dotted path of the offending field, as the apiserver prints it (`spec.gpu`). */
  field: string;
  rule: string;
  message: string;
}

type CompiledRule = (bindings: Record<string, CelInput>) => unknown;
const environment = celEnv();
const compiledRules = new Map<string, CompiledRule>();

function compile(rule: string): CompiledRule {
  let compiled = compiledRules.get(rule);
  if (!compiled) {
    compiled = plan(environment, parse(rule)) as CompiledRule;
    compiledRules.set(rule, compiled);
  }
  return compiled;
}

/** The apiserver treats a rule that mentions oldSelf as a transition rule: it runs only on update. */
const isTransitionRule = (rule: string): boolean => /\boldSelf\b/.test(rule);

/**
 * Fills in schema defaults the way the apiserver does before validation, without touching the
 * caller's object, so a rule sees `replicas: 1` when the user left it out.
 */
export function withDefaults(schema: RuleSchema, value: unknown): unknown {
  if (Array.isArray(value)) {
    return schema.items ? value.map((item) => withDefaults(schema.items!, item)) : value;
  }
  if (!isJsonObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const childSchema = schema.properties?.[key] ?? mapValueSchema(schema);
    out[key] = childSchema ? withDefaults(childSchema, child) : child;
  }
  for (const [key, childSchema] of Object.entries(schema.properties ?? {})) {
    if (out[key] === undefined && childSchema.default !== undefined) {
      out[key] = withDefaults(childSchema, structuredClone(childSchema.default));
    }
  }
  return out;
}

function mapValueSchema(schema: RuleSchema): RuleSchema | undefined {
  return typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
}

/**
 * Converts JSON to the CEL types Kubernetes uses: objects are maps (so `has()` works), integer
 * fields are CEL ints (JSON numbers would otherwise be doubles), everything else as is.
 */
export function toCel(schema: RuleSchema | undefined, value: unknown): CelInput {
  if (Array.isArray(value)) return value.map((item) => toCel(schema?.items, item));
  if (isJsonObject(value)) {
    return new Map(
      Object.entries(value).map(([key, child]) => {
        const property = schema?.properties?.[key];
        const childSchema = property ?? (schema ? mapValueSchema(schema) : undefined);
        // Fields are reached by their escaped names; map keys stay as they are.
        return [property ? escapeFieldName(key) : key, toCel(childSchema, child)];
      }),
    );
  }
  const integral = schema?.type === 'integer' || schema?.['x-kubernetes-int-or-string'];
  if (typeof value === 'number' && integral && Number.isInteger(value)) return BigInt(value);
  return value as CelInput;
}

/** CEL keywords a field name must not be written as; Kubernetes escapes them as `__kw__`. */
const CEL_RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/**
 * The name a rule uses for a field, escaped as the apiserver escapes it: a CEL keyword such as
 * `namespace` is `__namespace__`, and `__`, `.`, `-`, `/` in a name become `__underscores__`,
 * `__dot__`, `__dash__`, `__slash__`.
 */
export function escapeFieldName(name: string): string {
  if (CEL_RESERVED.has(name)) return `__${name}__`;
  return name
    .replace(/__/g, '__underscores__')
    .replace(/\./g, '__dot__')
    .replace(/-/g, '__dash__')
    .replace(/\//g, '__slash__');
}

function describeValue(value: unknown): string {
  if (isJsonObject(value)) return '"object"';
  if (Array.isArray(value)) return '"array"';
  return JSON.stringify(value);
}

/**
 * Like the apiserver, an item is paired with its old self only in map-keyed lists (same key
 * values); items of other lists have no old self, so their transition rules do not run.
 */
function oldListItem(schema: RuleSchema, item: unknown, oldList: unknown): unknown {
  const keys = schema['x-kubernetes-list-map-keys'];
  if (!keys?.length || !isJsonObject(item) || !Array.isArray(oldList)) return undefined;
  return oldList.find((old) => isJsonObject(old) && keys.every((key) => old[key] === item[key]));
}

function evaluateNode(
  schema: RuleSchema,
  value: unknown,
  oldValue: unknown,
  field: string,
  violations: RuleViolation[],
): void {
  for (const rule of schema['x-kubernetes-validations'] ?? []) {
    const transition = isTransitionRule(rule.rule);
    if (transition && oldValue === undefined) continue;
    const bindings: Record<string, CelInput> = { self: toCel(schema, value) };
    if (transition) bindings['oldSelf'] = toCel(schema, oldValue);
    const result = compile(rule.rule)(bindings);
    if (result === true) continue;
    const where = rule.fieldPath ? `${field}${rule.fieldPath}` : field;
    const detail = isCelError(result)
      ? `rule could not be evaluated (${result.message}): ${rule.rule}`
      : (rule.message ?? `failed rule: ${rule.rule}`);
    violations.push({
      field: where,
      rule: rule.rule,
      message: `${where}: Invalid value: ${describeValue(value)}: ${detail}`,
    });
  }
  if (Array.isArray(value) && schema.items) {
    const items = schema.items;
    value.forEach((item, index) =>
      evaluateNode(
        items,
        item,
        oldListItem(schema, item, oldValue),
        `${field}[${index}]`,
        violations,
      ),
    );
    return;
  }
  if (!isJsonObject(value)) return;
  const old = isJsonObject(oldValue) ? oldValue : undefined;
  for (const [key, child] of Object.entries(value)) {
    const childSchema = schema.properties?.[key] ?? mapValueSchema(schema);
    if (childSchema) {
      const path = schema.properties?.[key] ? `${field}.${key}` : `${field}[${key}]`;
      evaluateNode(childSchema, child, old?.[key], path.replace(/^\./, ''), violations);
    }
  }
}

/**
 * Evaluates every `x-kubernetes-validations` rule of a generated schema against an object, the
 * way the apiserver does: after defaulting, only where the field is present, transition rules
 * only when an old object exists. The rules are read from the same schema the CRD carries.
 */
export function evaluateRules(
  schema: RuleSchema,
  object: unknown,
  oldObject?: unknown,
): RuleViolation[] {
  const violations: RuleViolation[] = [];
  const current = withDefaults(schema, object);
  const previous = oldObject === undefined ? undefined : withDefaults(schema, oldObject);
  evaluateNode(schema, current, previous, '', violations);
  return violations;
}
