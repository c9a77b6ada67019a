/**
 * The import graph of hooks/ runs one way: down the layers of docs/design/architecture.md. A
 * module may import its own folder and folders of lower layers, never a folder of its own layer
 * (the kinds stay independent of each other) or above it.
 */
import { expect } from 'chai';
import { folderOf, relativeImports, shippedModules } from './source-files.js';

/** Lowest first. Every folder of hooks/ must be listed: a new folder must be placed. */
export const LAYERS: readonly (readonly string[])[] = [
  ['generated'],
  ['json', 'memo'],
  ['quantity', 'config', 'status'],
  ['metacontroller', 'validation'],
  ['kube', 'remote'],
  ['api', 'server'],
  ['feasibility'],
  ['placement'],
  [
    'cell',
    'plan',
    'virtualcluster',
    'gpucellpool',
    'host-namespace',
    'class-usage',
    'cell-label',
    'placement-index',
  ],
  ['delivery', 'agent'],
  ['admission', 'controllers'],
  ['cli'],
  ['main'],
];

function layerOf(folder: string): number {
  return LAYERS.findIndex((layer) => layer.includes(folder));
}

/** Why importing `target` from `module` breaks the layering; undefined if it does not. */
export function layerViolation(module: string, target: string): string | undefined {
  // package.json is metadata at the root that the image copies beside hooks/ (the version the
  // command line prints); it imports nothing.
  if (target === 'package.json') return undefined;
  if (!target.startsWith('hooks/')) return `${module} imports ${target}, outside hooks/`;
  const [from, to] = [folderOf(module), folderOf(target)];
  if (to === from || layerOf(to) < layerOf(from)) return undefined;
  return `${module} (${from}, layer ${layerOf(from)}) imports ${target} (${to}, layer ${layerOf(to)})`;
}

describe('layers: imports run down, never up or across (test/structure/layers.test.ts)', () => {
  const modules = shippedModules();

  it('places every folder of hooks/ in a layer', () => {
    const unplaced = [...new Set(modules.map(folderOf))].filter((folder) => layerOf(folder) < 0);
    expect(unplaced, 'add these folders to LAYERS').to.deep.equal([]);
  });

  it('has no import of a folder of the same or a higher layer', () => {
    const violations = modules.flatMap((module) =>
      relativeImports(module).flatMap((target) => layerViolation(module, target) ?? []),
    );
    expect(violations).to.deep.equal([]);
  });

  it('reads the imports it judges, and would refuse an upward or sideways one', () => {
    expect(relativeImports('hooks/controllers/register.ts')).to.include.members([
      'hooks/server/registry.ts',
      'hooks/cell/hooks.ts',
    ]);
    expect(layerViolation('hooks/server/app.ts', 'hooks/cell/hooks.ts')).to.match(
      /layer 5\) imports/,
    );
    expect(layerViolation('hooks/cell/sync.ts', 'hooks/plan/sync.ts')).to.be.a('string');
    expect(layerViolation('hooks/cell/sync.ts', 'hooks/status/conditions.ts')).to.equal(undefined);
  });
});
