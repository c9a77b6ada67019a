import type { Condition } from '../generated/types/index.js';

/** What a phase function decides about one condition; the time is filled in by `reconcileConditions`. */
export interface ConditionVerdict {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/**
 * One condition's verdict. `holds` may be a boolean for a condition that is either True or False.
 */
export function verdict<T extends string>(
  type: T,
  holds: ConditionVerdict['status'] | boolean,
  reason: string,
  message: string,
): ConditionVerdict & { type: T } {
  const status = holds === true ? 'True' : holds === false ? 'False' : holds;
  return { type, status, reason, message };
}

/**
 * Builds the condition list from this sync's verdicts, carrying each condition's
 * lastTransitionTime forward unless its status changed. That keeps status byte-identical for
 * identical inputs, so Metacontroller sees no change and does not loop.
 */
export function reconcileConditions(
  previous: readonly Condition[] | undefined,
  verdicts: readonly ConditionVerdict[],
  now: Date,
  observedGeneration?: number,
): Condition[] {
  const before = new Map((previous ?? []).map((condition) => [condition.type, condition]));
  return verdicts.map((verdict) => {
    const prior = before.get(verdict.type);
    const lastTransitionTime =
      prior && prior.status === verdict.status ? prior.lastTransitionTime : formatTime(now);
    return {
      type: verdict.type,
      status: verdict.status,
      reason: verdict.reason,
      message: verdict.message,
      lastTransitionTime,
      ...(observedGeneration === undefined ? {} : { observedGeneration }),
    };
  });
}

export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((condition) => condition.type === type);
}

/** RFC 3339 with second precision, the form the apiserver stores for metav1.Time. */
export function formatTime(time: Date): string {
  return `${time.toISOString().slice(0, 19)}Z`;
}
