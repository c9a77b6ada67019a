// Reading what a user installs: the kustomizations under manifests/ and metacontroller/ (the base
// and the GPUCellPool components), the Metacontroller objects, and the samples. Shared by the
// install tests; no cluster needed here.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { isJsonObject } from '../../hooks/json/json.js';

export type Json = Record<string, unknown>;

/** The repository root (two levels above test/install/). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Every non-empty YAML document of a file (path relative to the repository root). */
export function readYamlDocuments(file: string): Json[] {
  const text = readFileSync(path.join(repoRoot, file), 'utf8');
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]?.message}`);
      return doc.toJS() as unknown;
    })
    .filter(isJsonObject);
}

/** `*.yaml` files of a directory, repository-relative, sorted; `recursive` walks below it. */
export function yamlFiles(dir: string, recursive = false): string[] {
  const absolute = path.join(repoRoot, dir);
  return readdirSync(absolute, { recursive })
    .map(String)
    .filter((file) => /\.ya?ml$/.test(file) && statSync(path.join(absolute, file)).isFile())
    .sort()
    .map((file) => path.posix.join(dir, file.split(path.sep).join('/')));
}

function kustomizationFile(dir: string): string | undefined {
  return ['kustomization.yaml', 'kustomization.yml', 'Kustomization']
    .map((name) => path.posix.join(dir, name))
    .find((file) => existsSync(path.join(repoRoot, file)));
}

/**
 * The files a kustomization's `resources` reach, recursively through directories that hold a
 * kustomization of their own. Only `resources` are followed (the kustomizations in this
 * repository use nothing else to add objects); patches are not resources.
 */
export function kustomizationResources(dir: string): string[] {
  const file = kustomizationFile(dir);
  if (file === undefined) throw new Error(`${dir} has no kustomization.yaml`);
  const [kustomization] = readYamlDocuments(file);
  const resources = (kustomization?.resources ?? []) as unknown[];
  const files: string[] = [];
  for (const entry of resources) {
    if (typeof entry !== 'string') throw new Error(`${file}: a resource is not a path`);
    const target = path.posix.normalize(path.posix.join(dir, entry.replace(/\/$/, '')));
    const absolute = path.join(repoRoot, target);
    if (!existsSync(absolute)) throw new Error(`${file}: resource ${entry} does not exist`);
    if (statSync(absolute).isDirectory()) files.push(...kustomizationResources(target));
    else files.push(target);
  }
  return files;
}

/** The resources of one kustomization file entry, as written (not expanded). */
export function kustomizationEntries(dir: string): string[] {
  const file = kustomizationFile(dir);
  if (file === undefined) throw new Error(`${dir} has no kustomization.yaml`);
  const [kustomization] = readYamlDocuments(file);
  return ((kustomization?.resources ?? []) as string[]).map(String);
}

/** Every object the kustomization at `dir` builds from (its resources' documents). */
export function kustomizationObjects(dir: string): Json[] {
  return kustomizationResources(dir).flatMap((file) => readYamlDocuments(file));
}

export function findObject(objects: Json[], kind: string, name: string): Json {
  const found = objects.find(
    (object) => object.kind === kind && (object.metadata as Json | undefined)?.name === name,
  );
  if (found === undefined) throw new Error(`no ${kind} ${name}`);
  return found;
}

// --- Metacontroller objects ---------------------------------------------------------------------

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

export interface ResourceRule {
  apiVersion: string;
  resource: string;
  labelSelector?: LabelSelector;
}

export interface ControllerObject {
  /** metacontroller/<file>.yaml, or metacontroller/gpucellpool/<provisioner>/controller.yaml */
  file: string;
  kind: 'CompositeController' | 'DecoratorController';
  /** metadata.name, e.g. kubecell-cell */
  name: string;
  /** The hook server's name for it, from its hook URLs: /hooks/<hookName>/<hook> */
  hookName: string;
  /** Composite: parentResource; decorator: resources. */
  parents: ResourceRule[];
  /** Composite: childResources; decorator: attachments. */
  children: ResourceRule[];
  /** customize, sync, finalize → webhook URL */
  hooks: Record<string, string>;
  object: Json;
}

/** `apiGroup` of an apiVersion: '' for the core group. */
export function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? (apiVersion.split('/')[0] as string) : '';
}

export const HOOK_URL = /^http:\/\/([^/]+)\/hooks\/([^/]+)\/(customize|sync|finalize)$/;

/** The Metacontroller objects a user installs without KubeVirt or Cluster API. */
export const METACONTROLLER_BASE = 'metacontroller';
/**
 * The GPUCellPool controllers, one kustomization per provisioner, installed after the base where
 * the provisioner's CRDs are served (metacontroller/kustomization.yaml).
 */
export const GPUCELLPOOL_COMPONENTS = [
  'metacontroller/gpucellpool/kubevirt',
  'metacontroller/gpucellpool/cluster-api',
] as const;
/** Every `kubectl apply -k` of Metacontroller objects: the base, then each component. */
export const METACONTROLLER_INSTALLS: readonly string[] = [
  METACONTROLLER_BASE,
  ...GPUCELLPOOL_COMPONENTS,
];

/**
 * Every CompositeController and DecoratorController the kustomizations at `dirs` build (by
 * default the base and every component).
 */
export function readControllers(
  dirs: string | readonly string[] = METACONTROLLER_INSTALLS,
): ControllerObject[] {
  const controllers: ControllerObject[] = [];
  const files = (typeof dirs === 'string' ? [dirs] : dirs).flatMap((dir) =>
    kustomizationResources(dir),
  );
  for (const file of files) {
    for (const object of readYamlDocuments(file)) {
      const kind = object.kind;
      if (kind !== 'CompositeController' && kind !== 'DecoratorController') continue;
      const spec = (object.spec ?? {}) as Json;
      const hooks: Record<string, string> = {};
      for (const [hook, value] of Object.entries((spec.hooks ?? {}) as Json)) {
        const url = ((value as Json).webhook as Json | undefined)?.url;
        if (typeof url === 'string') hooks[hook] = url;
      }
      const hookNames = new Set(
        Object.values(hooks).map((url) => HOOK_URL.exec(url)?.[2] ?? `<unparsed ${url}>`),
      );
      if (hookNames.size !== 1) {
        throw new Error(`${file}: hook URLs name ${[...hookNames].join(', ')}; expected one`);
      }
      controllers.push({
        file,
        kind,
        name: String((object.metadata as Json).name),
        hookName: [...hookNames][0] as string,
        parents:
          kind === 'CompositeController'
            ? [spec.parentResource as ResourceRule]
            : ((spec.resources ?? []) as ResourceRule[]),
        children: (kind === 'CompositeController'
          ? (spec.childResources ?? [])
          : (spec.attachments ?? [])) as ResourceRule[],
        hooks,
        object,
      });
    }
  }
  return controllers;
}

/** Whether an object's labels satisfy a label selector (matchLabels and matchExpressions). */
export function selectorMatches(selector: LabelSelector | undefined, object: Json): boolean {
  if (selector === undefined) return true;
  const labels = ((object.metadata as Json | undefined)?.labels ?? {}) as Record<string, string>;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, key);
    const ok =
      operator === 'Exists'
        ? has
        : operator === 'DoesNotExist'
          ? !has
          : operator === 'In'
            ? has && values.includes(labels[key] as string)
            : operator === 'NotIn'
              ? !has || !values.includes(labels[key] as string)
              : false;
    if (!ok) return false;
  }
  return true;
}

/** Every object of every file under samples/, with its file. */
export function readSamples(): Array<{ file: string; object: Json }> {
  return yamlFiles('samples', true).flatMap((file) =>
    readYamlDocuments(file).map((object) => ({ file, object })),
  );
}

/** TypeScript and JavaScript files under `dir`, tests excluded, repository-relative, sorted. */
export function runtimeSources(dir: string): string[] {
  return readdirSync(path.join(repoRoot, dir), { recursive: true })
    .map((file) => path.posix.join(dir, String(file).split(path.sep).join('/')))
    .filter((file) => /\.(ts|js)$/.test(file) && !/\.test\.ts$/.test(file))
    .sort();
}
