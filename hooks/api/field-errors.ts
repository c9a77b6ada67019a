/**
 * Field errors in the apiserver's words: `spec.gpu: Invalid value: "x": ...`,
 * `spec.provisioner.type: Unsupported value: "Foo": supported values: "KubeVirt", "ClusterAPI"`,
 * `spec.cellRef: Required value`. ajv errors (JSON pointers) are converted here, with the path
 * written as the apiserver writes it: dotted fields, `[0]` for list items, `[key]` for map keys.
 * What a message quotes from the object is bounded (hooks/json/echo.ts): values to
 * MAX_VALUE_CHARS, each path segment to an echo, whole paths to MAX_FIELD_CHARS and details to
 * MAX_DETAIL_CHARS, so that a 5 MB key or value never makes a 5 MB denial.
 */
import type { ErrorObject } from 'ajv';
import { boundMessage, echo } from '../json/echo.js';
import { isJsonObject } from '../json/json.js';
import type { RuleViolation } from '../validation/cel-rules.js';
import type { SchemaNode } from './kinds.js';

/** The error types of `k8s.io/apimachinery/pkg/util/validation/field`, as printed. */
export type FieldErrorType =
  | 'Invalid value'
  | 'Required value'
  | 'Unsupported value'
  | 'Forbidden'
  | 'Too long'
  | 'Too many'
  | 'Duplicate value'
  | 'Not found';

/** `metav1.StatusCause` reasons, for the `details.causes` of a denial. */
const REASONS: Record<FieldErrorType, string> = {
  'Invalid value': 'FieldValueInvalid',
  'Required value': 'FieldValueRequired',
  'Unsupported value': 'FieldValueNotSupported',
  Forbidden: 'FieldValueForbidden',
  'Too long': 'FieldValueTooLong',
  'Too many': 'FieldValueTooMany',
  'Duplicate value': 'FieldValueDuplicate',
  'Not found': 'FieldValueNotFound',
};

/** CEL rule reasons (`x-kubernetes-validations[].reason`) and the type they print as. */
const CEL_REASON_TYPES: Record<string, FieldErrorType> = {
  FieldValueInvalid: 'Invalid value',
  FieldValueRequired: 'Required value',
  FieldValueForbidden: 'Forbidden',
  FieldValueDuplicate: 'Duplicate value',
};

export interface FieldError {
  /** Dotted path of the offending field (`spec.machineProfile.devices[0].name`). */
  field: string;
  type: FieldErrorType;
  /** `metav1.StatusCause` reason, e.g. `FieldValueInvalid`. */
  reason: string;
  /** The whole text: `<field>: <type>[: <value>][: <detail>]`. */
  message: string;
}

const MAX_VALUE_CHARS = 120;
/** Longest field path shown; a path is a few dozen characters unless it holds long map keys. */
export const MAX_FIELD_CHARS = 1024;
/** Longest detail (what follows the type and value) of one error. */
export const MAX_DETAIL_CHARS = 1024;

/** A value as the apiserver shows it after `Invalid value:`; objects and lists by their type only. */
export function renderValue(value: unknown): string {
  if (Array.isArray(value)) return '"array"';
  if (typeof value === 'object' && value !== null) return '"object"';
  if (value === undefined) return 'null';
  return echo(JSON.stringify(value), MAX_VALUE_CHARS);
}

/** Builds a field error; `value` is shown only when given (Required and Forbidden show none). */
export function fieldError(
  field: string,
  type: FieldErrorType,
  detail?: string,
  value?: { value: unknown },
): FieldError {
  const path = echo(field, MAX_FIELD_CHARS);
  const parts = [path === '' ? '<root>' : path, type];
  if (value !== undefined) parts.push(renderValue(value.value));
  if (detail !== undefined && detail !== '') parts.push(boundMessage(detail, MAX_DETAIL_CHARS));
  return { field: path, type, reason: REASONS[type], message: parts.join(': ') };
}

/** The message without its leading `<field>: `, as in a `metav1.StatusCause`. */
export function causeMessage(error: FieldError): string {
  const prefix = `${error.field === '' ? '<root>' : error.field}: `;
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
}

