/**
 * The code fingerprint (bench/code-fingerprint.ts) in a scratch git repository: for a clean tree
 * it is git's own tree ids, and it follows every change git would commit (edits, new files,
 * deletions, the execute bit) and none it would not (ignored files, other directories).
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  commitFingerprint,
  differingDirs,
  treeFingerprint,
  type CodeFingerprint,
} from '../../bench/code-fingerprint.js';

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'bench test',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'bench test',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
};

describe('bench: the code fingerprint of hooks/, schemas/, metacontroller/', function () {
  this.timeout(30_000);
  let repo: string;
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: repo, env: GIT_ENV, encoding: 'utf8' }).trim();
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    writeFileSync(path.join(repo, file), text);
  };
  /** What git would record for the tree as it is: everything added, then the trees read. */
  const gitWouldCommit = (): CodeFingerprint => {
    git('add', '-A');
    const tree = git('write-tree');
    const id = (dir: string) => git('rev-parse', `${tree}:${dir}`);
    return { hooks: id('hooks'), schemas: id('schemas'), metacontroller: id('metacontroller') };
  };

  beforeEach(() => {
    repo = mkdtempSync(path.join(os.tmpdir(), 'kubecell-fingerprint-'));
    git('init', '-q');
    // Names whose order differs between plain sorting and git's (a directory sorts as "name/").
    write('hooks/a.ts', 'export const a = 1;\n');
    write('hooks/a-b.ts', 'b\n');
    write('hooks/a/inner.ts', 'inner\n');
    write('hooks/a0.ts', 'zero\n');
    write('hooks/deep/er/file.json', '{}\n');
    write('hooks/run.sh', '#!/bin/sh\n');
    chmodSync(path.join(repo, 'hooks/run.sh'), 0o755);
    symlinkSync('a.ts', path.join(repo, 'hooks/link.ts'));
    write('schemas/cell.schema.json', '{"type":"object"}\n');
    write('metacontroller/cell.yaml', 'kind: CompositeController\n');
    write('.gitignore', 'hooks/*.log\n');
    write('docs/readme.md', 'docs\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'start');
  });

  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  it('is, for a clean tree, the tree ids git holds for HEAD', () => {
    const head = git('rev-parse', 'HEAD');
    expect(treeFingerprint(repo)).to.deep.equal({
      hooks: git('rev-parse', 'HEAD:hooks'),
      schemas: git('rev-parse', 'HEAD:schemas'),
      metacontroller: git('rev-parse', 'HEAD:metacontroller'),
    });
    expect(commitFingerprint(repo, head.slice(0, 7))).to.deep.equal(treeFingerprint(repo));
  });

  it('follows uncommitted edits, new files, deletions and the execute bit, directory by directory', () => {
    const clean = treeFingerprint(repo);
    write('schemas/cell.schema.json', '{"type":"object","title":"edited"}\n');
    const edited = treeFingerprint(repo);
    expect(differingDirs(clean, edited)).to.deep.equal(['schemas']);
    expect(edited).to.deep.equal(gitWouldCommit());

    write('hooks/a/new.ts', 'new\n');
    rmSync(path.join(repo, 'hooks/a0.ts'));
    chmodSync(path.join(repo, 'hooks/run.sh'), 0o644);
    const changed = treeFingerprint(repo);
    expect(differingDirs(edited, changed)).to.deep.equal(['hooks']);
    expect(changed).to.deep.equal(gitWouldCommit());
  });

  it('ignores what git ignores and what is outside the shipped directories', () => {
    const clean = treeFingerprint(repo);
    write('hooks/server.log', 'noise\n');
    write('docs/readme.md', 'other docs\n');
    write('bench/results.json', '{}\n');
    expect(treeFingerprint(repo)).to.deep.equal(clean);
  });

  it('gives no fingerprint for a commit this clone does not have', () => {
    expect(commitFingerprint(repo, 'deadbeefdeadbeef')).to.equal(undefined);
    expect(commitFingerprint(repo, 'HEAD; rm -rf /')).to.equal(undefined);
  });
});
