import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { VIRTUALCLUSTER_DEFAULTS } from './config.js';
import {
  CONTROL_PLANE_RESERVE,
  K3K_SERVER_REQUESTS,
  K3K_STORAGE_REQUEST_SIZE,
  LIMIT_RANGE_DEFAULT_LIMIT,
  LIMIT_RANGE_DEFAULT_REQUEST,
} from './constants.js';
import { REASONS, VC_CONDITION_TYPES, VC_PHASES } from './reasons.js';

const CONCEPTS = fileURLToPath(new URL('../../docs/concepts.md', import.meta.url));

/** The `## VirtualCluster` section of docs/concepts.md. */
function section(): string {
  const text = readFileSync(CONCEPTS, 'utf8');
  const start = text.indexOf('\n## VirtualCluster\n');
  expect(start, 'section "## VirtualCluster"').to.be.greaterThan(-1);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end === -1 ? undefined : end);
}

describe('docs/concepts.md "VirtualCluster"', () => {
  it('names every phase, condition type and reason token', () => {
    const text = section();
    for (const phase of VC_PHASES) expect(text, phase).to.include(`\`${phase}\``);
    for (const type of VC_CONDITION_TYPES) expect(text, type).to.include(`\`${type}\``);
    for (const reason of Object.values(REASONS)) {
      expect(text, reason).to.include(`\`${reason}\``);
    }
  });

  it('lists the control-plane reserve and the fixed child values as the code has them', () => {
    const text = section();
    for (const [key, value] of Object.entries(CONTROL_PLANE_RESERVE)) {
      const row = text
        .split('\n')
        .find((line) => line.startsWith('|') && line.includes(`\`${key}\``));
      expect(row, key).to.not.equal(undefined);
      expect(row, key).to.include(`\`${value}\``);
    }
    expect(text).to.include(`storageRequestSize: ${K3K_STORAGE_REQUEST_SIZE}`);
    expect(text).to.include(
      `{cpu: ${K3K_SERVER_REQUESTS.cpu}, memory: ${K3K_SERVER_REQUESTS.memory}}`,
    );
    expect(text).to.include(
      `{cpu: ${LIMIT_RANGE_DEFAULT_REQUEST.cpu}, memory: ${LIMIT_RANGE_DEFAULT_REQUEST.memory}}`,
    );
    expect(text).to.include(
      `{cpu: ${LIMIT_RANGE_DEFAULT_LIMIT.cpu}, memory: ${LIMIT_RANGE_DEFAULT_LIMIT.memory}}`,
    );
  });

  it('documents the settings, the deletion order and the skip-cleanup annotation', () => {
    const text = section();
    for (const [name, value] of Object.entries(VIRTUALCLUSTER_DEFAULTS)) {
      const row = text.split('\n').find((line) => line.startsWith(`| \`${name}\``));
      expect(row, name).to.include(`\`${value}\``);
    }
    expect(text).to.include('### Deletion');
    expect(text).to.include('kubecell.io/skip-cleanup=true');
    expect(text).to.include('status.cleanup');
  });
});
