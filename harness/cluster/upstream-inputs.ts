// The upstream inputs of the cluster tests and `npm run local-up`: files that no package registry
// serves (the upstream CRDs, the source archives of Metacontroller and OCM), read from one directory,
// $KUBECELL_UPSTREAM_DIR (default ../shared beside the repository). upstream-inputs.json pins
// each one: its path in that directory, sha256, upstream project, tag and commit, and the
// command that fetches or makes it.
//
// verifyUpstreamInputs() checks them all by sha256 before anything is built or started, so a
// clone without them fails within seconds, not after building Kubernetes, and says which files
// are missing or different, where they come from and how to get each one.
//
// `npx tsx test/cluster/upstream-inputs.ts` (that command lives beside the pins) runs the same
// check and prints the result.
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { repoRoot, resolveUpstreamDir, upstreamInputsFile } from './paths.js';
import { readPinnedVersions, type PinnedVersions } from './versions.js';

export interface UpstreamInput {
  /** Path in the upstream inputs directory, with `/`, e.g. upstream-crds/k3k.io_clusters.yaml. */
  path: string;
  /** sha256 of the file; any other bytes are refused. */
  sha256: string;
  /** Upstream repository, https://github.com/<org>/<repo>. */
  project: string;
  /** Release tag the file is taken from (or made from). */
  tag: string;
  /** Commit of that tag (40 hex digits). */
  commit: string;
  /** Where the file is published: the raw URL of a CRD at the tag, the tree of an archive. */
  url: string;
  /** The exact shell command that fetches or makes the file; `{dir}` is the directory. */
  fetch: string;
  /** `crd`: installed into the control plane; `source-archive`: built from. */
  kind: 'crd' | 'source-archive';
  /** metadata.name of every CustomResourceDefinition in a `crd` file. */
  crds?: string[];
  /** Anything else worth knowing when the file is missing or different. */
  note?: string;
}

/** One input that is not as pinned. */
export interface UpstreamInputProblem {
  input: UpstreamInput;
  /** Absolute path looked at. */
  file: string;
  problem: 'missing' | 'sha256-mismatch' | 'unreadable';
  /** The sha256 found (sha256-mismatch), or the error (unreadable). */
  detail?: string;
}

const SHA256 = /^[0-9a-f]{64}$/;
const COMMIT = /^[0-9a-f]{40}$/;
const PROJECT = /^https:\/\/github\.com\/[\w.-]+\/[\w.-]+$/;

function fail(message: string): never {
  throw new Error(`${upstreamInputsFile}: ${message}`);
}

function requireString(entry: Record<string, unknown>, key: string, where: string): string {
  const value = entry[key];
  if (typeof value !== 'string' || value === '') fail(`${where}.${key} must be a string`);
  return value;
}

/** The archives Metacontroller and OCM are built from are pinned twice; both pins must agree. */
function assertMatchesVersions(inputs: readonly UpstreamInput[], versions: PinnedVersions): void {
  for (const pinned of [versions.metacontroller, versions.ocm]) {
    const archivePath = `upstream-src/${pinned.archive}`;
    const entry = inputs.find((input) => input.path === archivePath);
    if (!entry) fail(`no entry for ${archivePath}, the archive test/cluster/versions.json names`);
    const disagreements = [
      entry.kind === 'source-archive' ? '' : `kind ${entry.kind}, not source-archive`,
      entry.sha256 === pinned.sha256
        ? ''
        : `sha256 ${entry.sha256}, versions.json ${pinned.sha256}`,
      entry.commit === pinned.commit
        ? ''
        : `commit ${entry.commit}, versions.json ${pinned.commit}`,
      entry.tag === pinned.version ? '' : `tag ${entry.tag}, versions.json ${pinned.version}`,
      entry.project === pinned.repository
        ? ''
        : `project ${entry.project}, versions.json ${pinned.repository}`,
    ].filter((text) => text !== '');
    if (disagreements.length > 0) {
      fail(`${archivePath} disagrees with test/cluster/versions.json: ${disagreements.join('; ')}`);
    }
  }
}

