// The Metacontroller objects of metacontroller/ for the local instance: their hooks point at the
// in-cluster Service (http://kubecell-hooks.kubecell-system/...), which a control plane without
// kubelet, kube-proxy or DNS cannot reach, so they are rewritten to the local hook server.
//
// What a platform installs is the base (metacontroller/, no KubeVirt or Cluster API needed) plus
// the GPUCellPool component of each provisioner it runs (metacontroller/gpucellpool/kubevirt/,
// metacontroller/gpucellpool/cluster-api/: the controller and the role Metacontroller needs for
// it): `readMetacontrollerInstall(dir, ['kubevirt'])` reads the same objects, in that order.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { isJsonObject } from '../../hooks/json/json.js';

/** The in-cluster hook server's base URL, with or without the Service's domain and a port. */
export const IN_CLUSTER_HOOK_BASE =
  /^https?:\/\/kubecell-hooks\.kubecell-system(?:\.svc(?:\.cluster\.local)?)?(?::\d+)?(?=\/|$)/;

const HOOK_SERVICE = { name: 'kubecell-hooks', namespace: 'kubecell-system' };

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface RewrittenObjects {
  /** The objects with every KubeCell hook pointing at the local hook server. */
  objects: Json[];
  /** `<kind>/<name> <path>: <old> -> <new>` for every hook rewritten. */
  rewritten: string[];
  /** Hooks that point elsewhere and were left alone, as `<kind>/<name> <path>: <target>`. */
  foreign: string[];
}

/** The GPUCellPool components, by provisioner: their folders under metacontroller/. */
export const GPUCELLPOOL_COMPONENTS = {
  kubevirt: path.join('gpucellpool', 'kubevirt'),
  'cluster-api': path.join('gpucellpool', 'cluster-api'),
} as const;
export type GpuCellPoolComponent = keyof typeof GPUCELLPOOL_COMPONENTS;

/** The files `kubectl apply -k dir` builds from: its kustomization's `resources`, recursively. */
function kustomizationFiles(dir: string): string[] | undefined {
  const file = ['kustomization.yaml', 'kustomization.yml']
    .map((name) => path.join(dir, name))
    .find((candidate) => existsSync(candidate));
  if (file === undefined) return undefined;
  const [document] = parseAllDocuments(readFileSync(file, 'utf8'));
  const resources = (document?.toJS() as { resources?: unknown } | null)?.resources ?? [];
  if (!Array.isArray(resources)) throw new Error(`${file}: resources is not a list`);
  return resources.flatMap((entry: unknown) => {
    if (typeof entry !== 'string') throw new Error(`${file}: a resource is not a path`);
    const target = path.join(dir, entry);
    if (!existsSync(target)) throw new Error(`${file}: resource ${entry} does not exist`);
    if (!statSync(target).isDirectory()) return [target];
    const nested = kustomizationFiles(target);
    if (nested === undefined) throw new Error(`${target}: no kustomization.yaml`);
    return nested;
  });
}

/**
 * The objects `kubectl apply -k dir` applies, in order: the documents of the files its
 * kustomization lists (a folder without one: every `*.yaml`/`*.yml` in it, in file-name order).
 * For metacontroller/ that is the base only; a component folder gives its controller and role.
 */
export function readMetacontrollerObjects(dir: string): Json[] {
  const files =
    kustomizationFiles(dir) ??
    readdirSync(dir)
      .filter((file) => /\.ya?ml$/.test(file))
      .sort()
      .map((file) => path.join(dir, file));
  const objects: Json[] = [];
  for (const file of files) {
    for (const document of parseAllDocuments(readFileSync(file, 'utf8'))) {
      if (document.errors.length > 0) {
        throw new Error(`${file}: ${document.errors[0]?.message ?? 'invalid YAML'}`);
      }
      const object = document.toJS() as Json;
      if (object !== null) objects.push(object);
    }
  }
  return objects;
}

