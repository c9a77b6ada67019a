// `kubectl apply -f samples/` applies the files in the order their names sort (cli-runtime's
// file visitor walks the directory with filepath.Walk, which is lexical), and each file's
// documents top to bottom. The numeric prefixes make that order create every dependency before
// what names it: host namespaces, Cells, classes, the GPUCellPools' Secret, network and
// templates, then plans, then VirtualClusters. This test holds it: every name a sample's spec
// uses that is the name of another sample object must belong to an object applied earlier.
import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { readYamlDocuments, repoRoot, type Json } from './support.js';

interface Applied {
  file: string;
  index: number;
  kind: string;
  name: string;
  namespace?: string;
  object: Json;
}

/** The sample objects in the order `kubectl apply -f samples/` applies them. */
function appliedInOrder(): Applied[] {
  const files = readdirSync(path.join(repoRoot, 'samples'))
    .filter((file) => /\.ya?ml$/.test(file))
    .sort();
  return files.flatMap((file) =>
    readYamlDocuments(path.join('samples', file)).map((object, index) => {
      const metadata = (object['metadata'] ?? {}) as Json;
      const namespace = metadata['namespace'];
      return {
        file,
        index,
        kind: String(object['kind']),
        name: String(metadata['name']),
        ...(typeof namespace === 'string' ? { namespace } : {}),
        object,
      };
    }),
  );
}

/** Every string anywhere under `value`. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}

/** Kinds nothing else names: a string equal to one of their names is a coincidence. */
const NAMED_BY_NOTHING = new Set(['GPUCellPool', 'VirtualClusterPlan', 'VirtualCluster']);

/** What `object` needs to exist first: its Namespace, and the sample objects its spec names. */
function dependencies(object: Applied, all: readonly Applied[]): Applied[] {
  const named = new Set(strings(object.object['spec']));
  return all.filter(
    (other) =>
      other.kind !== object.kind && // a Cell's managedClusterRef may equal another Cell's name
      !NAMED_BY_NOTHING.has(other.kind) &&
      ((other.kind === 'Namespace' && other.name === object.namespace) ||
        (other.kind !== 'Namespace' && named.has(other.name))),
  );
}

describe('samples/: `kubectl apply -f samples/` creates dependencies first', () => {
  const applied = appliedInOrder();

  it('names every file with a two-digit order prefix', () => {
    const files = [...new Set(applied.map((object) => object.file))];
    expect(files.filter((file) => !/^\d\d-[a-z0-9-]+\.yaml$/.test(file))).to.deep.equal([]);
  });

  it('applies every object after the objects it names', () => {
    const late: string[] = [];
    applied.forEach((object, position) => {
      for (const dependency of dependencies(object, applied)) {
        if (applied.indexOf(dependency) > position) {
          late.push(
            `${object.kind} ${object.name} (${object.file}) names ${dependency.kind} ${dependency.name}, applied later (${dependency.file})`,
          );
        }
      }
    });
    expect(late).to.deep.equal([]);
  });

  it('finds the dependencies it is there to order (the check is not vacuous)', () => {
    const plan = applied.find((object) => object.name === 'small-on-cell1');
    expect(plan, 'the sample plan small-on-cell1').to.not.equal(undefined);
    const needs = dependencies(plan as Applied, applied).map((d) => `${d.kind}/${d.name}`);
    expect(needs).to.include.members([
      'Namespace/tenant-c',
      'Cell/cell1',
      'VirtualNodeClass/small',
    ]);
  });
});