/** Reads and validates upstream-inputs.json (and that it agrees with versions.json). */
export function readUpstreamInputs(): UpstreamInput[] {
  const document = JSON.parse(readFileSync(upstreamInputsFile, 'utf8')) as { inputs?: unknown };
  if (!Array.isArray(document.inputs) || document.inputs.length === 0) {
    fail('"inputs" must be a non-empty array');
  }
  const seen = new Set<string>();
  const inputs = document.inputs.map((raw: unknown, index): UpstreamInput => {
    const where = `inputs[${index}]`;
    if (typeof raw !== 'object' || raw === null) fail(`${where} must be an object`);
    const entry = raw as Record<string, unknown>;
    const input: UpstreamInput = {
      path: requireString(entry, 'path', where),
      sha256: requireString(entry, 'sha256', where),
      project: requireString(entry, 'project', where),
      tag: requireString(entry, 'tag', where),
      commit: requireString(entry, 'commit', where),
      url: requireString(entry, 'url', where),
      fetch: requireString(entry, 'fetch', where),
      kind: requireString(entry, 'kind', where) as UpstreamInput['kind'],
    };
    if (!/^upstream-(crds|src)\/[\w.-]+$/.test(input.path)) {
      fail(`${where}.path must be upstream-crds/<file> or upstream-src/<file>: ${input.path}`);
    }
    if (seen.has(input.path)) fail(`${where}.path ${input.path} is listed twice`);
    seen.add(input.path);
    if (!SHA256.test(input.sha256)) fail(`${where}.sha256 must be 64 lowercase hex digits`);
    if (!COMMIT.test(input.commit)) fail(`${where}.commit must be 40 lowercase hex digits`);
    if (!PROJECT.test(input.project)) fail(`${where}.project must be a GitHub repository URL`);
    if (!input.fetch.includes(`{dir}/${input.path}`)) {
      fail(`${where}.fetch must write {dir}/${input.path}`);
    }
    if (input.kind === 'crd') {
      const crds = entry.crds;
      if (!Array.isArray(crds) || crds.length === 0 || crds.some((n) => typeof n !== 'string')) {
        fail(`${where}.crds must list the CustomResourceDefinitions of ${input.path}`);
      }
      input.crds = crds as string[];
    } else if (input.kind !== 'source-archive') {
      fail(`${where}.kind must be crd or source-archive`);
    }
    if (typeof entry.note === 'string') input.note = entry.note;
    return input;
  });
  assertMatchesVersions(inputs, readPinnedVersions());
  return inputs;
}

