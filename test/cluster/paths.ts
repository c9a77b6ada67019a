// Filesystem locations shared by the cluster-test tooling. Everything is resolved from this
// file's own location, never from process.cwd(), so that the scripts behave the same whether
// they are run from the repository root, from an editor, or by mocha.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** test/cluster/ */
export const clusterTestDir = path.dirname(fileURLToPath(import.meta.url));

/** The repository root (two levels above test/cluster/). */
export const repoRoot = path.resolve(clusterTestDir, '..', '..');

/**
 * The upstream inputs the tests need but no package registry serves (upstream CRDs, source
 * archives): `$KUBECELL_UPSTREAM_DIR`, by default the read-only `../shared` beside the
 * repository. CI clones the repository with shared/ next to it, so the default is relative.
 */
export const sharedDir = path.resolve(
  process.env.KUBECELL_UPSTREAM_DIR ?? path.join(repoRoot, '..', 'shared'),
);

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
