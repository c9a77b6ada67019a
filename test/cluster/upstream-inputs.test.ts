// The upstream inputs check (upstream-inputs.ts) on a temporary KUBECELL_UPSTREAM_DIR: missing
// files are listed with their upstream URL, commit and fetch command, a changed byte is a sha256
// mismatch, and build-binaries.ts stops on it before Go is asked. Starts no cluster.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { crdNamesIn, upstreamCrdFiles } from '../../harness/cluster/crds.js';
import {
  pinsDir,
  metacontrollerCrdsFile,
  repoRoot,
  resolveUpstreamDir,
} from '../../harness/cluster/paths.js';
import {
  UpstreamInputsError,
  fetchCommand,
  readUpstreamInputs,
  verifyUpstreamInputs,
  type UpstreamInput,
} from '../../harness/cluster/upstream-inputs.js';
import { readPinnedVersions } from '../../harness/cluster/versions.js';

/** The error verifyUpstreamInputs throws for `dir`, or a failure when it throws none. */
function problemsIn(dir: string): UpstreamInputsError {
  try {
    verifyUpstreamInputs({ env: { KUBECELL_UPSTREAM_DIR: dir } });
  } catch (error) {
    if (error instanceof UpstreamInputsError) return error;
    throw error;
  }
  throw new Error(`verifyUpstreamInputs accepted ${dir}`);
}

/** A copy of the real (verified) inputs in `dir`. */
function copyInputs(inputs: readonly UpstreamInput[], from: string, to: string): void {
  for (const input of inputs) {
    const target = path.join(to, input.path);
    mkdirSync(path.dirname(target), { recursive: true });
    copyFileSync(path.join(from, input.path), target);
  }
}