/**
 * The base of `metacontrollerDir` (the repository's metacontroller/) and the GPUCellPool
 * components of `components`, in that order: what `kubectl apply -k metacontroller/` and then
 * `kubectl apply -k metacontroller/gpucellpool/<component>/` apply. Apply a component only where
 * its CRDs are served (KubeVirt's virtualmachines, Cluster API's machines v1beta2): Metacontroller
 * does not start a controller whose child resource it cannot find.
 */
export function readMetacontrollerInstall(
  metacontrollerDir: string,
  components: readonly GpuCellPoolComponent[] = [],
): Json[] {
  const unknown = components.filter(
    (component) => !Object.hasOwn(GPUCELLPOOL_COMPONENTS, component),
  );
  if (unknown.length > 0) {
    throw new Error(
      `unknown GPUCellPool component ${unknown.join(', ')}; components are ${Object.keys(GPUCELLPOOL_COMPONENTS).join(', ')}`,
    );
  }
  return [
    ...readMetacontrollerObjects(metacontrollerDir),
    ...[...new Set(components)].flatMap((component) =>
      readMetacontrollerObjects(path.join(metacontrollerDir, GPUCELLPOOL_COMPONENTS[component])),
    ),
  ];
}

function describeObject(object: Json): string {
  if (!isJsonObject(object)) return '(not an object)';
  const metadata = object.metadata;
  const name = isJsonObject(metadata) && typeof metadata.name === 'string' ? metadata.name : '?';
  return `${typeof object.kind === 'string' ? object.kind : '?'}/${name}`;
}

/**
 * Points every webhook of KubeCell's hook server (by URL or by Service reference) at `baseUrl`,
 * e.g. `http://127.0.0.1:40123`, keeping the path. The input is not modified.
 */
export function rewriteHookUrls(objects: readonly unknown[], baseUrl: string): RewrittenObjects {
  const base = baseUrl.replace(/\/+$/, '');
  const rewritten: string[] = [];
  const foreign: string[] = [];
  const copies = structuredClone(objects) as Json[];
  for (const object of copies) {
    const owner = describeObject(object);
    const visit = (node: Json, at: string): void => {
      if (Array.isArray(node)) {
        node.forEach((item, index) => visit(item, `${at}[${index}]`));
        return;
      }
      if (!isJsonObject(node)) return;
      for (const [key, value] of Object.entries(node)) {
        const here = at === '' ? key : `${at}.${key}`;
        if (key === 'webhook' && isJsonObject(value)) {
          rewriteWebhook(value, here);
        } else {
          visit(value, here);
        }
      }
    };
    const rewriteWebhook = (webhook: { [key: string]: Json }, at: string): void => {
      if (typeof webhook.url === 'string') {
        if (IN_CLUSTER_HOOK_BASE.test(webhook.url)) {
          const target = webhook.url.replace(IN_CLUSTER_HOOK_BASE, base);
          rewritten.push(`${owner} ${at}: ${webhook.url} -> ${target}`);
          webhook.url = target;
        } else {
          foreign.push(`${owner} ${at}: ${webhook.url}`);
        }
        return;
      }
      const service = webhook.service;
      if (
        isJsonObject(service) &&
        service.name === HOOK_SERVICE.name &&
        (service.namespace === undefined || service.namespace === HOOK_SERVICE.namespace)
      ) {
        const hookPath = typeof webhook.path === 'string' ? webhook.path : '';
        const target = `${base}${hookPath.startsWith('/') || hookPath === '' ? '' : '/'}${hookPath}`;
        rewritten.push(`${owner} ${at}: service ${HOOK_SERVICE.name} ${hookPath} -> ${target}`);
        delete webhook.service;
        delete webhook.path;
        webhook.url = target;
        return;
      }
      foreign.push(`${owner} ${at}: ${JSON.stringify(webhook)}`);
    };
    visit(object, '');
  }
  return { objects: copies, rewritten, foreign };
}

/** A multi-document YAML stream, e.g. for `kubectl apply -f -`. */
export function toYamlStream(objects: readonly unknown[]): string {
  return objects.map((object) => stringify(object)).join('---\n');
}
