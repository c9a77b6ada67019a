// Every field KubeCell writes into a ManifestWork is one OCM's CRD declares, with a value of the
// declared type and enum: the apiserver would prune an unknown field silently (a structural
// schema), and the work agent would then apply something else than KubeCell meant. Checked
// against the pinned CRD of OCM v1.3.1 (upstream-crds/work.open-cluster-management.io_manifestworks.yaml),
// whose Go types are vendor/open-cluster-management.io/api/work/v1/types.go.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { upstreamCrdsDir } from '../../harness/cluster/paths.js';
import { isJsonObject } from '../json/json.js';
import { syncDelivery } from './sync.js';
import { CONFIG, placedVirtualCluster, remoteCell, syncRequest } from './testing.js';

type Schema = Record<string, unknown>;

function manifestWorkSchema(): Schema {
  const file = path.join(upstreamCrdsDir, 'work.open-cluster-management.io_manifestworks.yaml');
  const crd = parse(readFileSync(file, 'utf8')) as {
    spec: { versions: { name: string; schema: { openAPIV3Schema: Schema } }[] };
  };
  const v1 = crd.spec.versions.find((version) => version.name === 'v1');
  if (v1 === undefined) throw new Error(`${file} serves no v1`);
  return v1.schema.openAPIV3Schema;
}

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** Every departure of `value` from `schema`, by path. */
function departures(value: unknown, schema: Schema, at: string): string[] {
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) return [];
  const problems: string[] = [];
  const type = schema['type'];
  const actual = typeOf(value);
  if (typeof type === 'string' && actual !== type && !(type === 'number' && actual === 'integer')) {
    return [`${at}: ${actual}, the CRD says ${type}`];
  }
  if (Array.isArray(schema['enum']) && !schema['enum'].includes(value)) {
    problems.push(`${at}: ${JSON.stringify(value)} is none of ${JSON.stringify(schema['enum'])}`);
  }
  if (Array.isArray(value) && isJsonObject(schema['items'])) {
    const items = schema['items'];
    value.forEach((item, i) => problems.push(...departures(item, items, `${at}[${i}]`)));
  }
  // An object without declared properties (metadata) is the apiserver's own to check.
  if (isJsonObject(value) && isJsonObject(schema['properties'])) {
    const properties = schema['properties'] as Record<string, Schema>;
    for (const required of (schema['required'] ?? []) as string[]) {
      if (!(required in value)) problems.push(`${at}.${required}: required by the CRD`);
    }
    for (const [key, child] of Object.entries(value)) {
      const declared = properties[key];
      if (declared === undefined) problems.push(`${at}.${key}: not a field of the CRD`);
      else problems.push(...departures(child, declared, `${at}.${key}`));
    }
  }
  return problems;
}

describe('the ManifestWorks KubeCell writes fit OCM v1.3.1 CRD', () => {
  const schema = manifestWorkSchema();
  const { vc } = placedVirtualCluster();
  const works = syncDelivery(syncRequest([remoteCell(), vc]), CONFIG).attachments;

  it('renders both works (guard)', () => {
    expect(works.map((work) => work.metadata.name)).to.have.length(2);
  });

  for (const index of [0, 1]) {
    it(`work ${index}: every field is declared, typed and within its enum`, () => {
      const work = works[index];
      expect(departures(work, schema, work?.metadata.name ?? '?')).to.deep.equal([]);
    });
  }

  it('would notice a misspelt field and a value outside an enum', () => {
    const work = structuredClone(works[1]) as unknown as { spec: Record<string, unknown> };
    work.spec['deleteOptions'] = {};
    (work.spec['manifestConfigs'] as { updateStrategy?: { type: string } }[])[0] = {
      ...(work.spec['manifestConfigs'] as object[])[0],
      updateStrategy: { type: 'OnDelete' },
    };
    expect(departures(work, schema, 'w')).to.deep.equal([
      'w.spec.manifestConfigs[0].updateStrategy.type: "OnDelete" is none of ["Update","CreateOnly","ServerSideApply","ReadOnly"]',
      'w.spec.deleteOptions: not a field of the CRD',
    ]);
  });
});
