/**
 * Checks of a handler's answer before it is sent to Metacontroller.
 *
 * Metacontroller decodes v2 hook responses strictly: an unknown field fails
 * the whole call. A missing `children` list is worse: it reads as "no desired
 * children" and every child is deleted. Both are handler bugs, so the server
 * answers 500 instead of passing them on.
 */
import { isJsonObject, jsonTypeOf, keySegment } from '../json/json.js';
import { RESPONSE_FIELDS } from './protocol.js';

export type ResponseKind = keyof typeof RESPONSE_FIELDS;

/** The list field each response must carry. */
const LIST_FIELD: Record<ResponseKind, string> = {
  customize: 'relatedResources',
  compositeSync: 'children',
  decoratorSync: 'attachments',
};

/** Problems with a handler's response; empty when it is fine to send. */
export function checkResponse(kind: ResponseKind, value: unknown): string[] {
  if (!isJsonObject(value)) return [`response: must be a JSON object, got ${jsonTypeOf(value)}`];
  const problems: string[] = [];
  const allowed: readonly string[] = RESPONSE_FIELDS[kind];
  for (const field of Object.keys(value)) {
    if (!allowed.includes(field)) {
      problems.push(
        `response${keySegment(field)}: unknown field (Metacontroller v2 accepts only ${allowed.join(', ')})`,
      );
    }
  }

  const listField = LIST_FIELD[kind];
  const list = value[listField];
  if (!Array.isArray(list)) {
    problems.push(
      list === undefined
        ? `response.${listField}: required (an empty list means "delete them all")`
        : `response.${listField}: must be an array, got ${jsonTypeOf(list)}`,
    );
  } else if (kind !== 'customize') {
    list.forEach((obj, i) => checkDesiredObject(obj, `response.${listField}[${i}]`, problems));
  } else {
    list.forEach((rule, i) => checkRelatedRule(rule, `response.${listField}[${i}]`, problems));
  }

  if (kind !== 'customize') {
    const { status, resyncAfterSeconds, finalized } = value;
    if (status !== undefined && status !== null && !isJsonObject(status)) {
      problems.push(`response.status: must be an object, got ${jsonTypeOf(status)}`);
    }
    if (
      resyncAfterSeconds !== undefined &&
      (typeof resyncAfterSeconds !== 'number' ||
        !Number.isFinite(resyncAfterSeconds) ||
        resyncAfterSeconds < 0)
    ) {
      problems.push('response.resyncAfterSeconds: must be a number >= 0');
    }
    if (finalized !== undefined && typeof finalized !== 'boolean') {
      problems.push(`response.finalized: must be a boolean, got ${jsonTypeOf(finalized)}`);
    }
  }
  return problems;
}

function checkDesiredObject(obj: unknown, path: string, problems: string[]): void {
  if (!isJsonObject(obj)) {
    problems.push(`${path}: must be an object, got ${jsonTypeOf(obj)}`);
    return;
  }
  for (const field of ['apiVersion', 'kind'] as const) {
    if (typeof obj[field] !== 'string' || obj[field] === '') {
      problems.push(`${path}.${field}: required`);
    }
  }
  const metadata = obj.metadata;
  if (!isJsonObject(metadata) || typeof metadata.name !== 'string' || metadata.name === '') {
    problems.push(`${path}.metadata.name: required`);
  }
}

function checkRelatedRule(rule: unknown, path: string, problems: string[]): void {
  if (!isJsonObject(rule)) {
    problems.push(`${path}: must be an object, got ${jsonTypeOf(rule)}`);
    return;
  }
  for (const field of ['apiVersion', 'resource'] as const) {
    if (typeof rule[field] !== 'string' || rule[field] === '') {
      problems.push(`${path}.${field}: required`);
    }
  }
  // Metacontroller refuses a rule with names and a label selector; a namespace and a label
  // selector select by both (v4.17.2 pkg/controller/common/customize/manager.go
  // determineSelectionType: selectByNamespaceAndLabels).
  const hasSelector = rule.labelSelector !== undefined && rule.labelSelector !== null;
  const hasNames = Array.isArray(rule.names) && rule.names.length > 0;
  if (hasSelector && hasNames) {
    problems.push(`${path}: use labelSelector or names, not both`);
  }
}
