// Filesystem locations of the harness's real components. Everything is resolved from this file's
// own location, never from process.cwd(), so that tests, benchmarks and `npm run local-up`
// behave the same whether they are run from the repository root, from an editor, or by mocha.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** harness/cluster/ (this folder: the stand-in CRDs beside the code that installs them). */
export const harnessClusterDir = path.dirname(fileURLToPath(import.meta.url));

/** The repository root (two levels above harness/cluster/). */
export const repoRoot = path.resolve(harnessClusterDir, '..', '..');

/**
 * test/cluster/: the pins of the upstream components (versions.json, upstream-inputs.json), the
 * Go wrapper modules (go/) and the commands that check and build them (upstream-inputs.ts,
 * build-binaries.ts). They stay where README.md and the build cache name them; the harness reads
 * them from there.
 */
export const pinsDir = path.join(repoRoot, 'test', 'cluster');

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
export const upstreamInputsFile = path.join(pinsDir, 'upstream-inputs.json');

/** Source archives of upstream components built for the tests (Metacontroller). */
export const upstreamSrcDir = path.join(sharedDir, 'upstream-src');

/** Unmodified upstream CRDs that the tests install into the local control plane. */
export const upstreamCrdsDir = path.join(sharedDir, 'upstream-crds');

/** Metacontroller's own CRDs; they must exist before Metacontroller starts. */
export const metacontrollerCrdsFile = path.join(upstreamCrdsDir, 'metacontroller.k8s.io_crds.yaml');

/** The pinned component versions. */
export const versionsFile = path.join(pinsDir, 'versions.json');

/** Go wrapper modules, one directory per upstream project. */
export const goModulesDir = path.join(pinsDir, 'go');

/** Git-ignored cache for built binaries: .cache/kube/<versions key>/ */
export const binaryCacheRoot = path.join(repoRoot, '.cache', 'kube');
