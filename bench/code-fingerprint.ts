/**
 * The code a benchmark figure belongs to: the shipped directories (hooks/, schemas/,
 * metacontroller/) as git tree ids. For the working tree they are computed from the files as they
 * are on disk (uncommitted edits and new files included, ignored files not), in git's own tree
 * format, so a clean tree's fingerprint equals `git rev-parse HEAD:hooks` (and so on), and the
 * fingerprint of an older commit is read from git itself (`git rev-parse <commit>:hooks`).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';

export const SHIPPED_DIRS = ['hooks', 'schemas', 'metacontroller'] as const;
export type ShippedDir = (typeof SHIPPED_DIRS)[number];
/** A git tree id (40 hex digits) per shipped directory. */
export type CodeFingerprint = Record<ShippedDir, string>;

/** Git's id of the empty tree: a shipped directory that does not exist (yet). */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

function gitObjectId(type: 'blob' | 'tree', content: Buffer): Buffer {
  return createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest();
}

interface TreeNode {
  files: Map<string, { mode: string; id: Buffer }>;
  dirs: Map<string, TreeNode>;
}

const emptyNode = (): TreeNode => ({ files: new Map(), dirs: new Map() });

/** A file as git stores it: its mode (core.fileMode: the owner's execute bit) and blob id. */
function blobOf(file: string): { mode: string; id: Buffer } | undefined {
  let stat;
  try {
    stat = lstatSync(file);
  } catch {
    return undefined; // tracked but deleted in the working tree: not shipped
  }
  if (stat.isSymbolicLink())
    return { mode: '120000', id: gitObjectId('blob', Buffer.from(readlinkSync(file))) };
  if (!stat.isFile()) return undefined;
  const mode = stat.mode & 0o100 ? '100755' : '100644';
  return { mode, id: gitObjectId('blob', readFileSync(file)) };
}

/** Git orders a tree's entries by name bytes, a directory's name read with a trailing '/'. */
function treeId(node: TreeNode): Buffer {
  const entries = [
    ...[...node.files].map(([name, file]) => ({ key: name, name, ...file })),
    ...[...node.dirs].map(([name, dir]) => ({
      key: `${name}/`,
      name,
      mode: '40000',
      id: treeId(dir),
    })),
  ].sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)));
  return gitObjectId(
    'tree',
    Buffer.concat(
      entries.flatMap((entry) => [Buffer.from(`${entry.mode} ${entry.name}\0`), entry.id]),
    ),
  );
}

function git(root: string, args: string[]): string {
  return execFileSync('git', args, {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
}

/**
 * The fingerprint of the shipped directories as they are on disk under `root` (a git checkout):
 * the files git tracks or would add (not ignored ones), read now.
 */
export function treeFingerprint(root: string): CodeFingerprint {
  const listed = git(root, [
    'ls-files',
    '-z',
    '--cached',
    '--others',
    '--exclude-standard',
    '--',
    ...SHIPPED_DIRS,
  ]);
  const tops = new Map<ShippedDir, TreeNode>(SHIPPED_DIRS.map((dir) => [dir, emptyNode()]));
  for (const relative of new Set(listed.split('\0').filter((name) => name !== ''))) {
    const [top, ...rest] = relative.split('/');
    const blob = blobOf(path.join(root, relative));
    const name = rest.pop();
    if (blob === undefined || name === undefined) continue;
    const topNode = tops.get(top as ShippedDir);
    if (topNode === undefined) continue;
    let node: TreeNode = topNode;
    for (const dir of rest) {
      const next: TreeNode = node.dirs.get(dir) ?? emptyNode();
      node.dirs.set(dir, next);
      node = next;
    }
    node.files.set(name, blob);
  }
  const ids = [...tops].map(([dir, node]) => [dir, treeId(node).toString('hex')]);
  return Object.fromEntries(ids) as CodeFingerprint;
}

/**
 * The fingerprint of a commit's shipped directories, read from git; undefined when the commit is
 * not in this clone (a shallow clone, or a commit rewritten since).
 */
export function commitFingerprint(root: string, commit: string): CodeFingerprint | undefined {
  if (!/^[0-9a-f]{4,40}$/i.test(commit)) return undefined;
  try {
    git(root, ['rev-parse', '--verify', '--quiet', `${commit}^{commit}`]);
  } catch {
    return undefined;
  }
  const entries = SHIPPED_DIRS.map((dir) => {
    try {
      return [dir, git(root, ['rev-parse', '--verify', '--quiet', `${commit}:${dir}`]).trim()];
    } catch {
      return [dir, EMPTY_TREE];
    }
  });
  return Object.fromEntries(entries) as CodeFingerprint;
}

/** HEAD's abbreviated commit, or undefined outside a git checkout. */
export function headCommit(root: string): string | undefined {
  try {
    return git(root, ['rev-parse', '--short', 'HEAD']).trim();
  } catch {
    return undefined;
  }
}

/** The shipped directories whose trees differ. */
export function differingDirs(a: CodeFingerprint, b: CodeFingerprint): ShippedDir[] {
  return SHIPPED_DIRS.filter((dir) => a[dir] !== b[dir]);
}

/** `hooks 1a2b3c4 · schemas 5d6e7f8 · metacontroller 9a0b1c2`: short tree ids, for reports. */
export function fingerprintText(fingerprint: CodeFingerprint): string {
  return SHIPPED_DIRS.map((dir) => `${dir} ${fingerprint[dir].slice(0, 7)}`).join(' · ');
}
