/**
 * One entry of a feasibility report: its name, result, reason, message and the figures it
 * compared. Every check of the evaluation is built here, so each entry has the same shape.
 */
import type { FeasibilityCheck } from '../generated/types/index.js';
import { Reason, type CheckName, type CheckResult } from './reasons.js';
import type { InvalidEntry } from './resources.js';

/** The figures a check compared, each left out of the entry when absent. */
export interface CheckFigures {
  resource?: string;
  required?: string;
  available?: string;
}

/** Longest message of a check (`maxLength` of FeasibilityCheck.message). */
const MAX_MESSAGE_CHARS = 4096;

export function check(
  name: CheckName,
  result: CheckResult,
  reason: Reason,
  message: string,
  figures: CheckFigures = {},
): FeasibilityCheck {
  return {
    name,
    ...(figures.resource === undefined ? {} : { resource: figures.resource }),
    ...(figures.required === undefined ? {} : { required: figures.required }),
    ...(figures.available === undefined ? {} : { available: figures.available }),
    result,
    reason,
    message:
      message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS - 1)}…` : message,
  };
}

/** A check that cannot run because the class's entitlement holds an invalid quantity. */
export function invalidQuantityCheck(
  name: CheckName,
  resource: string,
  entry: InvalidEntry,
): FeasibilityCheck {
  return check(
    name,
    'Fail',
    Reason.InvalidQuantity,
    `The class's entitlement ${entry.key} is not a valid quantity (${entry.error}); fix the VirtualNodeClass.`,
    { resource },
  );
}
