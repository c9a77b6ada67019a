// The documents and the constants and reasons modules must agree: every default, setting, reason, phase,
// join Secret key and template variable the controller uses is documented, and every token a
// document's tables list is one the controller uses. The spec defaults must be the schema's.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import {
  CELL_PHASES,
  DEFAULT_UNHEALTHY_CONDITIONS,
  JOIN_SECRET_KEYS,
  SCALE_UP_STEP,
  SETTINGS_DEFAULTS,
  SPEC_DEFAULTS,
  TEMPLATE_VARIABLES,
} from './constants.js';
import {
  BOOTSTRAP_REASONS,
  CELL_HEALTH_REASONS,
  CELLS_HEALTHY_REASONS,
  READY_REASONS,
  JOIN_CONTENT_REASONS,
  REMEDIATION_REASONS,
  SCALING_REASONS,
} from './reasons.js';
import { readJoinSecret } from './template.js';

const read = (relative: string) =>
  readFileSync(fileURLToPath(new URL(relative, import.meta.url)), 'utf8');

/** The text of a `## ` section (up to the next `## `). */
function section(text: string, heading: string): string {
  const start = text.indexOf(`\n## ${heading}\n`);
  expect(start, `section "## ${heading}"`).to.be.greaterThan(-1);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end === -1 ? undefined : end);
}

/** Table rows of a text: each row's cells, trimmed. */
function rows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|\s*-/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    )
    .slice(0);
}

/** The backticked token of the given column of every table row (header excluded). */
function column(text: string, index: number): string[] {
  return rows(text)
    .map((row) => /^`([^`]+)`$/.exec(row[index] ?? '')?.[1])
    .filter((token): token is string => token !== undefined);
}

function sorted(values: Iterable<string>): string[] {
  return [...new Set(values)].sort();
}

describe('docs/autoscaling.md and the constants', () => {
  const text = read('../../docs/autoscaling.md');

  it('lists exactly the ScalingActive reasons', () => {
    expect(sorted(column(section(text, 'ScalingActive'), 0))).to.deep.equal(
      sorted(Object.values(SCALING_REASONS)),
    );
  });

  it('lists the defaults and the scale-up step as the code has them', () => {
    const table = rows(section(text, 'Defaults'));
    const value = (field: string) => table.find((row) => row[0] === `\`${field}\``)?.[1];
    expect(value('spec.replicas')).to.equal(`\`${SPEC_DEFAULTS.replicas}\``);
    expect(value('spec.autoscaling.minReplicas')).to.equal(`\`${SPEC_DEFAULTS.minReplicas}\``);
    expect(value('spec.autoscaling.scaleDownDelaySeconds')).to.equal(
      `\`${SPEC_DEFAULTS.scaleDownDelaySeconds}\``,
    );
    expect(table.find((row) => row[0]?.startsWith('scale-up step'))?.[1]).to.equal(
      `\`${SCALE_UP_STEP}\``,
    );
  });

  it('lists exactly the settings, with their defaults', () => {
    const settings = rows(section(text, 'Defaults')).filter((row) =>
      row[0]?.startsWith('`KUBECELL_'),
    );
    expect(sorted(settings.map((row) => row[0]?.slice(1, -1) ?? ''))).to.deep.equal(
      sorted(Object.keys(SETTINGS_DEFAULTS)),
    );
    for (const [name, value] of Object.entries(SETTINGS_DEFAULTS)) {
      expect(settings.find((row) => row[0] === `\`${name}\``)?.[1], name).to.equal(`\`${value}\``);
    }
  });
});

describe('docs/autoscaling.md "Cell health" and the constants', () => {
  const health = section(read('../../docs/autoscaling.md'), 'Cell health');

  it('lists exactly the health reasons, of the cells and of both conditions', () => {
    const reasons = rows(health)
      .filter((row) =>
        /healthReason|CellsHealthy|RemediationAllowed|JoinContentCurrent/.test(row[1] ?? ''),
      )
      .map((row) => /^`([^`]+)`$/.exec(row[0] ?? '')?.[1] ?? '');
    expect(sorted(reasons)).to.deep.equal(
      sorted([
        ...Object.values(CELL_HEALTH_REASONS),
        ...Object.values(CELLS_HEALTHY_REASONS),
        ...Object.values(REMEDIATION_REASONS),
        ...Object.values(JOIN_CONTENT_REASONS),
      ]),
    );
  });

  it('lists the default unhealthy conditions and the spec.health defaults as the code has them', () => {
    const conditions = rows(health)
      .filter((row) => row.length === 4 && /^`[A-Za-z]+`$/.test(row[0] ?? ''))
      .flatMap((row) =>
        [...(row[1] ?? '').matchAll(/`([A-Za-z]+)`/g)].map(
          (status) => `${row[0]?.slice(1, -1)}=${status[1]} ${row[2]}`,
        ),
      );
    expect(sorted(conditions)).to.deep.equal(
      sorted(
        DEFAULT_UNHEALTHY_CONDITIONS.map((c) => `${c.type}=${c.status} ${c.durationSeconds} s`),
      ),
    );
    const value = (field: string) =>
      rows(health).find((row) => row[0] === `\`spec.health.${field}\``)?.[1];
    expect(value('nodeStartupTimeoutSeconds')).to.equal(
      `\`${SPEC_DEFAULTS.nodeStartupTimeoutSeconds}\``,
    );
    expect(value('maxUnhealthy')).to.equal(`\`${SPEC_DEFAULTS.maxUnhealthy}\``);
    expect(value('remediation')).to.equal(`\`${SPEC_DEFAULTS.remediation}\``);
    expect(value('releaseTimeoutSeconds')).to.equal('unset');
  });
});

