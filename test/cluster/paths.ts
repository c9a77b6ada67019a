// Filesystem locations shared by the cluster-test tooling. Everything is resolved from this
// file's own location, never from process.cwd(), so that the scripts behave the same whether
// they are run from the repository root, from an editor, or by mocha.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** test/cluster/ */
export const clusterTestDir = path.dirname(fileURLToPath(import.meta.url));

/** The repository root (two levels above test/cluster/). */
export const repoRoot = path.resolve(clusterTestDir, '..', '..');

/** Where the upstream inputs are when `KUBECELL_UPSTREAM_DIR` is not set. */
export const defaultUpstreamDir = path.join(repoRoot, '..', 'shared');

/**
 * The directory of the upstream inputs the tests need but no package registry serves (upstream
 * CRDs, source archives): `$KUBECELL_UPSTREAM_DIR` (an empty value counts as unset), by default
 * the read-only `../shared` beside the repository. CI clones the repository with shared/ next to
 * it, so the default is relative. Every file in it is pinned in upstream-inputs.json.
 */
export function resolveUpstreamDir(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.KUBECELL_UPSTREAM_DIR;
  return path.resolve(
    configured === undefined || configured === '' ? defaultUpstreamDir : configured,
  );
}

/** The upstream inputs directory of this process (see resolveUpstreamDir). */
export const sharedDir = resolveUpstreamDir();

/** The pins (path, sha256, upstream URL, commit, fetch command) of every upstream input. */
export const upstreamInputsFile = path.join(clusterTestDir, 'upstream-inputs.json');

/** Source archives of upstream components built for the tests (Metacontroller). */
export const upstreamSrcDir = path.join(sharedDir, 'upstream-src');

/** Unmodified upstream CRDs that the tests install into the local control plane. */
export const upstreamCrdsDir = path.join(sharedDir, 'upstream-crds');

/** Metacontroller's own CRDs; they must exist before Metacontroller starts. */
export const metacontrollerCrdsFile = path.join(upstreamCrdsDir, 'metacontroller.k8s.io_crds.yaml');

/** The pinned component versions. */
export const versionsFile = path.join(clusterTestDir, 'versions.json');

/** Go wrapper modules, one directory per upstream project. */
export const goModulesDir = path.join(clusterTestDir, 'go');

/** Git-ignored cache for built binaries: .cache/kube/<versions key>/ */
export const binaryCacheRoot = path.join(repoRoot, '.cache', 'kube');
