// Reads and validates test/cluster/versions.json, the only place where the versions of the
// real components (Kubernetes, etcd, Metacontroller) are written down.
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
  metacontroller: {
    /** Release the commit belongs to, used for the version stamp and the cache key. */
    version: string;
    /** Commit of github.com/metacontroller/metacontroller that is built (40 hex digits). */
    commit: string;
    /** File name of the source archive in the upstream-src directory. */
    archive: string;
    /** sha256 of that archive; the build refuses any other bytes. */
    sha256: string;
    /** Upstream repository, for the message that says how to get the archive. */
    repository: string;
  };
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

export function readPinnedVersions(): PinnedVersions {
  const document = JSON.parse(readFileSync(versionsFile, 'utf8')) as Record<string, unknown>;
  const kubernetes = section(document, 'kubernetes');
  const etcd = section(document, 'etcd');
  const metacontroller = section(document, 'metacontroller');
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
    metacontroller: {
      version: requireString(metacontroller.version, 'metacontroller.version', semverTag),
      commit: requireString(metacontroller.commit, 'metacontroller.commit', /^[0-9a-f]{40}$/),
      archive: requireString(
        metacontroller.archive,
        'metacontroller.archive',
        /^[\w.-]+\.tar\.gz$/,
      ),
      sha256: requireString(metacontroller.sha256, 'metacontroller.sha256', /^[0-9a-f]{64}$/),
      repository: requireString(
        metacontroller.repository,
        'metacontroller.repository',
        /^https:\/\/github\.com\/[\w.-]+\/[\w.-]+$/,
      ),
    },
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

/** Directory name under .cache/kube/ that identifies one set of versions. */
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
