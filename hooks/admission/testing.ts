/** Helpers shared by the admission and CLI tests (not loaded in production). */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import {
  createInMemoryLookup,
  type ClusterLookup,
  type InMemoryCluster,
  type PlacementTargetSummary,
} from './lookup.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SAMPLES_DIR = join(REPO_ROOT, 'samples');

export type Json = Record<string, unknown>;

export interface Sample {
  file: string;
  object: Json;
}

/** Every document of every file in samples/. */
export function loadSamples(): Sample[] {
  return readdirSync(SAMPLES_DIR)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(SAMPLES_DIR, file), 'utf8')).map((doc) => ({
        file,
        object: doc.toJS() as Json,
      })),
    );
}

/** A deep copy of the first object of a sample file. */
export function sample(file: string): Json {
  const found = loadSamples().find((s) => s.file === file);
  if (!found) throw new Error(`no sample ${file}`);
  return structuredClone(found.object);
}

/** The Namespaces of samples/ (tenant-a, tenant-b: host namespaces) plus kubecell-system. */
export function sampleNamespaces(): Record<string, Record<string, string>> {
  const namespaces: Record<string, Record<string, string>> = { 'kubecell-system': {} };
  for (const { object } of loadSamples()) {
    if (object.kind !== 'Namespace') continue;
    const metadata = object.metadata as { name: string; labels?: Record<string, string> };
    namespaces[metadata.name] = { ...(metadata.labels ?? {}) };
  }
  return namespaces;
}

/**
 * The sample Namespaces get the label `kubernetes.io/metadata.name` the apiserver sets on every
 * Namespace, which the namespaceSelector of the sample Cell and class select on.
 */
function withNameLabel(
  namespaces: Record<string, Record<string, string>>,
): Record<string, Record<string, string>> {
  return Object.fromEntries(
    Object.entries(namespaces).map(([name, labels]) => [
      name,
      { 'kubernetes.io/metadata.name': name, ...labels },
    ]),
  );
}

/** The objects of a kind in samples/, as the webhook's lookups return them. */
function sampleObjects(kind: string): PlacementTargetSummary[] {
  return loadSamples()
    .filter(({ object }) => object.kind === kind)
    .map(({ object }) => object as unknown as PlacementTargetSummary);
}

/**
 * An in-memory lookup with the sample namespaces, Cells and classes, plus whatever `extra` adds
 * (its Cells and classes come first, so they win over a sample of the same name).
 */
export function fakeLookup(extra: InMemoryCluster = {}): ClusterLookup {
  return createInMemoryLookup({
    namespaces: withNameLabel({ ...sampleNamespaces(), ...(extra.namespaces ?? {}) }),
    virtualClusters: extra.virtualClusters ?? [],
    cells: [...(extra.cells ?? []), ...sampleObjects('Cell')],
    virtualNodeClasses: [...(extra.virtualNodeClasses ?? []), ...sampleObjects('VirtualNodeClass')],
  });
}

let reviewCounter = 0;

/** An `admission.k8s.io/v1` AdmissionReview as the apiserver sends it. */
export function admissionReview(
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT',
  object: Json | null,
  oldObject: Json | null = null,
): Json {
  const subject = (object ?? oldObject ?? {}) as { kind?: string; metadata?: Json };
  const metadata = subject.metadata ?? {};
  reviewCounter++;
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `0000-review-${reviewCounter}`,
      kind: { group: 'kubecell.io', version: 'v1alpha1', kind: subject.kind },
      resource: {
        group: 'kubecell.io',
        version: 'v1alpha1',
        resource: `${String(subject.kind).toLowerCase()}s`,
      },
      requestKind: { group: 'kubecell.io', version: 'v1alpha1', kind: subject.kind },
      name: metadata.name,
      ...(typeof metadata.namespace === 'string' ? { namespace: metadata.namespace } : {}),
      operation,
      userInfo: { username: 'kubernetes-admin', groups: ['system:masters'] },
      object,
      oldObject,
      dryRun: false,
      options: null,
    },
  };
}

export interface TestCertificate {
  dir: string;
  certFile: string;
  keyFile: string;
  /** PEM of the certificate, to trust it (it is self-signed). */
  cert: string;
}

/**
 * A self-signed ECDSA certificate for localhost and 127.0.0.1, made with the openssl CLI in
 * `dir` (a new temporary directory by default) as `<name>.crt` and `<name>.key`.
 */
export function selfSignedCertificate(
  commonName: string,
  dir = mkdtempSync(join(tmpdir(), 'kubecell-tls-')),
  name = 'tls',
): TestCertificate {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      `/CN=${commonName}`,
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'pipe' },
  );
  return { dir, certFile, keyFile, cert: readFileSync(certFile, 'utf8') };
}
