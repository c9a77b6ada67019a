/**
 * The Pod Security Admission labels of a host namespace, and which of them are KubeCell's.
 *
 * Metacontroller applies the labels a decorator returns and leaves every other label alone, so
 * "respecting" a label the platform set means not returning it. KubeCell tells its own labels
 * from the platform's with the annotation `kubecell.io/pod-security-applied`, which records
 * each label it wrote and the value it wrote:
 *
 * - a label that is absent is KubeCell's to set (a deleted baseline label comes back);
 * - a label whose value is the one KubeCell recorded is KubeCell's (so a new configured level
 *   reaches every namespace);
 * - any other label is the platform's: set before the namespace became a host namespace, or
 *   changed by hand since. KubeCell leaves it as it is and lists it in
 *   `kubecell.io/pod-security-kept`; when its level is weaker than the configured one (say
 *   `privileged` under `baseline`), also in `kubecell.io/pod-security-weaker`, so that a
 *   namespace less isolated than the platform's setting does not go unnoticed.
 */
import {
  POD_SECURITY_LABEL_PREFIX,
  POD_SECURITY_MODES,
  HOST_NAMESPACE_ANNOTATIONS,
  type PodSecurityMode,
} from './baseline.js';
import { POD_SECURITY_LEVELS, type PodSecurityLevel } from './config.js';

/** mode → value, e.g. `{enforce: 'baseline'}`. */
export type PodSecurityRecord = Partial<Record<PodSecurityMode, string>>;

export interface PodSecurityPlan {
  /** Labels to set: KubeCell's, at the configured level. */
  labels: Record<string, string>;
  /** What KubeCell wrote (the new `pod-security-applied`). */
  applied: PodSecurityRecord;
  /** The platform's labels left alone (the new `pod-security-kept`). */
  kept: PodSecurityRecord;
  /** Those of `kept` whose level is weaker than the configured one (`pod-security-weaker`). */
  weaker: PodSecurityRecord;
}

/**
 * Whether `value` is a Pod Security level weaker than `level` (privileged < baseline <
 * restricted). A value that is no level is not compared: it is reported as kept only.
 */
export function isWeakerLevel(value: string, level: PodSecurityLevel): boolean {
  const rank = (POD_SECURITY_LEVELS as readonly string[]).indexOf(value);
  return rank !== -1 && rank < POD_SECURITY_LEVELS.indexOf(level);
}

export function podSecurityLabel(mode: PodSecurityMode): string {
  return `${POD_SECURITY_LABEL_PREFIX}${mode}`;
}

/** `audit=baseline,enforce=baseline`, modes sorted; `undefined` for an empty record. */
export function formatRecord(record: PodSecurityRecord): string | undefined {
  const entries = POD_SECURITY_MODES.filter((mode) => record[mode] !== undefined).map(
    (mode) => `${mode}=${record[mode]}`,
  );
  return entries.length > 0 ? entries.join(',') : undefined;
}

/**
 * Reads an annotation written by `formatRecord`. An entry that does not parse is ignored, so a
 * damaged annotation makes KubeCell treat the label as the platform's: it never overwrites a
 * label it cannot prove it wrote.
 */
export function parseRecord(text: string | undefined): PodSecurityRecord {
  const record: PodSecurityRecord = {};
  for (const entry of (text ?? '').split(',')) {
    const match = /^\s*([a-z]+)=([^,\s]+)\s*$/.exec(entry);
    const mode = match?.[1] as PodSecurityMode | undefined;
    if (mode !== undefined && (POD_SECURITY_MODES as readonly string[]).includes(mode)) {
      record[mode] = match?.[2];
    }
  }
  return record;
}

/** Which Pod Security labels to set on a host namespace, and which to leave to the platform. */
export function planPodSecurity(
  labels: Readonly<Record<string, string>>,
  annotations: Readonly<Record<string, string>>,
  level: PodSecurityLevel,
): PodSecurityPlan {
  const recorded = parseRecord(annotations[HOST_NAMESPACE_ANNOTATIONS.podSecurityApplied]);
  const plan: PodSecurityPlan = { labels: {}, applied: {}, kept: {}, weaker: {} };
  for (const mode of POD_SECURITY_MODES) {
    const key = podSecurityLabel(mode);
    const current = labels[key];
    if (current === undefined || current === recorded[mode]) {
      plan.labels[key] = level;
      plan.applied[mode] = level;
    } else {
      plan.kept[mode] = current;
      if (isWeakerLevel(current, level)) plan.weaker[mode] = current;
    }
  }
  return plan;
}

/**
 * On finalize: the labels to remove, each one KubeCell recorded and that still has the value it
 * wrote. A label changed since is the platform's now and stays.
 */
export function labelsToRemove(
  labels: Readonly<Record<string, string>>,
  annotations: Readonly<Record<string, string>>,
): string[] {
  const recorded = parseRecord(annotations[HOST_NAMESPACE_ANNOTATIONS.podSecurityApplied]);
  return POD_SECURITY_MODES.filter(
    (mode) => recorded[mode] !== undefined && labels[podSecurityLabel(mode)] === recorded[mode],
  ).map(podSecurityLabel);
}

/** `labelsToRemove` as the decorator's label update: each label mapped to null. */
export function clearedLabels(
  labels: Readonly<Record<string, string>>,
  annotations: Readonly<Record<string, string>>,
): Record<string, null> {
  const update: Record<string, null> = {};
  for (const key of labelsToRemove(labels, annotations)) update[key] = null;
  return update;
}