/** Drops repeated messages, keeping the first occurrence's order. */
export function uniqueErrors(errors: readonly FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors.filter((error) => !seen.has(error.message) && seen.add(error.message));
}

// ---------- paths ----------

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

function pointerSegments(pointer: string): string[] {
  return pointer === '' ? [] : pointer.split('/').slice(1).map(unescapePointer);
}

/** Appends one segment to a dotted path, as a field, a list index or a map key per the schema. */
function step(
  path: string,
  node: SchemaNode | undefined,
  segment: string,
): { path: string; node: SchemaNode | undefined } {
  if (node?.items !== undefined && /^\d+$/.test(segment)) {
    return { path: `${path}[${echo(segment)}]`, node: node.items };
  }
  const property = node?.properties?.[segment];
  // A field or key the schema does not know comes from the object: cut it to an echo.
  const shown = echo(segment);
  if (property !== undefined || node?.properties !== undefined || !isMap(node)) {
    return { path: path === '' ? shown : `${path}.${shown}`, node: property };
  }
  return {
    path: `${path}[${shown}]`,
    node: typeof node?.additionalProperties === 'object' ? node.additionalProperties : undefined,
  };
}

function isMap(node: SchemaNode | undefined): boolean {
  return typeof node?.additionalProperties === 'object';
}

function located(
  schema: SchemaNode,
  pointer: string,
): { path: string; node: SchemaNode | undefined } {
  let at: { path: string; node: SchemaNode | undefined } = { path: '', node: schema };
  for (const segment of pointerSegments(pointer)) at = step(at.path, at.node, segment);
  return at;
}

function valueAt(object: unknown, pointer: string): unknown {
  let value = object;
  for (const segment of pointerSegments(pointer)) {
    if (Array.isArray(value)) value = value[Number(segment)];
    else if (typeof value === 'object' && value !== null)
      value = (value as Record<string, unknown>)[segment];
    else return undefined;
  }
  return value;
}

// ---------- ajv ----------

function quoteList(values: readonly unknown[]): string {
  return values.map((value) => JSON.stringify(value)).join(', ');
}

/**
 * Converts the errors of a generated (allErrors) ajv validator into field errors. `object` is the
 * validated object, for the values shown; `kind` names the schema in the unknown-field message.
 */
export function fromAjvErrors(
  schema: SchemaNode,
  object: unknown,
  errors: readonly ErrorObject[] | null | undefined,
): FieldError[] {
  const all = errors ?? [];
  // anyOf (int-or-string) reports each failing branch and then itself: keep only the anyOf error.
  const anyOfPaths = all.filter((e) => e.keyword === 'anyOf').map((e) => `${e.schemaPath}/`);
  const out: FieldError[] = [];
  for (const error of all) {
    if (anyOfPaths.some((prefix) => error.schemaPath.startsWith(prefix))) continue;
    out.push(convert(schema, object, error, all));
  }
  return uniqueErrors(out);
}

function convert(
  schema: SchemaNode,
  object: unknown,
  error: ErrorObject,
  all: readonly ErrorObject[],
): FieldError {
  const at = located(schema, error.instancePath);
  const value = { value: valueAt(object, error.instancePath) };
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const child = step(at.path, at.node, String(params.missingProperty));
      return fieldError(child.path, 'Required value');
    }
    case 'additionalProperties': {
      const child = step(at.path, at.node, String(params.additionalProperty));
      return fieldError(
        child.path,
        'Forbidden',
        'unknown field (the apiserver would silently drop it); check its spelling and indentation',
      );
    }
    case 'enum':
      return fieldError(
        at.path,
        'Unsupported value',
        `supported values: ${quoteList(params.allowedValues as unknown[])}`,
        value,
      );
    case 'const':
      return fieldError(
        at.path,
        'Unsupported value',
        `supported values: ${quoteList([params.allowedValue])}`,
        value,
      );
    case 'type':
      return fieldError(at.path, 'Invalid value', `must be of type ${String(params.type)}`, value);
    case 'anyOf': {
      const prefix = `${error.schemaPath}/`;
      const branches = all.filter((e) => e.schemaPath.startsWith(prefix));
      const detail = branches.every((e) => e.keyword === 'type')
        ? `must be of type ${branches.map((e) => String((e.params as { type: unknown }).type)).join(' or ')}`
        : 'must match one of the allowed forms';
      return fieldError(at.path, 'Invalid value', detail, value);
    }
    case 'maxLength':
      return fieldError(at.path, 'Too long', error.message);
    case 'maxItems':
    case 'maxProperties': {
      const count = Array.isArray(value.value)
        ? value.value.length
        : Object.keys((value.value as object | null) ?? {}).length;
      return fieldError(at.path, 'Too many', `${count}: ${error.message ?? ''}`);
    }
    default:
      return fieldError(at.path, 'Invalid value', error.message, value);
  }
}

