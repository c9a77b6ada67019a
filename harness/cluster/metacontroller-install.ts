// Metacontroller as manifests/metacontroller-install/ installs it: the container of its
// rendered StatefulSet (image and args), for the stack that runs the binary built from the same
// release instead of the image. Deriving the process's flags from the rendered overlay, rather
// than from a list of its own, is what keeps the overlay tested: a flag it drops or misspells
// changes (or stops) the Metacontroller every end-to-end test runs.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from './paths.js';

type Json = Record<string, unknown>;

/** The overlay users apply: Metacontroller v4.17.2's manifests with the recommended flags. */
export const METACONTROLLER_INSTALL_DIR = path.join(
  repoRoot,
  'manifests',
  'metacontroller-install',
);

/**
 * Flags the stack sets itself, for a process on loopback rather than a Pod: where it listens
 * and which kubeconfig it uses (a Pod gets its ServiceAccount's), how often it re-reads API
 * discovery (2 s: the tests install CRDs after it starts and must not wait the overlay's 20 s),
 * and its log level (the tests' own, `info` unless a test asks for more).
 */
export const STACK_OWN_FLAGS = [
  'kubeconfig',
  'health-probe-bind-address',
  'metrics-address',
  'discovery-interval',
  'zap-log-level',
] as const;

/** `kubectl kustomize <dir>`, as documents. */
export function kustomizeBuild(kubectl: string, dir: string): Json[] {
  const text = execFileSync(kubectl, ['kustomize', dir], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return parseAllDocuments(text)
    .map((document) => document.toJSON() as unknown)
    .filter((object): object is Json => typeof object === 'object' && object !== null);
}

export interface MetacontrollerContainer {
  namespace: string;
  serviceAccountName: string;
  image: string;
  args: string[];
}

/** The one container of the rendered StatefulSet metacontroller. */
export function metacontrollerContainer(objects: readonly Json[]): MetacontrollerContainer {
  const statefulSet = objects.find(
    (object) =>
      object.kind === 'StatefulSet' &&
      (object.metadata as Json | undefined)?.name === 'metacontroller',
  );
  if (statefulSet === undefined) throw new Error('no StatefulSet metacontroller rendered');
  const podSpec = (((statefulSet.spec as Json).template as Json).spec ?? {}) as Json;
  const containers = (podSpec.containers ?? []) as Json[];
  const container = containers.find((entry) => entry.name === 'metacontroller');
  if (container === undefined)
    throw new Error('StatefulSet metacontroller: no container metacontroller');
  return {
    namespace: String((statefulSet.metadata as Json).namespace),
    serviceAccountName: String(podSpec.serviceAccountName),
    image: String(container.image),
    args: ((container.args ?? []) as unknown[]).map(String),
  };
}

/** `--name=value` or `--name` → `name`. */
export function flagName(arg: string): string {
  return arg.replace(/^--?/, '').split('=')[0] as string;
}

/** The overlay's args the stack passes on: all but the flags it sets itself. */
export function overlayProcessArgs(args: readonly string[]): string[] {
  const own = new Set<string>(STACK_OWN_FLAGS);
  return args.filter((arg) => !own.has(flagName(arg)));
}

/**
 * The Metacontroller of the overlay, for the stack: its args without the stack's own flags,
 * after checking that the image is the release the stack built (`version`, e.g. v4.17.2), so
 * that the binary does stand in for it.
 */
export function metacontrollerInstallArgs(kubectl: string, version: string): string[] {
  const container = metacontrollerContainer(kustomizeBuild(kubectl, METACONTROLLER_INSTALL_DIR));
  const tag = container.image.split(':').at(-1);
  if (tag !== version) {
    throw new Error(
      `manifests/metacontroller-install runs ${container.image}, the tests build ${version}`,
    );
  }
  return overlayProcessArgs(container.args);
}
