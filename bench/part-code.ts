/**
 * Which code each part of bench/results.json measured, and whether that is the code in the tree
 * now. A part is CURRENT only when its fingerprint (bench/code-fingerprint.ts) equals the tree's;
 * every other part is STALE: a figure measured on other code is never shown as met.
 *
 * Runs from this code on record the fingerprint of each part as they start it (`measuredCode`).
 * Parts of older runs have only a commit: their fingerprint is that commit's trees, and a part
 * that ran with uncommitted changes, or where it is not known whether it did, or without a
 * commit, is STALE (what it measured cannot be told).
 */
import {
  commitFingerprint,
  differingDirs,
  headCommit,
  treeFingerprint,
  type CodeFingerprint,
} from './code-fingerprint.js';
import { latestSteadyRun } from './report-idle.js';
import { PARTS, RESULT_KEYS, type Part, type Results } from './report.js';

/** What results.json records per part (run.ts). */
export interface MeasuredCode {
  /** When the part started. */
  date: string;
  gitCommit?: string;
  /** The shipped directories as the part started (uncommitted edits included). */
  fingerprint?: CodeFingerprint;
  /** The tree's fingerprint when the part ended, when it differs: figures of mixed code. */
  fingerprintAtEnd?: CodeFingerprint;
}

export type MeasuredCodes = Partial<Record<Part, MeasuredCode>>;

export interface PartCode {
  part: Part;
  date?: string;
  gitCommit?: string;
  fingerprint?: CodeFingerprint;
  /** `recorded` by the run, or `from commit` (a run before fingerprints were recorded). */
  source: 'recorded' | 'from commit';
  status: 'CURRENT' | 'STALE';
  /** Why STALE. */
  reason?: string;
}

/** The tree a report is held against: its fingerprint and HEAD. */
export interface PresentCode {
  fingerprint?: CodeFingerprint;
  gitCommit?: string;
}

/** Git look-ups, injected so the marking can be tested without a repository. */
export interface CodeLookup {
  present: PresentCode;
  /** A commit's fingerprint; undefined when the commit is not known. */
  ofCommit: (commit: string) => CodeFingerprint | undefined;
}

export function gitLookup(root: string): CodeLookup {
  let fingerprint: CodeFingerprint | undefined;
  try {
    fingerprint = treeFingerprint(root);
  } catch {
    // not a git checkout: every part is STALE (nothing to compare with)
  }
  const gitCommit = headCommit(root);
  return {
    present: {
      ...(fingerprint === undefined ? {} : { fingerprint }),
      ...(gitCommit === undefined ? {} : { gitCommit }),
    },
    ofCommit: (commit) => commitFingerprint(root, commit),
  };
}

/** The record of a part starting now (run.ts), and its completion once the part has ended. */
export function startMeasuredCode(root: string): MeasuredCode {
  const lookup = gitLookup(root);
  return {
    date: new Date().toISOString(),
    ...(lookup.present.gitCommit === undefined ? {} : { gitCommit: lookup.present.gitCommit }),
    ...(lookup.present.fingerprint === undefined
      ? {}
      : { fingerprint: lookup.present.fingerprint }),
  };
}

export function endMeasuredCode(root: string, started: MeasuredCode): MeasuredCode {
  let atEnd: CodeFingerprint | undefined;
  try {
    atEnd = treeFingerprint(root);
  } catch {
    return started;
  }
  const before = started.fingerprint;
  return before !== undefined && differingDirs(before, atEnd).length === 0
    ? started
    : { ...started, fingerprintAtEnd: atEnd };
}

interface Origin {
  date?: string;
  gitCommit?: string;
  /** Uncommitted changes at the run: true, false, or undefined when not recorded. */
  dirty?: boolean;
}