// ---------- list-type map and set ----------

/**
 * Duplicate keys in `x-kubernetes-list-type: map` lists and duplicate items in `set` lists,
 * which the apiserver rejects (`Duplicate value`) and JSON Schema cannot express.
 */
export function listTypeErrors(schema: SchemaNode, value: unknown, field = ''): FieldError[] {
  const out: FieldError[] = [];
  if (Array.isArray(value)) {
    const listType = schema['x-kubernetes-list-type'];
    const keys = schema['x-kubernetes-list-map-keys'] ?? [];
    const seen = new Set<string>();
    value.forEach((item, index) => {
      let identity: string | undefined;
      if (listType === 'set') identity = JSON.stringify(item);
      else if (listType === 'map' && keys.length > 0 && isJsonObject(item)) {
        identity = JSON.stringify(Object.fromEntries(keys.map((key) => [key, item[key]])));
      }
      if (identity !== undefined) {
        if (seen.has(identity)) {
          out.push(fieldError(`${field}[${index}]`, 'Duplicate value', identity));
        }
        seen.add(identity);
      }
      if (schema.items) out.push(...listTypeErrors(schema.items, item, `${field}[${index}]`));
    });
    return out;
  }
  if (!isJsonObject(value)) return out;
  for (const [key, child] of Object.entries(value)) {
    const next = step(field, schema, key);
    if (next.node) out.push(...listTypeErrors(next.node, child, next.path));
  }
  return out;
}

// ---------- CEL ----------

interface RuleInfo {
  message?: string;
  reason?: string;
}

const ruleInfoCache = new WeakMap<SchemaNode, Map<string, RuleInfo>>();

/** Every `x-kubernetes-validations` rule of a schema, by its rule text. */
function rulesOf(schema: SchemaNode): Map<string, RuleInfo> {
  let rules = ruleInfoCache.get(schema);
  if (rules) return rules;
  rules = new Map();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (isJsonObject(node)) {
      const list = node['x-kubernetes-validations'];
      if (Array.isArray(list)) {
        for (const rule of list as Array<{ rule: string; message?: string; reason?: string }>) {
          rules!.set(rule.rule, { message: rule.message, reason: rule.reason });
        }
      }
      Object.values(node).forEach(visit);
    }
  };
  visit(schema);
  ruleInfoCache.set(schema, rules);
  return rules;
}

/** True for a violation that says its rule could not run (e.g. on a value of the wrong type). */
export function isEvaluationFailure(violation: RuleViolation): boolean {
  return violation.message.includes(': rule could not be evaluated (');
}

/**
 * Converts CEL rule violations. `evaluateRules` already writes them in the apiserver's words as
 * `Invalid value`; a rule whose `reason` is FieldValueRequired (Forbidden, Duplicate) is printed
 * with that type instead, as the apiserver does.
 */
export function fromRuleViolations(
  schema: SchemaNode,
  violations: readonly RuleViolation[],
): FieldError[] {
  const rules = rulesOf(schema);
  return violations.map((violation) => {
    const info = rules.get(violation.rule);
    const type = CEL_REASON_TYPES[info?.reason ?? 'FieldValueInvalid'] ?? 'Invalid value';
    if (type === 'Invalid value' || isEvaluationFailure(violation) || !info?.message) {
      return {
        field: echo(violation.field, MAX_FIELD_CHARS),
        type,
        reason: REASONS[type],
        message: boundMessage(violation.message, MAX_FIELD_CHARS + MAX_DETAIL_CHARS),
      };
    }
    return fieldError(violation.field, type, info.message);
  });
}
