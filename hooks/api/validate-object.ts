/**
 * Validation of one KubeCell object against its own schema, without other objects: the
 * generated ajv validator (unknown fields rejected with their path), list-map key uniqueness,
 * and the CEL rules of the generated schema through `evaluateRules`, the one CEL evaluation path
 * (transition rules only on update). The admission webhook and `kubecell validate` both use it.
 */
import { isJsonObject } from '../json/json.js';
import { evaluateRules } from '../validation/cel-rules.js';
import {
  fieldError,
  fromAjvErrors,
  fromRuleViolations,
  isEvaluationFailure,
  listTypeErrors,
  uniqueErrors,
  type FieldError,
} from './field-errors.js';
import type { KindInfo } from './kinds.js';

/** Errors of `object` on its own: schema, list keys, then CEL (non-transition rules only). */
function errorsOf(info: KindInfo, object: unknown, oldObject?: unknown): FieldError[] {
  const valid = info.validate(object);
  const unbounded = (info.validate.errors ?? []).some((error) =>
    SKIP_RULES_AFTER.has(error.keyword),
  );
  const schemaErrors = valid ? [] : fromAjvErrors(info.schema, object, info.validate.errors);
  // The rules are written for the shapes and sizes the schema allows (the apiserver budgets their
  // cost by maxItems and friends). Past those bounds, or over a value of another type (a map where
  // a list should be), a rule such as a uniqueness check over 10,000 items would run for minutes:
  // the schema errors say what is wrong, so the rules are skipped.
  if (unbounded) return uniqueErrors([...schemaErrors, ...metadataErrors(object)]);
  schemaErrors.push(...listTypeErrors(info.schema, object));
  schemaErrors.push(...metadataErrors(object));
  let violations;
  try {
    violations = evaluateRules(info.schema, object, oldObject);
  } catch (err) {
    // A rule that throws on malformed input: the schema errors already say what is wrong.
    if (schemaErrors.length > 0) return uniqueErrors(schemaErrors);
    const message = err instanceof Error ? err.message : String(err);
    return [
      fieldError('', 'Invalid value', `validation rules could not be evaluated: ${message}`, {
        value: object,
      }),
    ];
  }
  // A rule that could not run because a field has the wrong type only repeats a schema error.
  if (schemaErrors.length > 0) violations = violations.filter((v) => !isEvaluationFailure(v));
  return uniqueErrors([...schemaErrors, ...fromRuleViolations(info.schema, violations)]);
}

/** Schema errors after which the rules' cost is unbounded: sizes past their limits, wrong types. */
const SKIP_RULES_AFTER = new Set(['maxItems', 'maxProperties', 'maxLength', 'type']);

/** The only metadata the webhook checks itself: an object has a name (or generateName). */
function metadataErrors(object: unknown): FieldError[] {
  if (!isJsonObject(object) || !isJsonObject(object.metadata)) return [];
  const { name, generateName } = object.metadata;
  if (
    (typeof name === 'string' && name !== '') ||
    (typeof generateName === 'string' && generateName !== '')
  ) {
    return [];
  }
  return [fieldError('metadata.name', 'Required value', 'name or generateName is required')];
}

/**
 * Every error of `object` against the rules of its kind. With `oldObject` (an update), transition
 * rules run, and errors the old object already had are not reported: like the apiserver's
 * validation ratcheting, a rule added or tightened later never blocks an update that leaves the
 * offending field as it was (Metacontroller must still be able to remove its finalizer).
 */
export function validateObject(info: KindInfo, object: unknown, oldObject?: unknown): FieldError[] {
  const errors = errorsOf(info, object, oldObject);
  if (oldObject === undefined || errors.length === 0) return errors;
  const existing = new Set(errorsOf(info, oldObject).map((error) => error.message));
  return errors.filter((error) => !existing.has(error.message));
}