describe('upstream inputs (KUBECELL_UPSTREAM_DIR), checked before anything is built', function () {
  const inputs = readUpstreamInputs();
  let scratch: string;

  before(function () {
    scratch = mkdtempSync(path.join(os.tmpdir(), 'kubecell-upstream-inputs-'));
  });
  after(function () {
    rmSync(scratch, { recursive: true, force: true });
  });

  it('pins every input with its sha256, upstream tag and commit, and a fetch command', function () {
    const versions = readPinnedVersions();
    const archives = inputs.filter((input) => input.kind === 'source-archive');
    expect(archives.map((archive) => archive.path)).to.have.members([
      `upstream-src/${versions.metacontroller.archive}`,
      `upstream-src/${versions.ocm.archive}`,
    ]);
    for (const pinned of [versions.metacontroller, versions.ocm]) {
      const archive = archives.find((input) => input.path === `upstream-src/${pinned.archive}`);
      expect(archive?.sha256).to.equal(pinned.sha256);
      expect(archive?.commit).to.equal(pinned.commit);
      expect(archive?.tag).to.equal(pinned.version);
      expect(archive?.fetch).to.include(`git -C "$src" archive --format=tar.gz`);
      // The folder the archive extracts to is what binaries.ts builds in.
      expect(archive?.fetch).to.include(`--prefix=${pinned.archive.replace(/\.tar\.gz$/, '/')}`);
      expect(archive?.fetch).to.include(pinned.commit);
    }
    for (const input of inputs.filter((candidate) => candidate.kind === 'crd')) {
      const repository = input.project.replace('https://github.com/', '');
      // The raw file at the pinned tag, fetched as is.
      expect(input.url).to.match(
        new RegExp(
          `^https://raw\\.githubusercontent\\.com/${repository}/${input.tag}/\\S+\\.yaml$`,
        ),
      );
      expect(input.fetch).to.equal(`curl -fsSL --create-dirs -o {dir}/${input.path} ${input.url}`);
    }
  });

  it('the real inputs match, and each CRD file holds exactly the CRDs it is pinned for', function () {
    const verified = verifyUpstreamInputs();
    expect(verified.dir).to.equal(resolveUpstreamDir());
    const files = upstreamCrdFiles();
    expect(files).to.include(metacontrollerCrdsFile);
    for (const input of inputs.filter((candidate) => candidate.kind === 'crd')) {
      const file = path.join(verified.dir, input.path);
      expect(files).to.include(file);
      expect(crdNamesIn(file), input.path).to.have.members(input.crds ?? []);
    }
  });

  it('lists every missing file with its upstream URL, commit and the command that fetches it', function () {
    const empty = path.join(scratch, 'empty');
    mkdirSync(empty);
    const error = problemsIn(empty);
    expect(error.problems.map((problem) => problem.input.path)).to.have.members(
      inputs.map((input) => input.path),
    );
    expect(error.problems.every((problem) => problem.problem === 'missing')).to.equal(true);
    expect(error.message).to.include(`KUBECELL_UPSTREAM_DIR=${empty}`);
    expect(error.message).to.include(`${inputs.length} file(s) are missing and 0 differ`);
    for (const input of inputs) {
      expect(error.message).to.include(`MISSING ${input.path}`);
      expect(error.message).to.include(input.url);
      expect(error.message).to.include(`${input.project} ${input.tag} (commit ${input.commit})`);
      expect(error.message).to.include(fetchCommand(input, empty));
    }
    expect(error.message).to.include('point KUBECELL_UPSTREAM_DIR at a directory');
  });

  it('a directory that does not exist is all missing; a directory passed in is not named as the variable', function () {
    const absent = path.join(scratch, 'does-not-exist');
    expect(problemsIn(absent).problems).to.have.length(inputs.length);
    let caught: unknown;
    try {
      verifyUpstreamInputs({ dir: absent, env: {} });
    } catch (error) {
      caught = error;
    }
    expect(caught).to.be.instanceOf(UpstreamInputsError);
    const message = (caught as Error).message;
    expect(message).to.include(`are not all in ${absent}.`);
    expect(message).not.to.include(`KUBECELL_UPSTREAM_DIR=${absent}`);
  });

  it('reads KUBECELL_UPSTREAM_DIR from the environment when called', function () {
    const saved = process.env.KUBECELL_UPSTREAM_DIR;
    process.env.KUBECELL_UPSTREAM_DIR = path.join(scratch, 'from-env');
    try {
      expect(() => verifyUpstreamInputs()).to.throw(
        UpstreamInputsError,
        `KUBECELL_UPSTREAM_DIR=${path.join(scratch, 'from-env')}`,
      );
    } finally {
      if (saved === undefined) delete process.env.KUBECELL_UPSTREAM_DIR;
      else process.env.KUBECELL_UPSTREAM_DIR = saved;
    }
  });

  it('a copy of the inputs passes; one changed byte is a sha256 mismatch of that file only', function () {
    const copy = path.join(scratch, 'copy');
    copyInputs(inputs, resolveUpstreamDir(), copy);
    expect(verifyUpstreamInputs({ env: { KUBECELL_UPSTREAM_DIR: copy } }).dir).to.equal(copy);

    const changed = inputs.find((input) => input.path.endsWith('k3k.io_clusters.yaml'));
    if (!changed) throw new Error('k3k.io_clusters.yaml is not pinned');
    const file = path.join(copy, changed.path);
    const bytes = readFileSync(file);
    const index = bytes.length - 2;
    bytes.writeUInt8(bytes.readUInt8(index) ^ 1, index);
    writeFileSync(file, bytes);
    const error = problemsIn(copy);
    expect(error.problems).to.have.length(1);
    const [problem] = error.problems;
    expect(problem?.problem).to.equal('sha256-mismatch');
    expect(problem?.input.path).to.equal(changed.path);
    expect(problem?.detail)
      .to.match(/^[0-9a-f]{64}$/)
      .and.not.equal(changed.sha256);
    expect(error.message).to.include(
      `SHA256 MISMATCH ${changed.path}: found ${problem?.detail}, pinned ${changed.sha256}`,
    );
    expect(error.message).to.include('0 file(s) are missing and 1 differ');
    expect(error.message).to.include(fetchCommand(changed, copy));
  });

  it('quotes a directory with spaces in the fetch commands', function () {
    const [first] = inputs;
    if (!first) throw new Error('no input pinned');
    expect(fetchCommand(first, "/tmp/my inputs/it's")).to.include(
      `'/tmp/my inputs/it'\\''s'/${first.path}`,
    );
  });

  it('build-binaries.ts stops at once on missing inputs, before Go is asked or anything built', function () {
    this.timeout(120_000);
    const empty = path.join(scratch, 'empty-for-build');
    mkdirSync(empty);
    const started = performance.now();
    const result = spawnSync(
      process.execPath,
      ['--import', 'tsx', path.join(pinsDir, 'build-binaries.ts')],
      {
        cwd: repoRoot,
        encoding: 'utf8',
        // No Go on PATH: the inputs check must come first, so Go's absence is never reached.
        env: { ...process.env, KUBECELL_UPSTREAM_DIR: empty, PATH: path.dirname(process.execPath) },
        timeout: 110_000,
      },
    );
    const seconds = (performance.now() - started) / 1000;
    expect(result.status, result.stderr).to.equal(1);
    expect(result.stderr).to.include(`KUBECELL_UPSTREAM_DIR=${empty}`);
    for (const input of inputs) expect(result.stderr).to.include(`MISSING ${input.path}`);
    expect(result.stderr).not.to.include('Go is not installed');
    expect(result.stderr).not.to.include('building');
    console.log(
      `      build-binaries.ts failed in ${seconds.toFixed(1)} s (node and tsx start-up included)`,
    );
  });
});
