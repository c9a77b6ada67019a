// Reads and validates test/cluster/versions.json, the only place where the versions of the
// real components (Kubernetes, etcd, Metacontroller, Open Cluster Management) are written down.
import { readFileSync } from 'node:fs';
import { versionsFile } from './paths.js';

export interface PinnedVersions {
  kubernetes: {
    /** Tag of k8s.io/kubernetes, e.g. v1.35.4. */
    version: string;
    /** Tag of the k8s.io/<staging module> releases cut from the same commit, e.g. v0.35.4. */
    stagingVersion: string;
  };
  etcd: {
    /** Tag of go.etcd.io/etcd/server/v3, e.g. v3.6.16. */
    version: string;
  };
  metacontroller: PinnedArchive;
  /** Open Cluster Management (registration and work: hub controllers and agents). */
  ocm: PinnedArchive;
}

/** A component built from a source archive (the Go module proxy does not serve it). */
export interface PinnedArchive {
  /** Release the commit belongs to, used for the version stamp (and Metacontroller's cache key). */
  version: string;
  /** Commit of the upstream repository that is built (40 hex digits). */
  commit: string;
  /** File name of the source archive in the upstream-src directory. */
  archive: string;
  /** sha256 of that archive; the build refuses any other bytes. */
  sha256: string;
  /** Upstream repository, for the message that says how to get the archive. */
  repository: string;
}

const semverTag = /^v\d+\.\d+\.\d+$/;

function requireString(value: unknown, where: string, pattern: RegExp): string {
  if (typeof value !== 'string' || !pattern.test(value)) {
    throw new Error(
      `${versionsFile}: ${where} must be a string matching ${pattern}, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function section(document: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = document[key];
  if (typeof value !== 'object' || value === null) {
    throw new Error(`${versionsFile}: missing object "${key}"`);
  }
  return value as Record<string, unknown>;
}

function pinnedArchive(document: Record<string, unknown>, key: string): PinnedArchive {
  const pin = section(document, key);
  return {
    version: requireString(pin.version, `${key}.version`, semverTag),
    commit: requireString(pin.commit, `${key}.commit`, /^[0-9a-f]{40}$/),
    archive: requireString(pin.archive, `${key}.archive`, /^[\w.-]+\.tar\.gz$/),
    sha256: requireString(pin.sha256, `${key}.sha256`, /^[0-9a-f]{64}$/),
    repository: requireString(
      pin.repository,
      `${key}.repository`,
      /^https:\/\/github\.com\/[\w.-]+\/[\w.-]+$/,
    ),
  };
}

export function readPinnedVersions(): PinnedVersions {
  const document = JSON.parse(readFileSync(versionsFile, 'utf8')) as Record<string, unknown>;
  const kubernetes = section(document, 'kubernetes');
  const etcd = section(document, 'etcd');
  const versions: PinnedVersions = {
    kubernetes: {
      version: requireString(kubernetes.version, 'kubernetes.version', semverTag),
      stagingVersion: requireString(
        kubernetes.stagingVersion,
        'kubernetes.stagingVersion',
        semverTag,
      ),
    },
    etcd: { version: requireString(etcd.version, 'etcd.version', semverTag) },
    metacontroller: pinnedArchive(document, 'metacontroller'),
    ocm: pinnedArchive(document, 'ocm'),
  };
  // The staging modules are tagged v0.<minor>.<patch> for Kubernetes v1.<minor>.<patch>; a
  // mismatch would silently build kube-apiserver against another release's libraries.
  const expectedStaging = versions.kubernetes.version.replace(/^v1\./, 'v0.');
  if (versions.kubernetes.stagingVersion !== expectedStaging) {
    throw new Error(
      `${versionsFile}: kubernetes.stagingVersion must be ${expectedStaging} for kubernetes ${versions.kubernetes.version}`,
    );
  }
  return versions;
}

/**
 * Directory name under .cache/kube/ that identifies one set of versions. OCM is left out on
 * purpose: it was added later, and naming it here would have moved every existing cache to a new
 * directory (a rebuild of Kubernetes). Its own stamp (binaries.ts: a hash of its archive's sha256,
 * the Go version and the build flags) decides whether it is built again.
 */
export function versionsCacheKey(versions: PinnedVersions): string {
  return [
    `kubernetes-${versions.kubernetes.version}`,
    `etcd-${versions.etcd.version}`,
    `metacontroller-${versions.metacontroller.version}-${versions.metacontroller.commit.slice(0, 12)}`,
  ].join('_');
}

/** `v1.35.4` → { major: '1', minor: '35' }, the form Kubernetes' version ldflags expect. */
export function kubernetesMajorMinor(version: string): { major: string; minor: string } {
  const match = /^v(\d+)\.(\d+)\./.exec(version);
  if (!match?.[1] || !match[2]) throw new Error(`not a Kubernetes version: ${version}`);
  return { major: match[1], minor: match[2] };
}
