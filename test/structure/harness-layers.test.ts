/**
 * What the tests, the benchmarks and local-up share goes through the test harness (harness/),
 * never from one of them to another (issue 27, item 5; docs/design/architecture.md, Test code):
 *
 * - scripts/ imports nothing of test/, and test/ nothing of scripts/: a test runs a script as a
 *   user does (a process, its files), a script's own tests sit beside it in scripts/;
 * - bench/ imports nothing of test/;
 * - harness/ imports nothing of test/, bench/ or scripts/;
 * - harness/'s modules import of hooks/ only what the world around KubeCell shares with it: the
 *   basics that hold the contract (json/, kube/, metacontroller/, remote/: names, labels, the
 *   hook protocol's shapes, what the hub and a managed cluster agree on), the API's group and
 *   version (api/kinds.ts) and the Cell controller's defaults the simulated provider baseline
 *   must meet (cell/config.ts). Their tests may import any of hooks/, as every test does.
 */
import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { relativeImports, REPO_ROOT } from './source-files.js';

/** Every TypeScript file under a top-level folder, relative to the repository. */
function sourcesUnder(folder: string): string[] {
  return readdirSync(path.join(REPO_ROOT, folder), { recursive: true, encoding: 'utf8' })
    .map((file) => path.posix.join(folder, file.split(path.sep).join('/')))
    .filter((file) => /\.c?ts$/.test(file) && !file.endsWith('.d.ts'))
    .sort();
}

const FORBIDDEN: Readonly<Record<string, readonly string[]>> = {
  scripts: ['test'],
  test: ['scripts'],
  bench: ['test'],
  harness: ['test', 'bench', 'scripts'],
};

/** What harness/'s modules may import of hooks/. */
const HOOKS_FOR_THE_HARNESS: readonly RegExp[] = [
  /^hooks\/(json|kube|metacontroller|remote)\//,
  /^hooks\/api\/kinds\.ts$/,
  /^hooks\/cell\/config\.ts$/,
];

const topFolder = (file: string): string => file.split('/')[0] as string;

/** Why importing `target` from `module` crosses the harness's lines; undefined if it does not. */
export function harnessViolation(module: string, target: string): string | undefined {
  const from = topFolder(module);
  const to = topFolder(target);
  if (FORBIDDEN[from]?.includes(to)) return `${module} imports ${target} (${from}/ ↛ ${to}/)`;
  if (from === 'harness' && to === 'hooks' && !module.endsWith('.test.ts')) {
    if (!HOOKS_FOR_THE_HARNESS.some((allowed) => allowed.test(target))) {
      return `${module} imports ${target}, a hooks/ module the harness does not share`;
    }
  }
  return undefined;
}

describe('harness layers: test/, bench/ and scripts/ share through harness/ (test/structure/harness-layers.test.ts)', () => {
  for (const folder of Object.keys(FORBIDDEN)) {
    it(`${folder}/ imports nothing of ${FORBIDDEN[folder]!.join('/, ')}/${folder === 'harness' ? ', and of hooks/ only the shared basics' : ''}`, () => {
      const violations = sourcesUnder(folder).flatMap((module) =>
        relativeImports(module).flatMap((target) => harnessViolation(module, target) ?? []),
      );
      expect(violations).to.deep.equal([]);
    });
  }

  it('reads the imports it judges, and would refuse a crossing one', () => {
    expect(relativeImports('scripts/local/supervisor.ts')).to.include(
      'harness/cluster/kubecell-stack.ts',
    );
    expect(relativeImports('bench/remote.ts')).to.include('harness/remote-world.ts');
    expect(harnessViolation('scripts/local/up.ts', 'test/cluster/paths.ts')).to.be.a('string');
    expect(harnessViolation('test/cluster/local.test.ts', 'scripts/local/state.ts')).to.be.a(
      'string',
    );
    expect(harnessViolation('bench/remote.ts', 'test/cluster/e2e/remote-fixtures.ts')).to.be.a(
      'string',
    );
    expect(harnessViolation('harness/remote-world.ts', 'bench/world.ts')).to.be.a('string');
    expect(harnessViolation('harness/manifests.ts', 'hooks/cell/sync.ts')).to.be.a('string');
    expect(harnessViolation('harness/manifests.ts', 'hooks/api/kinds.ts')).to.equal(undefined);
    expect(harnessViolation('harness/poll.test.ts', 'hooks/cell/sync.ts')).to.equal(undefined);
    expect(harnessViolation('test/cluster/local.test.ts', 'harness/cluster/processes.ts')).to.equal(
      undefined,
    );
  });
});