function sha256OfFile(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** The inputs that are missing or not the pinned bytes in `dir` (empty when all are right). */
export function findUpstreamInputProblems(
  dir: string,
  inputs: readonly UpstreamInput[] = readUpstreamInputs(),
): UpstreamInputProblem[] {
  const problems: UpstreamInputProblem[] = [];
  for (const input of inputs) {
    const file = path.join(dir, ...input.path.split('/'));
    let isFile: boolean;
    try {
      isFile = statSync(file).isFile();
    } catch {
      isFile = false;
    }
    if (!isFile) {
      problems.push({ input, file, problem: 'missing' });
      continue;
    }
    let actual: string;
    try {
      actual = sha256OfFile(file);
    } catch (error) {
      problems.push({ input, file, problem: 'unreadable', detail: String(error) });
      continue;
    }
    if (actual !== input.sha256) {
      problems.push({ input, file, problem: 'sha256-mismatch', detail: actual });
    }
  }
  return problems;
}

/** `dir` quoted for a POSIX shell when it needs it. */
function shellWord(text: string): string {
  return /^[\w./+,:@%=-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/** The fetch command of an input, for the directory `dir`. */
export function fetchCommand(input: UpstreamInput, dir: string): string {
  return input.fetch.replaceAll('{dir}', shellWord(dir));
}

function describeProblem(
  { input, file, problem, detail }: UpstreamInputProblem,
  dir: string,
): string {
  const what =
    problem === 'missing'
      ? `MISSING ${input.path}`
      : problem === 'unreadable'
        ? `UNREADABLE ${input.path}: ${detail ?? ''}`
        : `SHA256 MISMATCH ${input.path}: found ${detail ?? '?'}, pinned ${input.sha256}`;
  return [
    `  ${what}`,
    `      file:     ${file}`,
    `      upstream: ${input.project} ${input.tag} (commit ${input.commit})`,
    `                ${input.url}`,
    `      get it:   ${fetchCommand(input, dir)}`,
    ...(input.note === undefined ? [] : [`      note:     ${input.note}`]),
  ].join('\n');
}

/** How the directory was chosen, for the message. */
export type UpstreamDirSource = 'KUBECELL_UPSTREAM_DIR' | 'default' | 'argument';

/** The upstream inputs are missing or are not the pinned bytes. */
export class UpstreamInputsError extends Error {
  constructor(
    readonly dir: string,
    readonly problems: readonly UpstreamInputProblem[],
    readonly source: UpstreamDirSource,
  ) {
    const missing = problems.filter((p) => p.problem === 'missing').length;
    const manifest = path.relative(repoRoot, upstreamInputsFile);
    const where =
      source === 'KUBECELL_UPSTREAM_DIR'
        ? `KUBECELL_UPSTREAM_DIR=${dir}`
        : source === 'default'
          ? `${dir} (the default: ../shared beside the repository; KUBECELL_UPSTREAM_DIR is not set)`
          : dir;
    super(
      [
        `The upstream inputs of the cluster tests and local-up are not all in ${where}.`,
        `Of the ${manifest} pins, ${missing} file(s) are missing and ${problems.length - missing} differ`,
        '(checked by sha256 before anything is built or started):',
        '',
        ...problems.map((problem) => describeProblem(problem, dir)),
        '',
        'Either run the commands above (they need curl, and git for the archive, and write into',
        `${dir}), or point KUBECELL_UPSTREAM_DIR at a directory that holds these files`,
        '(upstream-crds/ and upstream-src/ with the names above), for example',
        '  KUBECELL_UPSTREAM_DIR=/path/to/shared npm test',
        `A file whose sha256 differs is not the pinned upstream file: fetch it again. To move to another`,
        `upstream release, change ${manifest} (and test/cluster/versions.json for Metacontroller or OCM)`,
        'in the same commit.',
      ].join('\n'),
    );
    this.name = 'UpstreamInputsError';
  }
}

export interface VerifiedUpstreamInputs {
  dir: string;
  inputs: UpstreamInput[];
}

/**
 * Checks every pinned upstream input in `dir` (default: $KUBECELL_UPSTREAM_DIR, else ../shared)
 * by sha256 and throws UpstreamInputsError, naming every missing or different file, unless all
 * are right. It reads about 20 MB (OCM's archive is 18 MB): some 50 milliseconds.
 */
export function verifyUpstreamInputs(
  options: { dir?: string; env?: NodeJS.ProcessEnv } = {},
): VerifiedUpstreamInputs {
  const env = options.env ?? process.env;
  const dir = path.resolve(options.dir ?? resolveUpstreamDir(env));
  const inputs = readUpstreamInputs();
  const problems = findUpstreamInputProblems(dir, inputs);
  if (problems.length > 0) {
    const source: UpstreamDirSource =
      options.dir !== undefined
        ? 'argument'
        : (env.KUBECELL_UPSTREAM_DIR ?? '') === ''
          ? 'default'
          : 'KUBECELL_UPSTREAM_DIR';
    throw new UpstreamInputsError(dir, problems, source);
  }
  return { dir, inputs };
}

/** The verified file of one input, by its path in the directory. */
export function upstreamInputFile(verified: VerifiedUpstreamInputs, inputPath: string): string {
  const input = verified.inputs.find((candidate) => candidate.path === inputPath);
  if (!input) throw new Error(`${inputPath} is not pinned in ${upstreamInputsFile}`);
  return path.join(verified.dir, ...input.path.split('/'));
}

/** Absolute paths of the verified inputs of one kind, sorted by path. */
export function verifiedFiles(
  verified: VerifiedUpstreamInputs,
  kind: UpstreamInput['kind'],
): string[] {
  return verified.inputs
    .filter((input) => input.kind === kind)
    .map((input) => input.path)
    .sort()
    .map((inputPath) => path.join(verified.dir, ...inputPath.split('/')));
}