describe('docs/cell-image.md and the constants', () => {
  const text = read('../../docs/cell-image.md');

  it('documents exactly the template variables and the join Secret keys', () => {
    const join = section(text, 'The join Secret');
    expect(sorted(column(join, 0).filter((token) => /^[A-Z_]+$/.test(token)))).to.deep.equal(
      sorted(Object.keys(TEMPLATE_VARIABLES)),
    );
    expect(sorted(column(join, 0).filter((token) => !/^[A-Z_]+$/.test(token)))).to.deep.equal(
      sorted(Object.values(JOIN_SECRET_KEYS)),
    );
  });

  it('documents exactly the phases and the Ready and BootstrapValid reasons', () => {
    const status = section(text, 'Status');
    const phases = rows(status)
      .filter((row) => row.length === 2)
      .map((row) => /^`([^`]+)`$/.exec(row[0] ?? '')?.[1])
      .filter((token): token is string => token !== undefined);
    expect(sorted(phases)).to.deep.equal(sorted(CELL_PHASES));
    const reasons = rows(status).filter(
      (row) => row.length === 4 && /^`(Ready|BootstrapValid)`$/.test(row[0] ?? ''),
    );
    const of = (type: string) =>
      sorted(
        reasons
          .filter((row) => row[0] === `\`${type}\``)
          .map((row) => (row[1] ?? '').replace(/`/g, '')),
      );
    expect(of('Ready')).to.deep.equal(sorted(Object.values(READY_REASONS)));
    expect(of('BootstrapValid')).to.deep.equal(sorted(Object.values(BOOTSTRAP_REASONS)));
  });
});

describe('the spec defaults and the schema', () => {
  it('are the defaults schemas/gpucellpool.schema.json declares', () => {
    const schema = JSON.parse(read('../../schemas/gpucellpool.schema.json')) as {
      properties: { spec: { properties: Record<string, Record<string, unknown>> } };
    };
    const spec = schema.properties.spec.properties;
    type Node = { properties: Record<string, { default?: unknown }> };
    const kubeVirt = (spec['provisioner'] as { properties: { kubeVirt: Node } }).properties
      .kubeVirt;
    const autoscaling = spec['autoscaling'] as Node;
    expect(spec['replicas']?.['default']).to.equal(SPEC_DEFAULTS.replicas);
    expect(kubeVirt.properties['firmware']?.default).to.equal(SPEC_DEFAULTS.firmware);
    expect(autoscaling.properties['minReplicas']?.default).to.equal(SPEC_DEFAULTS.minReplicas);
    expect(autoscaling.properties['scaleDownDelaySeconds']?.default).to.equal(
      SPEC_DEFAULTS.scaleDownDelaySeconds,
    );
    const health = spec['health'] as Node;
    expect(health.properties['nodeStartupTimeoutSeconds']?.default).to.equal(
      SPEC_DEFAULTS.nodeStartupTimeoutSeconds,
    );
    expect(health.properties['maxUnhealthy']?.default).to.equal(SPEC_DEFAULTS.maxUnhealthy);
    expect(health.properties['remediation']?.default).to.equal(SPEC_DEFAULTS.remediation);
    expect(health.properties['unhealthyConditions']?.default).to.deep.equal(
      DEFAULT_UNHEALTHY_CONDITIONS,
    );
  });
});

describe('samples/30-cell-join-secret.yaml', () => {
  it('is a template the pool renders: every variable known, every key present', () => {
    const [document] = parseAllDocuments(read('../../samples/30-cell-join-secret.yaml'));
    const secret = document?.toJS() as { stringData: Record<string, string> };
    const data = Object.fromEntries(
      Object.entries(secret.stringData).map(([key, value]) => [
        key,
        Buffer.from(value, 'utf8').toString('base64'),
      ]),
    );
    const result = readJoinSecret(data);
    expect(result, JSON.stringify(result.ok ? '' : result.problem)).to.have.property('ok', true);
    if (result.ok) {
      expect(result.join.template.used).to.include.members([
        'JOIN_TOKEN',
        'NODE_LABELS',
        'NODE_NAME',
      ]);
    }
  });
});
