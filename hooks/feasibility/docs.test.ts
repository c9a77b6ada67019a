import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { REASONS as PlanConditionReason } from '../plan/reasons.js';
import { CHECK_ORDER, Reason } from './reasons.js';

const CONCEPTS = fileURLToPath(new URL('../../docs/concepts.md', import.meta.url));

/** The text of one `## ` section of docs/concepts.md. */
function section(title: string): string {
  const text = readFileSync(CONCEPTS, 'utf8');
  const start = text.indexOf(`\n## ${title}\n`);
  expect(start, `section "## ${title}"`).to.be.greaterThan(-1);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end === -1 ? undefined : end);
}

describe('docs/concepts.md', () => {
  it('"Feasibility evaluation" names every check and every reason token', () => {
    const text = section('Feasibility evaluation');
    for (const name of CHECK_ORDER) expect(text, name).to.include(`\`${name}\``);
    for (const reason of Object.values(Reason)) expect(text, reason).to.include(`\`${reason}\``);
  });

  it('"VirtualClusterPlan" names its conditions, their reasons and its setting', () => {
    const text = section('VirtualClusterPlan');
    for (const reason of Object.values(PlanConditionReason)) {
      expect(text, reason).to.include(`\`${reason}\``);
    }
    expect(text).to.include('`KUBECELL_PLAN_TTL_SECONDS` (default `900`');
  });
});
