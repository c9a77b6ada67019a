/**
 * results.md's account of the code each part measured (bench/part-code.ts), and the targets'
 * Met column: a target of a STALE part is shown as STALE, never as met.
 */
import { fingerprintText } from './code-fingerprint.js';
import type { PartCode, PresentCode } from './part-code.js';
import type { Target } from './report.js';

export interface CodeMarks {
  parts: PartCode[];
  present: PresentCode;
}

/** The Met cell of a target: as measured for a CURRENT part, STALE for any other. */
export function metText(target: Target, marks: CodeMarks): string {
  const measured = target.met === true ? 'yes' : target.met === false ? '**no**' : target.met;
  const code = marks.parts.find((part) => part.part === target.part);
  if (target.part === undefined || code?.status === 'CURRENT' || target.met === 'not measured')
    return measured;
  const was =
    target.met === true ? 'met' : target.met === false ? 'not met' : `${target.met}; measured`;
  return `**STALE** (${was} on older code)`;
}

function presentText(present: PresentCode): string {
  const commit = present.gitCommit ?? 'unknown';
  return present.fingerprint
    ? `commit ${commit}, code ${fingerprintText(present.fingerprint)}`
    : `commit ${commit}, code fingerprint unknown (not a git checkout)`;
}

function row(code: PartCode): string {
  const when = code.date ? code.date.slice(0, 16).replace('T', ' ') : '–';
  const fingerprint = code.fingerprint
    ? `${fingerprintText(code.fingerprint)} (${code.source})`
    : code.source === 'recorded'
      ? 'not recorded'
      : 'not known (an older run)';
  const mark = code.status === 'CURRENT' ? 'CURRENT' : `**STALE**: ${code.reason ?? ''}`;
  return `| ${code.part} | ${when} | ${code.gitCommit ?? '–'} | ${fingerprint} | ${mark} |`;
}

export function codeMarkdown(marks: CodeMarks): string[] {
  return [
    '## Code measured',
    '',
    `The code each part measured: the git tree ids of \`hooks/\`, \`schemas/\` and \`metacontroller/\` as the part started (uncommitted edits included; for runs before these were recorded, the trees of the commit the run names). Held against the tree this file was written from: ${presentText(marks.present)}. A part measured on other code is STALE: its figures are history, and its targets are not shown as met. \`npm run bench:report\` writes this file again from results.json against the present tree.`,
    '',
    '| Part | Measured (UTC) | Commit | Code: hooks · schemas · metacontroller | Against this tree |',
    '| --- | --- | --- | --- | --- |',
    ...marks.parts.map(row),
    '',
  ];
}