/** Where a part without a recorded fingerprint came from, as older results.json say it. */
function legacyOrigin(results: Omit<Results, 'targets'>, part: Part): Origin {
  const kept = results.kept?.find((entry) => entry.part === part);
  const origin: Origin = kept
    ? {
        date: kept.date,
        ...(kept.gitCommit === undefined ? {} : { gitCommit: kept.gitCommit }),
        ...(kept.gitDirty === undefined ? {} : { dirty: kept.gitDirty }),
      }
    : {
        date: results.machine.date,
        ...(results.machine.gitCommit === undefined
          ? {}
          : { gitCommit: results.machine.gitCommit }),
        ...(results.machine.gitDirty === undefined ? {} : { dirty: results.machine.gitDirty }),
      };
  // The idle and remote parts also listed the uncommitted files under hooks/ they ran with.
  const run = part === 'idle' ? latestSteadyRun(results.idle) : undefined;
  const uncommitted =
    part === 'idle'
      ? (run?.points ?? []).some((p) => p.hooksUncommitted.length > 0)
      : part === 'remote' && (results.remote?.hooksUncommitted.length ?? 0) > 0;
  if (uncommitted) origin.dirty = true;
  // The idle figures shown (and their targets) are its latest steady run's, which names its commit.
  if (run?.gitCommit !== undefined) return { ...origin, date: run.date, gitCommit: run.gitCommit };
  return origin;
}

function against(part: PartCode, present: PresentCode): PartCode {
  if (part.fingerprint === undefined) return part;
  if (present.fingerprint === undefined)
    return { ...part, status: 'STALE', reason: 'the present code’s fingerprint is not known' };
  const changed = differingDirs(part.fingerprint, present.fingerprint);
  if (changed.length === 0) return { ...part, status: 'CURRENT' };
  return {
    ...part,
    status: 'STALE',
    reason: `${changed.map((dir) => `${dir}/`).join(', ')} changed since`,
  };
}

function recordedCode(part: Part, code: MeasuredCode, present: PresentCode): PartCode {
  const base: PartCode = {
    part,
    date: code.date,
    ...(code.gitCommit === undefined ? {} : { gitCommit: code.gitCommit }),
    ...(code.fingerprint === undefined ? {} : { fingerprint: code.fingerprint }),
    source: 'recorded',
    status: 'STALE',
  };
  if (code.fingerprint === undefined)
    return { ...base, reason: 'no fingerprint recorded (the run was not in a git checkout)' };
  if (code.fingerprintAtEnd !== undefined) {
    const changed = differingDirs(code.fingerprint, code.fingerprintAtEnd);
    return {
      ...base,
      reason: `the code changed while it ran (${changed.map((dir) => `${dir}/`).join(', ')})`,
    };
  }
  return against(base, present);
}

function derivedCode(part: Part, origin: Origin, lookup: CodeLookup): PartCode {
  const base: PartCode = {
    part,
    ...(origin.date === undefined ? {} : { date: origin.date }),
    ...(origin.gitCommit === undefined ? {} : { gitCommit: origin.gitCommit }),
    source: 'from commit',
    status: 'STALE',
  };
  if (origin.gitCommit === undefined) return { ...base, reason: 'no commit recorded' };
  const fingerprint = lookup.ofCommit(origin.gitCommit);
  if (fingerprint === undefined)
    return { ...base, reason: `commit ${origin.gitCommit} is not in this clone` };
  const marked = against({ ...base, fingerprint }, lookup.present);
  if (origin.dirty === false) return marked;
  // The commit's trees are not what such a run measured: say what is known, keep no fingerprint.
  const since =
    marked.status === 'STALE' ? `; ${marked.reason ?? ''} commit ${origin.gitCommit}` : '';
  return {
    ...base,
    reason:
      (origin.dirty === true
        ? 'it ran with uncommitted changes: what it measured is not known'
        : 'not recorded whether it ran with uncommitted changes') + since,
  };
}

/** Every part present in `results`, with the code it measured and its mark against the tree. */
export function partCodes(results: Omit<Results, 'targets'>, lookup: CodeLookup): PartCode[] {
  return PARTS.filter((part) => results[RESULT_KEYS[part]] !== undefined).map((part) => {
    const recorded = results.measuredCode?.[part];
    return recorded
      ? recordedCode(part, recorded, lookup.present)
      : derivedCode(part, legacyOrigin(results, part), lookup);
  });
}
